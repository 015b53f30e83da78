// The import rules of the project (docs/architecture.md): `npm run lint` fails on a break.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle makes load order matter and hides which module owns a concept: move the shared piece down a room.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domains-not-process',
      severity: 'error',
      comment:
        'Domain code (and the app that composes it) runs in any host: tests, the CLI, the worker. It never imports the process shell.',
      from: { path: '^(src|rest-compat)/', pathNot: '^src/process/' },
      to: { path: '^src/process/' },
    },
    {
      name: 'foundations-stay-down',
      severity: 'error',
      comment: 'The foundations (configuration, logging, clock, the error vocabulary) import nothing of the service above them.',
      from: { path: '^src/core/' },
      to: { path: '^(src|rest-compat)/', pathNot: ['^src/core/', '^src/generated/'] },
    },
    {
      name: 'src-not-tests',
      severity: 'error',
      comment: 'Production code never imports tests, benchmarks or scripts.',
      from: { path: '^(src|rest-compat)/' },
      to: { path: '^(test|bench|scripts)/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment:
        'The one exception: the generated declarations of the schema, imported for their types only (src/graphql/typed-documents.ts).',
      from: {},
      to: { couldNotResolve: true, pathNot: '^\\./schema-introspection\\.js$' },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules', 'src/generated'] },
    // bench/peers/postgraphile5-server.mjs requires PostGraphile 5 from its own install
    // (bench/peers/postgraphile5.ts), which the service's node_modules does not hold.
    exclude: { path: ['^src/generated/', '^dist/', '^bench/peers/postgraphile5-server\\.mjs$'] },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js', '.mjs', '.json'],
    },
  },
}
