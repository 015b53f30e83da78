// Two instances, one killed (issue 52 item 7): kill -9 of the instance whose dispatcher is
// mid-batch loses no webhook delivery, and what it sends again stays within the in-flight bound
// of docs/reliability.md (the dispatcher's concurrency, 50). Two ways to have two:
//   - two server processes on one PostgreSQL, each with its worker loop (PostgreSQL only);
//   - one server with WEB_CONCURRENCY=2, the worker that runs the loop killed (each database).
//   npm run test:crash -- test/crash/two-instances.test.ts
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { targets, type TestDatabase } from '../kit/databases.js'
import { startReceiver } from '../kit/receiver.js'
import { spawnServer, waitFor } from '../kit/server-process.js'
import { applyMigrations } from '../../src/db/migrate.js'
import { openDatabase, type Database } from '../../src/db/client.js'
import { parseEnv } from '../../src/core/env.js'
import { createDeps, type Deps } from '../../src/deps.js'
import { createAccount } from '../../src/accounts/create-account.js'
import { setWebhook } from '../../src/webhooks/endpoints.js'
import { sentMessageRow } from '../kit/seed.js'

/** The dispatcher's concurrency (createDispatcher's default): the most one kill may send again. */
const IN_FLIGHT_BOUND = 50
const DELIVERIES = 1000
// Long enough that a POST of the survivor is recorded well within its claim even on a loaded
// machine: a claim that runs out under a running attempt is sent again by design, which is not
// what this test counts. The dead process's claims are taken over after it.
const LEASE_MS = 10_000
const random = (min: number, max: number) => min + Math.floor(Math.random() * (max - min))

const SERVER_ENV = {
  RATE_LIMIT_PER_SECOND: '0',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WORKER_LEASE_MS: String(LEASE_MS),
  WORKER_ENABLED: 'true',
  WEBHOOK_ENDPOINT_CONCURRENCY: '50',
  HOST: '127.0.0.1',
  PORT: '0',
  LOG_LEVEL: 'info',
}

type Layout = 'two processes' | 'WEB_CONCURRENCY=2'
const cases = targets.flatMap((target) =>
  (target.name === 'postgresql' ? (['two processes', 'WEB_CONCURRENCY=2'] as Layout[]) : (['WEB_CONCURRENCY=2'] as Layout[])).map(
    (layout) => ({ target, layout, name: `${target.name}, ${layout}` }),
  ),
)

describe.each(cases)('kill -9 of one of two instances mid webhook dispatch ($name)', ({ target, layout }) => {
  let handle: TestDatabase
  let database: Database
  let deps: Deps
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  const servers: ReturnType<typeof spawnServer>[] = []

  beforeAll(async () => {
    handle = await target.create()
    await applyMigrations(handle.url)
    database = await openDatabase(handle.url)
    deps = createDeps(database, parseEnv({ DATABASE_URL: handle.url, LOG_LEVEL: 'silent', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }))
    // Answers after a while, so that the kill finds POSTs in flight.
    receiver = await startReceiver((_req, res) => void setTimeout(() => res.end('ok'), random(100, 400)))
  }, 120_000)
  afterAll(async () => {
    for (const s of servers) if (s.child.exitCode === null) s.child.kill('SIGKILL')
    await Promise.all(servers.map((s) => s.exited))
    await receiver?.close()
    await database?.close()
    await handle?.drop()
  })

  it('loses no delivery and sends at most the in-flight bound again', async () => {
    const { account } = await createAccount(deps, { name: 'Hooks' })
    const endpoint = await setWebhook(deps, account.id, receiver.url)
    const message = await deps.db.message.create({ data: sentMessageRow(account.id) })
    const env = { ...process.env, ...SERVER_ENV, DATABASE_URL: handle.url }
    if (layout === 'two processes') servers.push(spawnServer(env), spawnServer(env))
    else servers.push(spawnServer({ ...env, WEB_CONCURRENCY: '2' }))
    // A cluster is up once every worker listens: a worker that dies before then is a failed start
    // (src/process/cluster.ts), and the primary stops.
    const up = layout === 'two processes' ? 'listening' : 'cluster listening'
    for (const s of servers) await waitFor('the server to listen', () => s.lines().some((l) => l.msg === up))
    // The processes whose worker loop runs: each instance's own, or the cluster worker it was handed to.
    const loops = () =>
      servers.flatMap((s) =>
        s
          .lines()
          .filter((l) => l.msg === 'worker loop started')
          .map((l) => l.pid as number),
      )
    await waitFor('the worker loops', () => loops().length === servers.length)

    const now = new Date()
    await deps.db.webhookDelivery.createMany({
      data: Array.from({ length: DELIVERIES }, (_, i) => ({
        id: `msg_${String(i).padStart(32, '0')}`,
        accountId: account.id,
        endpointId: endpoint.id,
        messageId: message.id,
        body: JSON.stringify({ reference: message.id, update: i }),
        nextAttemptAt: now,
        createdAt: now,
      })),
    })
    // Mid dispatch: some delivered, most still queued, POSTs in flight.
    await waitFor('deliveries under way', () => receiver.received.length >= 100, 60_000)
    const victim = loops()[0]!
    process.kill(victim, 'SIGKILL')
    const killedAt = Date.now()
    expect(receiver.received.length).toBeLessThan(DELIVERIES)

    // The survivor (or the worker the primary starts instead) finishes the queue; the dead
    // process's claims are taken over once their lease has passed.
    const ids = await deps.db.webhookDelivery.findMany({ select: { id: true } })
    await waitFor(
      'every delivery received',
      () => {
        const got = new Set(receiver.received.map((r) => r.headers['webhook-id']))
        return ids.every((d) => got.has(d.id))
      },
      120_000,
    ).catch(async (error: unknown) => {
      // Where the queue stands and what the servers said: the first clue to why.
      const states = await deps.db.webhookDelivery.groupBy({ by: ['state'], _count: true })
      console.log(JSON.stringify(states), loops(), servers.map((s) => s.output().slice(-3000) + s.errors().slice(-2000)).join('\n---\n'))
      throw error
    })
    await expect
      .poll(() => deps.db.webhookDelivery.count({ where: { state: { not: 'delivered' } } }), { timeout: 30_000, interval: 250 })
      .toBe(0)

    const perId = new Map<string, number>()
    for (const r of receiver.received) perId.set(r.headers['webhook-id'] as string, (perId.get(r.headers['webhook-id'] as string) ?? 0) + 1)
    const duplicates = receiver.received.length - perId.size
    const firstAt = new Map<string, number>()
    for (const r of receiver.received)
      if (!firstAt.has(r.headers['webhook-id'] as string)) firstAt.set(r.headers['webhook-id'] as string, r.at)
    // Sent again after the kill, first sent before it: the dead process's POSTs in flight.
    const ofTheKill = [...perId].filter(([id, n]) => n > 1 && firstAt.get(id)! <= killedAt).length
    console.log(
      `two instances ${target.name}, ${layout}: ${DELIVERIES} deliveries, killed pid ${victim} after ${receiver.received.filter((r) => r.at <= killedAt).length} received, ${duplicates} sent again, ${ofTheKill} of them first sent before the kill (bound ${IN_FLIGHT_BOUND})`,
    )
    expect(perId.size).toBe(DELIVERIES)
    expect(duplicates).toBeLessThanOrEqual(IN_FLIGHT_BOUND)
    if (layout === 'WEB_CONCURRENCY=2')
      // The primary replaced the dead worker and handed it the loop.
      await waitFor('a replacement worker loop', () => loops().length === 2 && !loops().slice(1).includes(victim))
  }, 300_000)
})
