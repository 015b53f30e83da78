// npm run bench -- now-playing-instructions
// Now playing counted in instructions instead of seconds, so that a change of a few per cent shows
// on a noisy machine: each server runs under `valgrind --tool=callgrind` (counting switched off
// until the servers are warm), answers NP_WARM requests (default 40,000; autocannon, 10
// connections), then NP_COUNT (5,000) with counting on; the main thread's instructions divided by
// NP_COUNT are its figure. The same count repeats within about 2%, whatever the load.
// NP_CONNECTIONS=1: one connection, so one request an event-loop turn (under valgrind ten
// connections bring ten requests a turn, which share its fixed costs); NP_LOG_LEVEL=warn: the
// service without its access lines.
//
// Four processes: the built service as `npm start` runs it (SQLite, the sample channel,
// LOG_LEVEL=info, its stdout discarded), the same after three and more full collections at a quiet
// moment (as V8's memory reducer runs them once the process goes quiet after a burst of
// allocation; six gc() calls from a SIGUSR2 handler halfway through the warm-up; see
// docs/performance.md, "nextTick's hidden classes, kept"), the same after the work the shared
// harness's service does before now playing (an add-contacts, then REST and GraphQL contact pages:
// node's own code then sees other shapes of requests and responses), and a node:http server
// answering a fixed body of the same size. The service runs from a scratch copy of dist/ in which
// a microcache entry never expires: otherwise the once-a-second recomputation, shared by however
// many requests valgrind's speed lets through that second, would be counted. Needs valgrind
// (Debian: valgrind).
import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { applyMigrations } from '../src/db/migrate.js'
import { openDatabase } from '../src/db/client.js'
import { parseEnv } from '../src/core/env.js'
import { createDeps } from '../src/deps.js'
import { importChannel } from '../src/channel/import-channel.js'
import { serviceCommand, startChild } from './peers/processes.js'
import { createAccount } from '../src/accounts/create-account.js'
import { postApi } from './harness.js'

try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' })
} catch {
  console.log('skipped: needs valgrind on the PATH (Debian: apt-get install valgrind)')
  process.exit(0)
}

const root = fileURLToPath(new URL('..', import.meta.url))
const warm = Number(process.env.NP_WARM ?? 40_000)
const count = Number(process.env.NP_COUNT ?? 5_000)
const connections = Number(process.env.NP_CONNECTIONS ?? 10)
const logLevel = process.env.NP_LOG_LEVEL ?? 'info'
const dir = mkdtempSync(join(tmpdir(), 'gateway-instructions-'))
const url = `file:${join(dir, 'bench.db')}`
await applyMigrations(url)
const database = await openDatabase(url)
const { apiKey } = await createAccount({ db: database.prisma }, { name: 'Instructions bench' })
const channel = await importChannel(createDeps(database, parseEnv({ DATABASE_URL: url })), readFileSync('docs/channel-sample.json', 'utf8'))
await database.close()

// The service's command line, built as npm start builds it, then run from a copy whose microcache
// keeps its entries. The two expiry tests are replaced by name: if they change, this stops here.
const start = serviceCommand(root)
const copy = join(dir, 'service')
cpSync(join(root, 'dist'), join(copy, 'dist'), { recursive: true })
cpSync(join(root, 'package.json'), join(copy, 'package.json'))
symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'))
const expiries = [
  'if (!hit || second < hit.second || second >= hit.second + hit.span) return void 0;',
  'if (Date.now() - hit.at >= this.ttlMs * hit.span) {',
]
// dist/ is a bundle (docs/operations.md, "Start-up"): the microcache is in whichever of its files
// holds the expiry tests.
const bundled = readdirSync(join(copy, 'dist'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'))
const cacheFile = bundled.map((f) => join(copy, 'dist', f)).find((f) => readFileSync(f, 'utf8').includes(expiries[0]!))
if (!cacheFile) throw new Error(`no file of dist/ has "${expiries[0]}": update this benchmark`)
let cache = readFileSync(cacheFile, 'utf8')
for (const [i, test] of expiries.entries()) {
  if (!cache.includes(test)) throw new Error(`${cacheFile} no longer has "${test}": update this benchmark`)
  cache = cache.replace(test, i === 0 ? 'if (!hit) return void 0;' : 'if (false) {')
}
writeFileSync(cacheFile, cache)
const collect = join(dir, 'collect.mjs')
writeFileSync(collect, "process.on('SIGUSR2', () => { for (let i = 0; i < 6; i++) globalThis.gc() })\n")

// Under valgrind one thread runs at a time, so V8's compiler threads finish their work only in
// pauses like this one.
const pause = () => new Promise((r) => setTimeout(r, 3000))

async function requests(target: string, amount: number, options: Partial<autocannon.Options> = {}) {
  const result = await autocannon({ url: target, connections, amount, ...options })
  if (result.non2xx || result.errors) throw new Error(`${target}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
}

/** What the shared harness's service serves before now playing: 2,000 contacts added, then 6,000 REST and 6,000 GraphQL pages. */
async function contactWork(base: string) {
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }
  const { reference } = await postApi(base, apiKey, 'contact/group/create', { name: 'Everyone' })
  const contacts = Array.from({ length: 2000 }, (_, n) => ({
    mobile: `+2547${String(10_000_000 + n)}`,
    first_name: `First${n % 17}`,
    family_name: `Family${n % 13}`,
  }))
  await postApi(base, apiKey, `contact/group/${reference}/add-contacts`, { contacts })
  const query = `{ contacts(page: 7, perPage: 25) { nodes { id uuid firstName familyName mobile } pageInfo { total page pageCount } } }`
  for (let round = 0; round < 2; round++) {
    await requests(`${base}/api/contacts?page=7&perPage=25`, 3000, { headers })
    await requests(`${base}/graphql`, 3000, { method: 'POST', headers, body: JSON.stringify({ query }) })
  }
}

/** Instructions per request of the main thread of `node <args>` (under callgrind) serving `path`. */
async function counted(
  name: string,
  command: (port: number) => { args: string[]; env?: Record<string, string> },
  cwd: string,
  path: string,
  { quiet = false, before }: { quiet?: boolean; before?: (base: string) => Promise<void> } = {},
) {
  const out = join(dir, `${name}.callgrind`)
  const callgrind = [
    '--tool=callgrind',
    '--smc-check=all-non-file',
    '--instr-atstart=no',
    '--separate-threads=yes',
    `--callgrind-out-file=${out}`,
  ]
  const child = await startChild(
    name,
    (port) => {
      const { args, env } = command(port)
      return { node: 'valgrind', args: [...callgrind, process.execPath, ...args], env }
    },
    cwd,
    { startTimeoutMs: 300_000 },
  )
  const target = `${child.baseUrl}${path}`
  const body = await (await fetch(target)).text()
  if (before) {
    await before(child.baseUrl)
    await pause()
  }
  // Two halves of the warm-up, each followed by a pause, make the count repeatable.
  await requests(target, warm / 2)
  await pause()
  if (quiet) {
    process.kill(child.pid, 'SIGUSR2')
    await pause()
  }
  await requests(target, warm / 2)
  await pause()
  execFileSync('callgrind_control', ['-i', 'on', String(child.pid)], { stdio: 'ignore' })
  await requests(target, count)
  execFileSync('callgrind_control', ['-d', String(child.pid)], { stdio: 'ignore' })
  await child.stop()
  // The dump's file for thread 1 (the main thread): <out>.1-01.
  const summary = /^summary: (\d+)$/m.exec(readFileSync(`${out}.1-01`, 'utf8'))
  if (!summary) throw new Error(`${name}: no summary line in ${out}.1-01`)
  return { perRequest: Number(summary[1]) / count, body }
}

const service = { ...start.env, DATABASE_URL: url, LOG_LEVEL: logLevel, WORKER_ENABLED: 'false', RATE_LIMIT_PER_SECOND: '0' }
const statusPath = `/api/channels/${channel.id}/status`
const load0 = loadavg()[0]!
console.log(
  `service as npm start runs it: node ${start.args.join(' ')}, LOG_LEVEL=${logLevel}; ${warm} requests before counting, ${count} counted, ${connections} connections`,
)
const serve = (flags: string[]) => (port: number) => ({ args: [...flags, ...start.args], env: { ...service, PORT: String(port) } })
const fresh = await counted('service', serve([]), copy, statusPath)
const quiet = await counted('service-quiet', serve(['--expose-gc', '--import', collect]), copy, statusPath, { quiet: true })
const worked = await counted('service-worked', serve([]), copy, statusPath, { before: contactWork })
// The project's fixed-body server (bench/peers/fixed-body.ts), as large as the service's first
// answer (the copy keeps it for good), with the service's young-generation flags.
const bytes = String(Buffer.byteLength(fresh.body))
const youngGeneration = start.args.filter((arg) => arg.includes('semi-space'))
const { perRequest: fixed } = await counted(
  'fixed-body',
  (port) => ({ args: [...youngGeneration, '--import', 'tsx', 'bench/peers/fixed-body.ts', String(port), bytes] }),
  root,
  '/',
)

const row = (name: string, n: number) => `| ${name} | ${Math.round(n).toLocaleString('en')} | ${(fixed / n).toFixed(2)} |`
console.log(`\nnow playing (${bytes}-byte body), main-thread instructions per request:\n`)
console.log('| server | instructions / request | fixed-body / it |\n|---|---:|---:|')
console.log(row('node:http fixed body', fixed))
console.log(row('service, fresh', fresh.perRequest))
console.log(row('service, after collections at a quiet moment', quiet.perRequest))
console.log(row('service, after an add-contacts and REST and GraphQL pages', worked.perRequest))
console.log(
  `\nload average at the start ${load0.toFixed(2)}, at the end ${loadavg()[0]!.toFixed(2)} (instruction counts do not depend on it)`,
)
rmSync(dir, { recursive: true, force: true })
