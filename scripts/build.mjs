// `npm run build`: compiles the service to dist/ and adds what `node dist/server.js` needs besides
// the compiled code. The migration runner reads prisma/<target>/migrations relative to its own
// module (src/db/migrate.ts -> ../../prisma), which in dist/ is dist/prisma.
import { execFileSync } from 'node:child_process'
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const dist = fileURLToPath(new URL('../dist/', import.meta.url))
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')

rmSync(dist, { recursive: true, force: true })
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' })
for (const target of ['sqlite', 'postgresql']) {
  cpSync(`${root}prisma/${target}/migrations`, `${dist}prisma/${target}/migrations`, { recursive: true })
}
// Stable entry points: the compiled tree keeps the source layout (dist/src, dist/rest-compat).
writeFileSync(`${dist}server.js`, "import './src/server.js'\n")
writeFileSync(`${dist}cli.js`, "import './src/cli/main.js'\n")
// The compiled modules read the package's version (the home page, the OpenAPI document) from
// ../../package.json, which in dist/ is dist/package.json; it also marks dist/ as ESM on its own.
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8'))
writeFileSync(`${dist}package.json`, JSON.stringify({ name: pkg.name, version: pkg.version, private: true, type: 'module' }, null, 2) + '\n')
console.log('built dist/ (node dist/server.js, node dist/cli.js)')
