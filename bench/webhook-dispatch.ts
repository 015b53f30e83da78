// npm run bench -- webhook-dispatch
// The worker's continuous dispatcher (createDispatcher, as src/process/worker.ts runs it, each
// instance a process of its own) POSTing N due deliveries (WEBHOOK_BENCH_N, default 10,000) of one
// account to a local receiver (node:http, 200 at once): deliveries a second from one instance on
// SQLite and on PostgreSQL, and from two instances on one PostgreSQL, with the duplicates the
// receiver saw (none may arrive twice). The one account's endpoint may use every slot
// (WEBHOOK_ENDPOINT_CONCURRENCY=50), as a lone busy account would. Targets (issue 19): 1,000/s from
// one instance; two instances at least 1.7x one.
import { fork, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { applyMigrations } from '../src/db/migrate.js'
import { postgresSchema } from './harness.js'
import { openDatabase } from '../src/db/client.js'
import { parseEnv } from '../src/core/env.js'
import { createDeps } from '../src/deps.js'
import { createAccount } from '../src/accounts/create-account.js'

const N = Number(process.env.WEBHOOK_BENCH_N ?? 10_000)

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

async function run(label: string, url: string, instances: number): Promise<Run> {
  await applyMigrations(url)
  const database = await openDatabase(url)
  const deps = createDeps(database, parseEnv({ DATABASE_URL: url, LOG_LEVEL: 'silent' }))
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
  const now = new Date()
  for (let i = 0; i < N; i += 1000)
    await deps.db.webhookDelivery.createMany({
      data: Array.from({ length: Math.min(1000, N - i) }, (_, j) => ({
        id: `msg_${String(i + j).padStart(32, '0')}`,
        accountId: account.id,
        endpointId: endpoint.id,
        messageId: message.id,
        body,
        nextAttemptAt: now,
      })),
    })
  seen.clear()
  const children: ChildProcess[] = []
  for (let i = 0; i < instances; i++) {
    const child = fork(new URL('./instances/dispatcher.ts', import.meta.url), {
      execArgv: [
        '--import',
        'tsx',
        ...(process.env.DISPATCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.DISPATCH_PROFILE] : []),
      ],
      env: { ...process.env, DATABASE_URL: url, WEBHOOK_ENDPOINT_CONCURRENCY: '50' },
    })
    await new Promise((resolve) => child.once('message', resolve))
    children.push(child)
  }
  const started = performance.now()
  const machineBefore = machineTimes()
  for (const child of children) child.send('go')
  while (seen.size < N) await new Promise((r) => setTimeout(r, 10))
  const seconds = (performance.now() - started) / 1000
  const machineAfter = machineTimes()
  const machineBusy = (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)
  const cpu = await Promise.all(
    children.map(
      (child) =>
        new Promise<number>((resolve) => {
          child.once('message', (m) => {
            const { cpuMs, statements } = m as { cpuMs: number; statements: Record<string, number> }
            if (process.env.WEBHOOK_BENCH_STATEMENTS)
              for (const [sql, n] of Object.entries(statements).sort((a, b) => b[1] - a[1]))
                console.log(`  ${(n / N).toFixed(2)} per delivery: ${sql}`)
            resolve(cpuMs)
          })
          child.send('stop')
        }),
    ),
  )
  // Every attempt recorded: nothing left pending that the receiver already has.
  const pending = await deps.db.webhookDelivery.count({ where: { state: 'pending' } })
  const duplicates = [...seen.values()].reduce((sum, n) => sum + n - 1, 0)
  await database.close()
  const result = {
    label,
    perSecond: Math.round(N / seconds),
    duplicates,
    cpuMsPerDelivery: cpu.reduce((a, b) => a + b, 0) / N,
    machineBusy,
    load: loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
  }
  console.log(
    `${label}: ${N} deliveries in ${seconds.toFixed(2)} s = ${result.perSecond}/s, dispatcher CPU ${result.cpuMsPerDelivery.toFixed(3)} ms per delivery, machine ${Math.round(100 * machineBusy)}% busy (${cpus().length} cores), ${duplicates} duplicates, ${pending} left pending (load ${result.load})`,
  )
  return result
}

const results: Run[] = []
const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-'))
results.push(await run('SQLite, one instance', `file:${join(dir, 'bench.db')}`, 1))
rmSync(dir, { recursive: true, force: true })
for (const instances of [1, 2]) {
  const schema = await postgresSchema()
  if (!schema) break
  results.push(await run(`PostgreSQL, ${instances === 1 ? 'one instance' : 'two instances'}`, schema.url, instances))
  await schema.drop()
}
const [, one, two] = results
if (one && two) console.log(`two instances / one instance on PostgreSQL: ${(two.perSecond / one.perSecond).toFixed(2)}x (target 1.7x)`)
receiver.close()
