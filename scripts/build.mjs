// `npm run build`: type-checks the service (tsc, tsconfig.build.json) and compiles it to dist/,
// with what `node dist/server.js` needs besides the compiled code. `npm start` runs
// `node scripts/build.mjs --quick` first: no type check, no clean, and only the files whose
// JavaScript changed are written, so a start takes well under a second more and an instance
// already running from dist/ never sees a file half written.
//
// The JavaScript comes from esbuild, one file per module (no bundling), the transform tsx applies
// in memory during development: the compiled tree keeps the source layout (dist/src,
// dist/rest-compat), so paths resolved relative to a module (the migrations, package.json, the
// Swagger UI assets) are found as they are under tsx.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const quick = process.argv.includes('--quick')
const root = fileURLToPath(new URL('..', import.meta.url))
const dist = join(root, 'dist')
const require = createRequire(import.meta.url)
const started = performance.now()

// What dist/ is made from: every file's path, size and modification time, hashed. When it matches
// the one recorded by the last build, `--quick` stops here: starting esbuild to learn that nothing
// changed cost about 2 s of the start-up (docs/operations.md, "Start-up").
const inputs = ['src', 'rest-compat', 'console', join('prisma', 'sqlite', 'migrations'), join('prisma', 'postgresql', 'migrations')]
  .flatMap((dir) =>
    readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath ?? entry.path, entry.name)),
  )
  .concat(['package.json', 'tsconfig.json', 'tsconfig.build.json', join('scripts', 'build.mjs')].map((file) => join(root, file)))
  .sort()
const fingerprint = createHash('sha256')
for (const file of inputs) {
  const { size, mtimeMs } = statSync(file)
  fingerprint.update(`${relative(root, file)}\0${size}\0${mtimeMs}\n`)
}
const inputsHash = fingerprint.digest('hex')
const stamp = join(dist, '.inputs')
if (quick && existsSync(join(dist, 'server.js')) && existsSync(stamp) && readFileSync(stamp, 'utf8') === inputsHash) {
  const ms = Math.round(performance.now() - started)
  console.log(JSON.stringify({ level: 30, time: Date.now(), msg: 'dist/ up to date', inputs: inputs.length, written: 0, ms }))
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

const sources = ['src', 'rest-compat'].flatMap((dir) =>
  readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name)),
)
const { outputFiles } = await esbuild.build({
  entryPoints: sources,
  outdir: dist,
  outbase: root,
  absWorkingDir: root,
  tsconfig: join(root, 'tsconfig.build.json'),
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  sourcesContent: false,
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
// Stable entry points.
put(join(dist, 'server.js'), "import './src/process/server.js'\n")
put(join(dist, 'cli.js'), "import './src/cli/main.js'\n")
// The compiled modules read the package's version (the home page, the OpenAPI document) from
// ../../package.json, which in dist/ is dist/package.json; it also marks dist/ as ESM on its own.
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
put(join(dist, 'package.json'), JSON.stringify({ name: pkg.name, version: pkg.version, private: true, type: 'module' }, null, 2) + '\n')

// Last: a build stopped half-way leaves the old stamp (or none), so the next start builds again.
put(stamp, inputsHash)

const ms = Math.round(performance.now() - started)
// npm start's step: one line in the service's own log format (pino's, at info), so a log shipper
// that reads JSON lines from the service reads this one too.
if (quick) console.log(JSON.stringify({ level: 30, time: Date.now(), msg: 'dist/ up to date', modules: sources.length, written, ms }))
else console.log(`built dist/ in ${ms} ms (node dist/server.js, node dist/cli.js)`)
