// npm run bench -- now-playing
// GET /api/channels/{uuid}/status on the real server (SQLite, the sample channel), started as `npm
// start` starts it (built, with its node flags and environment, as the external side-by-side harness starts it;
// NOW_PLAYING_START=tsx: `node --import tsx src/process/server.ts` instead, to compare), against a
// plain node:http server answering a fixed JSON body of the same size, side by side.
// Each server runs in its own process; autocannon runs in this one. Prints the load average and
// the service's peak RSS (VmHWM, Linux) under this load.
// WEB_CONCURRENCY=N (in the environment) runs the service with N HTTP workers.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { applyMigrations } from '../src/db/migrate.js'
import { openDatabase } from '../src/db/client.js'
import { parseEnv } from '../src/core/env.js'
import { createDeps } from '../src/deps.js'
import { importChannel } from '../src/channel/import-channel.js'
import { createAccount } from '../src/accounts/create-account.js'
import { load, postApi, printTable } from './harness.js'
import { serviceCommand } from './peers/processes.js'

const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-'))
const url = `file:${join(dir, 'bench.db')}`
await applyMigrations(url)
const database = await openDatabase(url)
const channel = await importChannel(createDeps(database, parseEnv({ DATABASE_URL: url })), readFileSync('docs/channel-sample.json', 'utf8'))
// For the second part: an account that add-contacts fills, as the external side-by-side harness's does before now playing.
const { apiKey } = await createAccount({ db: database.prisma }, { name: 'Now playing bench' })
await database.close()

const children: ChildProcess[] = []
async function serve(args: string[], env: Record<string, string>, port: number) {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: 'ignore' })
  children.push(child)
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`http://127.0.0.1:${port}/healthz`)
      return
    } catch {
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  throw new Error(`server on ${port} did not start`)
}

const APP_PORT = 4701
const PLAIN_PORT = 4702
// The default log level writes one JSON line per request; BENCH_LOG_LEVEL=warn measures without it.
const logLevel = process.env.BENCH_LOG_LEVEL ?? 'info'
const tsx = process.env.NOW_PLAYING_START === 'tsx'
const start = tsx
  ? { args: ['--import', 'tsx', 'src/process/server.ts'], env: {} }
  : serviceCommand(fileURLToPath(new URL('..', import.meta.url)))
console.log(
  `service LOG_LEVEL=${logLevel} (its stdout is discarded), ${tsx ? 'under tsx' : `as npm start runs it: node ${start.args.join(' ')}`}`,
)
const startService = () =>
  serve(
    start.args,
    {
      ...start.env,
      DATABASE_URL: url,
      PORT: String(APP_PORT),
      LOG_LEVEL: logLevel,
      WORKER_ENABLED: 'false',
      WEB_CONCURRENCY: process.env.WEB_CONCURRENCY ?? '1',
    },
    APP_PORT,
  )
await startService()
const path = `/api/channels/${channel.id}/status`
const sample = await (await fetch(`http://127.0.0.1:${APP_PORT}${path}`)).text()
console.log(`now-playing body: ${sample.length} bytes: ${sample.slice(0, 120)}…`)

const plain = `
  const body = JSON.stringify({ padding: 'x'.repeat(${Math.max(0, sample.length - 15)}) })
  require('node:http').createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) })
    res.end(body)
  }).listen(${PLAIN_PORT}, '127.0.0.1')`
await serve(['-e', plain], {}, PLAIN_PORT)

/** Live processes: the pid and, for a cluster's primary, its workers (Linux /proc). */
function processTree(pid: number): number[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  return [pid, ...children.flatMap(processTree)]
}

/**
 * CPU seconds a child and its workers have used so far, user + system and system alone, from /proc
 * (Linux). The system part is mostly the loopback's: a write that wakes a sleeping client is charged
 * to the writer.
 */
function cpuSeconds(child: ChildProcess): { all: number; system: number } {
  let user = 0
  let system = 0
  for (const pid of processTree(child.pid!)) {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    user += Number(fields[11]) // utime and stime, in clock ticks (USER_HZ = 100)
    system += Number(fields[12])
  }
  return { all: (user + system) / 100, system: system / 100 }
}

// On a shared machine req/s depends on what else runs; CPU per request of each server does not.
const rows: (Awaited<ReturnType<typeof load>> & { cpuUs: number; systemUs: number })[] = []
async function measure(name: string, child: ChildProcess, target: string) {
  const cpu = cpuSeconds(child)
  const result = await load(name, { url: target })
  const requests = result.requestsPerSecond * 10
  const after = cpuSeconds(child)
  const perRequest = (seconds: number) => Math.round((seconds / requests) * 1e7) / 10
  rows.push({ ...result, cpuUs: perRequest(after.all - cpu.all), systemUs: perRequest(after.system - cpu.system) })
}
await load('warm-up', { url: `http://127.0.0.1:${APP_PORT}${path}`, duration: 3 })
await load('warm-up', { url: `http://127.0.0.1:${PLAIN_PORT}/`, duration: 3 })
async function rounds(label: string) {
  for (let round = 1; round <= 2; round++) {
    await measure(`now playing, service${label} (round ${round})`, children[0]!, `http://127.0.0.1:${APP_PORT}${path}`)
    await measure(`plain node:http, fixed body${label} (round ${round})`, children[1]!, `http://127.0.0.1:${PLAIN_PORT}/`)
  }
}
await rounds('')
// The external side-by-side harness measures now playing in a service process that added 10,000-contact lists
// first (its seeding): a fresh service process adds four, then the same rounds again. (Added
// after the rounds above, the same lists cost the replay far less: what a process served first
// shapes the code it runs.)
const first = children[0]!
first.kill()
await new Promise((resolve) => first.once('exit', resolve))
await startService()
children[0] = children.pop()!
const api = (route: string, body: unknown) => postApi(`http://127.0.0.1:${APP_PORT}`, apiKey, route, body)
const { reference: group } = await api('contact/group/create', { name: 'Everyone' })
for (let batch = 0; batch < 4; batch++) {
  const contacts = Array.from({ length: 10_000 }, (_, i) => ({
    first_name: `Name${(i * 7919) % 1000}`,
    family_name: `Batch${batch}`,
    mobile: `+2547${20_000_000 + batch * 10_000 + i}`,
  }))
  await api(`contact/group/${group}/add-contacts`, { contacts })
}
await load('warm-up', { url: `http://127.0.0.1:${APP_PORT}${path}`, duration: 3 })
await rounds(' after add-contacts')
printTable(rows)
for (const pid of processTree(children[0]!.pid!)) {
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
  console.log(`service peak RSS (VmHWM) of pid ${pid}: ${hwm ? (Number(hwm) / 1024).toFixed(0) : '?'} MiB`)
}
console.log(
  `load average: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
)
const part = (prefix: string, after: boolean) =>
  rows.filter((r) => r.name.startsWith(prefix) && r.name.includes('after add-contacts') === after)
const sum = (prefix: string, after: boolean) => part(prefix, after).reduce((a, r) => a + r.requestsPerSecond, 0)
const cpu = (prefix: string, after: boolean) => part(prefix, after).reduce((a, r) => a + r.cpuUs, 0)
for (const after of [false, true]) {
  const which = after ? 'after four add-contacts of 10,000 (as in the external side-by-side harness)' : 'fresh service process'
  console.log(
    `${which}: service / plain throughput ${((sum('now playing', after) / sum('plain', after)) * 100).toFixed(1)}% (target: at least 80%, issue 19); ` +
      `CPU per request service ${(cpu('now playing', after) / 2).toFixed(1)} µs, plain ${(cpu('plain', after) / 2).toFixed(1)} µs, plain / service ${((cpu('plain', after) / cpu('now playing', after)) * 100).toFixed(1)}%`,
  )
}
for (const r of rows) console.log(`  ${r.name}: ${r.cpuUs} µs CPU per request, ${r.systemUs} of it system`)

for (const c of children) c.kill()
rmSync(dir, { recursive: true, force: true })
