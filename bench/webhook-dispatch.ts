// npm run bench -- webhook-dispatch
// The worker's continuous dispatcher (createDispatcher, as src/process/worker.ts runs it, each
// instance a process of its own) POSTing N due deliveries (WEBHOOK_BENCH_N, default 10,000) of one
// account to a local receiver (node:http, 200 at once): deliveries a second from one instance on
// SQLite and on PostgreSQL, and from two instances on one PostgreSQL, with the duplicates the
// receiver saw (none may arrive twice). The one account's endpoint may use every slot
// (WEBHOOK_ENDPOINT_CONCURRENCY=50), as a lone busy account would. Measures that do not depend on
// the machine's load: CPU per delivery of the dispatchers and of PostgreSQL's backends serving
// them, statements and (PostgreSQL) round trips per delivery. Targets (issue 56): 1,000/s from one
// instance on PostgreSQL; with two, the CPU per delivery (dispatchers and PostgreSQL) at most 1.1x one's.
// WEBHOOK_BENCH_WARM=n: each instance first sends n deliveries that are not measured (see WARM).
import { fork, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import pg from 'pg'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { applyMigrations } from '../src/db/migrate.js'
import { postgresSchema } from './harness.js'
import { openDatabase } from '../src/db/client.js'
import { parseEnv } from '../src/core/env.js'
import { createDeps } from '../src/deps.js'
import { createAccount } from '../src/accounts/create-account.js'

const N = Number(process.env.WEBHOOK_BENCH_N ?? 10_000)
// Deliveries each instance sends before the measured N (default none): a fresh dispatcher process
// spends its first few thousand at two to three times the CPU of later ones (its code not yet
// optimised), a cost a long-running worker pays once; with a warm-up the figures are those of
// warm instances, and two instances are compared with one without a second start-up.
const WARM = Number(process.env.WEBHOOK_BENCH_WARM ?? 0)

const seen = new Map<string, number>()
const receiver = createServer((req, res) => {
  const id = req.headers['webhook-id'] as string
  seen.set(id, (seen.get(id) ?? 0) + 1)
  req.resume()
  req.on('end', () => res.end('ok'))
})
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

interface Run {
  label: string
  perSecond: number
  duplicates: number
  cpuMsPerDelivery: number
  /** PostgreSQL's backends serving the dispatchers (their own CPU, /proc/<pid>/stat), ms a delivery. */
  databaseCpuMsPerDelivery: number | null
  statementsPerDelivery: number
  roundTripsPerDelivery: number | null
  /** How busy the whole machine was over the run (every process: dispatchers, database, receiver). */
  machineBusy: number
  load: string
}

/** The machine's busy and total CPU time so far (os.cpus(), summed over the cores). */
function machineTimes() {
  let busy = 0
  let total = 0
  for (const { times } of cpus()) {
    busy += times.user + times.nice + times.sys + times.irq
    total += times.user + times.nice + times.sys + times.irq + times.idle
  }
  return { busy, total }
}

/** A process's CPU time so far in ms (utime + stime of /proc/<pid>/stat; 0 once it is gone). */
function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // utime and stime are fields 14 and 15 of the line, 11 and 12 after the command; clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return 0
  }
}

/**
 * The CPU PostgreSQL spends for the dispatchers: the backends of their connections, known by the
 * application_name their DATABASE_URL gives (listed every 50 ms, so that a connection opened
 * during the run is counted too), read from /proc (the server runs on this machine). Other
 * clients of the server (the bench's own seeding, other work on the machine) are not counted.
 */
async function databaseCpu(base: string, applicationName: string) {
  const client = new pg.Client({ connectionString: base })
  await client.connect()
  /** Each backend's CPU when it was first seen: as it was now for those already open, 0 for those opened later. */
  const from = new Map<number, number>()
  const list = async (first: boolean) => {
    const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [applicationName])
    for (const { pid } of rows) if (!from.has(pid)) from.set(pid, first ? processCpuMs(pid) : 0)
  }
  await list(true)
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      await new Promise((r) => setTimeout(r, 50))
      await list(false)
    }
  })()
  return {
    async stop() {
      sampling = false
      await sampler
      await list(false)
      let ms = 0
      for (const [pid, cpuMs] of from) ms += Math.max(0, processCpuMs(pid) - cpuMs)
      await client.end()
      return { ms, backends: from.size }
    },
  }
}

async function run(label: string, url: string, instances: number): Promise<Run> {
  await applyMigrations(url)
  const opened = await openDatabase(url)
  const deps = createDeps(opened, parseEnv({ DATABASE_URL: url, LOG_LEVEL: 'silent' }))
  const { account } = await createAccount(deps, { name: 'Bench' })
  const endpoint = await deps.db.webhookEndpoint.create({
    data: { accountId: account.id, url: hook, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
  })
  const message = await deps.db.message.create({
    data: {
      accountId: account.id,
      mobile: '+254712345678',
      sender: 'BENCH',
      text: 'x',
      encoding: 'GSM_7',
      pages: 1,
      costPerPage: 8000n,
      creditsDeducted: 8000n,
      gateway: 'sandbox',
      status: 'DELIVRD',
      broadcastAt: new Date(),
    },
  })
  const body = JSON.stringify({ reference: message.id, id: message.id, status: 'DELIVRD', padding: 'x'.repeat(200) })
  const due = async (count: number, prefix: string) => {
    const now = new Date()
    for (let i = 0; i < count; i += 1000)
      await deps.db.webhookDelivery.createMany({
        data: Array.from({ length: Math.min(1000, count - i) }, (_, j) => ({
          id: `msg_${prefix}${String(i + j).padStart(32 - prefix.length, '0')}`,
          accountId: account.id,
          endpointId: endpoint.id,
          messageId: message.id,
          body,
          nextAttemptAt: now,
        })),
      })
  }
  const warm = WARM * instances
  await due(warm || N, warm ? 'w' : '')
  seen.clear()
  const postgres = url.startsWith('postgres')
  const applicationName = `webhook-bench-${process.pid}-${instances}`
  let instanceUrl = url
  if (postgres) {
    const tagged = new URL(url)
    tagged.searchParams.set('application_name', applicationName)
    instanceUrl = tagged.toString()
  }
  const children: ChildProcess[] = []
  for (let i = 0; i < instances; i++) {
    const child = fork(new URL('./instances/dispatcher.ts', import.meta.url), {
      execArgv: [
        '--import',
        'tsx',
        ...(process.env.DISPATCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.DISPATCH_PROFILE] : []),
      ],
      env: { ...process.env, DATABASE_URL: instanceUrl, WEBHOOK_ENDPOINT_CONCURRENCY: '50' },
    })
    await new Promise((resolve) => child.once('message', resolve))
    children.push(child)
  }
  if (warm) {
    for (const child of children) child.send('go')
    while (seen.size < warm) await new Promise((r) => setTimeout(r, 10))
    // Every warm-up delivery recorded before the counts start again (the receiver hears a POST before its record).
    while (await deps.db.webhookDelivery.count({ where: { state: 'pending' } })) await new Promise((r) => setTimeout(r, 10))
    await Promise.all(children.map((child) => new Promise((resolve) => (child.once('message', resolve), child.send('mark')))))
    seen.clear()
    await due(N, '')
  }
  const backends = postgres ? await databaseCpu(url.replace(/\?.*$/, ''), applicationName) : null
  const started = performance.now()
  const machineBefore = machineTimes()
  for (const child of children) child.send(warm ? 'pump' : 'go')
  while (seen.size < N) await new Promise((r) => setTimeout(r, 10))
  const seconds = (performance.now() - started) / 1000
  const machineAfter = machineTimes()
  const machineBusy = (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)
  const database = await backends?.stop()
  const reports = await Promise.all(
    children.map(
      (child) =>
        new Promise<{ cpuMs: number; statements: Record<string, number>; roundTrips: number }>((resolve) => {
          child.once('message', (m) => {
            const report = m as { cpuMs: number; statements: Record<string, number>; roundTrips: number }
            if (process.env.WEBHOOK_BENCH_STATEMENTS)
              for (const [sql, n] of Object.entries(report.statements).sort((a, b) => b[1] - a[1]))
                console.log(`  ${(n / N).toFixed(2)} per delivery: ${sql}`)
            resolve(report)
          })
          child.send('stop')
        }),
    ),
  )
  const cpu = reports.map((r) => r.cpuMs)
  const statementCount = reports.reduce((sum, r) => sum + Object.values(r.statements).reduce((a, b) => a + b, 0), 0)
  const roundTrips = reports.reduce((sum, r) => sum + r.roundTrips, 0)
  // Every attempt recorded: nothing left pending that the receiver already has.
  const pending = await deps.db.webhookDelivery.count({ where: { state: 'pending' } })
  const duplicates = [...seen.values()].reduce((sum, n) => sum + n - 1, 0)
  await opened.close()
  const result = {
    label,
    perSecond: Math.round(N / seconds),
    duplicates,
    cpuMsPerDelivery: cpu.reduce((a, b) => a + b, 0) / N,
    databaseCpuMsPerDelivery: database ? database.ms / N : null,
    statementsPerDelivery: statementCount / N,
    roundTripsPerDelivery: postgres ? roundTrips / N : null,
    machineBusy,
    load: loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
  }
  console.log(
    `${label}${warm ? ` (warmed up by ${warm} deliveries)` : ''}: ${N} deliveries in ${seconds.toFixed(2)} s = ${result.perSecond}/s, dispatcher CPU ${result.cpuMsPerDelivery.toFixed(3)} ms per delivery` +
      (database ? `, PostgreSQL CPU ${result.databaseCpuMsPerDelivery!.toFixed(3)} ms (${database.backends} backends)` : '') +
      `, ${result.statementsPerDelivery.toFixed(3)} statements` +
      (postgres ? ` and ${result.roundTripsPerDelivery!.toFixed(3)} round trips` : '') +
      ` per delivery, machine ${Math.round(100 * machineBusy)}% busy (${cpus().length} cores), ${duplicates} duplicates, ${pending} left pending (load ${result.load})`,
  )
  return result
}

// WEBHOOK_BENCH_DATABASES=postgresql runs only the PostgreSQL rows (default: sqlite,postgresql).
const databases = (process.env.WEBHOOK_BENCH_DATABASES ?? 'sqlite,postgresql').split(',')
const results: (Run | null)[] = []
if (databases.includes('sqlite')) {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-'))
  results.push(await run('SQLite, one instance', `file:${join(dir, 'bench.db')}`, 1))
  rmSync(dir, { recursive: true, force: true })
} else results.push(null)
for (const instances of databases.includes('postgresql') ? [1, 2] : []) {
  const schema = await postgresSchema()
  if (!schema) break
  results.push(await run(`PostgreSQL, ${instances === 1 ? 'one instance' : 'two instances'}`, schema.url, instances))
  await schema.drop()
}
const [, one, two] = results
if (one && two) {
  const total = (r: Run) => r.cpuMsPerDelivery + (r.databaseCpuMsPerDelivery ?? 0)
  console.log(
    `two instances / one instance on PostgreSQL: ${(two.perSecond / one.perSecond).toFixed(2)}x the rate; CPU per delivery (dispatchers and PostgreSQL) ${total(two).toFixed(3)} / ${total(one).toFixed(3)} ms = ${(total(two) / total(one)).toFixed(2)}x (target at most 1.1x)`,
  )
}
receiver.close()
