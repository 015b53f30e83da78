// `npm run build`: type-checks the service (tsc, tsconfig.build.json) and compiles it to dist/,
// with what `node dist/server.js` needs besides the compiled code. `npm start` runs
// `node scripts/build.mjs --quick` first: no type check, no clean, and only the files whose
// JavaScript changed are written, so a start takes well under a second more and an instance
// already running from dist/ never sees a file half written.
//
// The JavaScript comes from esbuild, the transform tsx applies in memory during development,
// bundled: the server and the CLI are one module each with the chunks they share (below). The
// chunks sit two directories below dist/ (dist/src/bundle), so paths resolved relative to a module
// (the migrations, package.json, the console's sources) are found as they are under tsx.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { distInputs } from './dist-inputs.mjs'

const quick = process.argv.includes('--quick')
const root = fileURLToPath(new URL('..', import.meta.url))
const dist = join(root, 'dist')
const require = createRequire(import.meta.url)
const started = performance.now()

// Nothing to do when dist/ was built from these very inputs (scripts/dist-inputs.mjs).
const { count, hash: inputsHash, upToDate } = distInputs(root)
const stamp = join(dist, '.inputs')
if (quick && upToDate) {
  const ms = Math.round(performance.now() - started)
  console.log(JSON.stringify({ level: 30, time: Date.now(), msg: 'dist/ up to date', inputs: count, written: 0, ms }))
  process.exit(0)
}
const esbuild = require('esbuild')

if (!quick) {
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--noEmit'], {
    cwd: root,
    stdio: 'inherit',
  })
  rmSync(dist, { recursive: true, force: true })
}

// The server and the CLI, each bundled with the packages they import into one module and the
// chunks they share, where dist/ used to hold one file per module: a start spent more than half of
// its CPU in Node's module loader, finding, reading and linking about 900 files (docs/operations.md,
// "Start-up"). What is imported lazily (pg, graphql-jit, GraphiQL's page, OpenTelemetry's SDK, the
// SMPP client) stays in chunks of its own, loaded on first use. Outside the bundle: packages with
// native code or files they find beside themselves (better-sqlite3, Prisma's runtime and its Wasm,
// esbuild), the one development tool the sources import (@gql.tada/internal, for scripts/print-schema.ts),
// and pg's optional native binding.
// The chunks live two directories below dist/ (dist/src/bundle), where the per-module files were:
// the modules that find a file relative to themselves (../../package.json, ../../prisma/,
// ../../console/) find it there.
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const { outputFiles, metafile } = await esbuild.build({
  entryPoints: { server: join(root, 'src', 'process', 'server.ts'), cli: join(root, 'src', 'cli', 'main.ts') },
  outdir: join(dist, 'src', 'bundle'),
  absWorkingDir: root,
  tsconfig: join(root, 'tsconfig.build.json'),
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['better-sqlite3', '@prisma/client/runtime/query_compiler_bg.*', 'esbuild', 'pg-native', '@gql.tada/internal'],
  // CommonJS packages in an ES module bundle call require() for Node's built-in modules.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  sourcemap: 'linked',
  sourcesContent: false,
  metafile: true,
  logLevel: 'warning',
  write: false,
})

let written = 0
/** Writes a file only when its content changed, through a rename so a reader sees the old or the new one. */
function put(file, content) {
  const bytes = typeof content === 'string' ? Buffer.from(content) : content
  try {
    if (readFileSync(file).equals(bytes)) return
  } catch {
    // not there yet
  }
  mkdirSync(dirname(file), { recursive: true })
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, bytes)
  renameSync(temporary, file)
  written++
}

for (const file of outputFiles) put(file.path, file.contents)
// The migration runner reads prisma/<target>/migrations relative to its own module
// (src/db/migrate.ts -> ../../prisma), which in dist/ is dist/prisma. A migration no longer in
// prisma/ leaves dist/ too: the runner would otherwise apply it.
const filesUnder = (dir) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath ?? entry.path, entry.name)))
for (const target of ['sqlite', 'postgresql']) {
  const from = join(root, 'prisma', target, 'migrations')
  const to = join(dist, 'prisma', target, 'migrations')
  const wanted = new Set(filesUnder(from))
  for (const file of wanted) put(join(to, file), readFileSync(join(from, file)))
  for (const file of filesUnder(to)) if (!wanted.has(file)) rmSync(join(to, file))
  for (const entry of readdirSync(to, { withFileTypes: true })) {
    if (entry.isDirectory() && readdirSync(join(to, entry.name)).length === 0) rmSync(join(to, entry.name), { recursive: true })
  }
}
// The account console's browser code is bundled by the service itself on first use
// (src/console/console-bundle.ts, ../../console/app.tsx from its module): dist/console/ holds its source.
{
  const from = join(root, 'console')
  const to = join(dist, 'console')
  const wanted = new Set(filesUnder(from))
  for (const file of wanted) put(join(to, file), readFileSync(join(from, file)))
  for (const file of existsSync(to) ? filesUnder(to) : []) if (!wanted.has(file)) rmSync(join(to, file))
}
// Stable entry points. Each first asks Node (22.1 and later; Node 20 has no such cache) to keep
// V8's compiled code of every module it loads, in NODE_COMPILE_CACHE or else the OS's temporary
// directory, and to read it back at the next start instead of compiling the same sources again
// (docs/operations.md, "Start-up"). A directory it cannot write costs nothing but the saving.
const entry = (path) => `import module from 'node:module'\nmodule.enableCompileCache?.()\nawait import('${path}')\n`
put(join(dist, 'server.js'), entry('./src/bundle/server.js'))
put(join(dist, 'cli.js'), entry('./src/bundle/cli.js'))
// The chunks' names carry a hash of their content, so a change writes new ones beside the old. The
// previous build's stay (dist/.outputs lists them): an instance still running from them may load
// one of its lazy chunks later. Anything older under dist/src and dist/rest-compat goes (from before
// the bundle: the per-module files).
{
  const outputs = join(dist, '.outputs')
  const current = outputFiles.map((file) => relative(dist, file.path)).sort()
  const previous = new Set(existsSync(outputs) ? readFileSync(outputs, 'utf8').split('\n') : [])
  const keep = new Set(current)
  for (const dir of ['src', 'rest-compat'].map((name) => join(dist, name)).filter((dir) => existsSync(dir)))
    for (const file of filesUnder(dir).map((file) => relative(dist, join(dir, file))))
      if (!keep.has(file) && !previous.has(file)) rmSync(join(dist, file))
  /** Removes the directories under `dir` that hold no file; true when `dir` itself is then empty. */
  const prune = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }))
      if (entry.isDirectory() && prune(join(dir, entry.name))) rmSync(join(dir, entry.name), { recursive: true })
    return readdirSync(dir).length === 0
  }
  for (const dir of ['src', 'rest-compat'].map((name) => join(dist, name)).filter((dir) => existsSync(dir)))
    if (prune(dir)) rmSync(dir, { recursive: true })
  put(outputs, current.join('\n'))
}
// The compiled modules read the package's version (the home page, the OpenAPI document) from
// ../../package.json, which in dist/ is dist/package.json; it also marks dist/ as ESM on its own.
put(join(dist, 'package.json'), JSON.stringify({ name: pkg.name, version: pkg.version, private: true, type: 'module' }, null, 2) + '\n')

// Last: a build stopped half-way leaves the old stamp (or none), so the next start builds again.
put(stamp, inputsHash)

const ms = Math.round(performance.now() - started)
// npm start's step: one line in the service's own log format (pino's, at info), so a log shipper
// that reads JSON lines from the service reads this one too.
if (quick)
  console.log(
    JSON.stringify({ level: 30, time: Date.now(), msg: 'dist/ up to date', modules: Object.keys(metafile.inputs).length, written, ms }),
  )
else console.log(`built dist/ in ${ms} ms (node dist/server.js, node dist/cli.js)`)
