// npm run bench -- after-idle
// What a pause costs a request on this machine: the shared harness measures its one-client cells in
// rounds, each cell once a round, and at a million contacts a round lasts about a minute (the
// peers' statements take seconds each), so every request it times comes after a long pause of
// the process that answers it. The real service (built, started as `npm start` starts it, SQLite,
// an account of 1,000 contacts) answers REST page 1 and `/healthz`, and a node:http server answers a
// fixed body (bench/peers/fixed-body.ts, the harness's now-playing peer): each request's time,
// one client, after a pause of AFTER_IDLE_PAUSES seconds (0.1,1,10,40) in which every process is
// idle, AFTER_IDLE_SAMPLES (3) times each, the three targets in turn (their order rotated); the
// median. Then this process's own memory: the time to touch each 4 KiB page of AFTER_IDLE_MIB (64)
// MiB after the same pauses against back to back. About 9 minutes.
//
// The service's API key cache keeps a key for 30 s (API_KEY_CACHE_MS): after the 40 s pause page 1
// looks its key up again, as the harness's page 1 at a million does every round.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import http from 'node:http'
import { applyMigrations } from '../src/db/migrate.js'
import { openDatabase } from '../src/db/client.js'
import { createAccount } from '../src/accounts/create-account.js'
import { benchServiceEnv, serviceCommand, startChild } from './peers/processes.js'
import { seedContacts } from './peers/seed.js'
import { median } from './harness.js'

const PAUSES = (process.env.AFTER_IDLE_PAUSES ?? '0.1,1,10,40').split(',').map(Number)
if (!PAUSES.every((s) => s >= 0)) throw new Error('AFTER_IDLE_PAUSES: seconds separated by commas')
const positive = (name: string, fallback: number) => {
  const n = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name}: a whole number, at least 1`)
  return n
}
const SAMPLES = positive('AFTER_IDLE_SAMPLES', 3)
const MIB = positive('AFTER_IDLE_MIB', 64)
const root = fileURLToPath(new URL('..', import.meta.url))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const load = () => os.loadavg()[0]!.toFixed(2)

const dir = mkdtempSync(join(os.tmpdir(), 'gateway-bench-'))
const url = `file:${join(dir, 'bench.db')}`
await applyMigrations(url)
const database = await openDatabase(url)
const { account, apiKey } = await createAccount({ db: database.prisma }, { name: 'After idle' })
await database.close()
await seedContacts(url, account.id, 30_000_000, 1000)

const start = serviceCommand(root)
const service = await startChild(
  'service',
  (port) => ({
    args: start.args,
    env: benchServiceEnv(start, url, port),
  }),
  root,
)
const fixed = await startChild(
  'fixed body',
  (port) => ({ args: ['--import', 'tsx', 'bench/peers/fixed-body.ts', String(port), '4700'] }),
  root,
)

// One kept-alive connection per server, as the harness's client has (its agent keeps them).
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
function timed(base: string, path: string, headers: Record<string, string> = {}) {
  return new Promise<number>((resolve, reject) => {
    const t0 = performance.now()
    http
      .get(`${base}${path}`, { agent, headers }, (res) => {
        res.resume()
        res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`${path}: ${res.statusCode}`))))
      })
      .on('error', reject)
  })
}
const targets = [
  {
    name: 'service, REST page 1',
    get: () => timed(service.baseUrl, '/api/contacts?page=1&perPage=25', { authorization: `Bearer ${apiKey}` }),
  },
  { name: 'service, /healthz', get: () => timed(service.baseUrl, '/healthz') },
  { name: 'node:http, fixed body', get: () => timed(fixed.baseUrl, '/') },
]

try {
  console.log(`after-idle: ${os.cpus().length} CPUs, load ${load()} at the start; service: node ${start.args.join(' ')}`)
  for (let i = 0; i < 300; i++) for (const t of targets) await t.get()
  const back = targets.map((t) => ({ t, ms: [] as number[] }))
  for (let i = 0; i < 50; i++) for (const b of back) b.ms.push(await b.t.get())
  const rows = [{ pause: 'none (back to back, median of 50)', ms: back.map((b) => median(b.ms)) }]
  for (const pause of PAUSES) {
    const ms: number[][] = targets.map(() => [])
    for (let i = 0; i < SAMPLES; i++) {
      for (let k = 0; k < targets.length; k++) {
        const j = (k + i) % targets.length
        // Each request after its own pause: every process in it is idle.
        await sleep(pause * 1000)
        ms[j]!.push(await targets[j]!.get())
      }
    }
    rows.push({ pause: `${pause} s`, ms: ms.map(median) })
  }
  console.log(`\n| pause before the request | ${targets.map((t) => t.name).join(' | ')} | service page 1 / fixed body |`)
  console.log(`|---|${targets.map(() => '---:|').join('')}---:|`)
  for (const r of rows)
    console.log(`| ${r.pause} | ${r.ms.map((m) => `${m.toFixed(2)} ms`).join(' | ')} | ${(r.ms[0]! / r.ms[2]!).toFixed(2)}x |`)
  console.log(`(median of ${SAMPLES} after each pause; load ${load()})`)

  // The machine, without any server: the same pages touched again after a pause.
  const buffer = Buffer.alloc(MIB * 1024 * 1024, 1)
  const pages = buffer.length / 4096
  const touch = () => {
    const t0 = performance.now()
    for (let i = 0; i < buffer.length; i += 4096) buffer[i] = (buffer[i]! + 1) & 255
    return performance.now() - t0
  }
  touch()
  touch()
  const warm = median([touch(), touch(), touch()])
  const line = [`back to back ${((warm * 1000) / pages).toFixed(3)} µs`]
  for (const pause of PAUSES) {
    await sleep(pause * 1000)
    line.push(`after ${pause} s ${((touch() * 1000) / pages).toFixed(3)} µs`)
  }
  console.log(`\nTouching each 4 KiB page of ${MIB} MiB again, per page: ${line.join(', ')} (load ${load()})`)
} finally {
  agent.destroy()
  await service.stop()
  await fixed.stop()
  rmSync(dir, { recursive: true, force: true })
}
