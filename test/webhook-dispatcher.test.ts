// The worker's continuous dispatcher (createDispatcher): it keeps claiming as slots free up.
import { describe, expect, it } from 'vitest'
import type { ServerResponse } from 'node:http'
import pg from 'pg'
import { schemaClient, targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { startReceiver } from './kit/receiver.js'
import { claimDueDeliveries, createDispatcher } from '../src/webhooks/dispatcher.js'
import { createEndpoint, setWebhook } from '../src/webhooks/endpoints.js'
import { sentMessageRow } from './kit/seed.js'
import { createPostgresBus } from '../src/events/postgres-bus.js'
import { channelNameFor } from '../src/events/channel-name.js'
import { parseDatabaseUrl } from '../src/db/connection-url.js'
import { createLogger } from '../src/core/logger.js'
import { TOPIC, type WebhookDeliveryEvent } from '../src/live/topics.js'
import { reply } from './kit/receiver.js'
import type { DirectQuery } from '../src/db/client.js'

describe.each(targets)('the continuous webhook dispatcher on $name', (target) => {
  const kit = useKit(target, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } })

  async function pendingDeliveries(count: number, url: string) {
    const { account } = await kit.seed().account()
    const endpoint = await setWebhook(kit.deps, account.id, url)
    const message = await kit.db.message.create({ data: sentMessageRow(account.id) })
    const now = kit.deps.clock.now()
    await kit.db.webhookDelivery.createMany({
      data: Array.from({ length: count }, (_, i) => ({
        id: `msg_${account.id.replaceAll('-', '')}${i}`,
        accountId: account.id,
        endpointId: endpoint.id,
        messageId: message.id,
        body: JSON.stringify({ n: i }),
        nextAttemptAt: now,
        createdAt: now,
      })),
    })
    return account.id
  }

  // The usual record (every POST answered 2xx by a healthy endpoint) is one statement on PostgreSQL,
  // the delivery log's NOTIFY inside it: the log must still hear every attempt, on this instance
  // and on another, and the attempts and deliveries must be written as before.
  it('records delivered attempts and tells the delivery log of this instance and of another', async () => {
    const receiver = await startReceiver(reply(200))
    const other =
      target.name === 'postgresql'
        ? createPostgresBus({
            connectionString: parseDatabaseUrl(kit.url).connectionString!,
            channel: channelNameFor(parseDatabaseUrl(kit.url).schema!),
            db: kit.db,
            logger: createLogger('silent'),
          })
        : null
    const here: string[] = []
    const there: string[] = []
    const offHere = kit.deps.events.subscribe(TOPIC.webhookDelivery, (e) => here.push(...(e as WebhookDeliveryEvent).deliveryIds))
    const offThere = other?.subscribe(TOPIC.webhookDelivery, (e) => there.push(...(e as WebhookDeliveryEvent).deliveryIds))
    await other?.ready()
    const dispatcher = createDispatcher(kit.deps, { owner: 'one', concurrency: 5, perEndpoint: 5 })
    let accountId: string | undefined
    try {
      accountId = await pendingDeliveries(12, receiver.url)
      kit.statements.length = 0
      await dispatcher.pump()
      await expect.poll(() => here.length).toBe(12)
      const delivered = await kit.db.webhookDelivery.findMany({ where: { id: { in: here } }, include: { attemptLog: true } })
      expect(delivered).toHaveLength(12)
      for (const d of delivered) {
        expect(d).toMatchObject({ state: 'delivered', attempts: 1, attemptsTotal: 1, leaseUntil: null, lastError: null })
        expect(d.attemptLog).toMatchObject([{ attempt: 1, statusCode: 200, error: null, responseTruncated: false }])
        expect(d.attemptLog[0]!.requestHeaders).toContain(`webhook-id: ${d.id}`)
      }
      if (other) {
        await expect.poll(() => there.length).toBe(12)
        expect(new Set(there)).toEqual(new Set(here))
        // No transaction of its own and no separate publish: the record is the one statement.
        expect(kit.statements.filter((q) => /^(BEGIN|COMMIT)$|pg_notify/.test(q.trim()) && !q.trim().startsWith('WITH'))).toEqual([])
      }
    } finally {
      offHere()
      offThere?.()
      await dispatcher.stop()
      await other?.close()
      await receiver.close()
      // The next test counts every delivered delivery.
      if (accountId) await kit.db.webhookDelivery.deleteMany({ where: { accountId } })
    }
  })

  // PostgreSQL claims in one statement (window functions, FOR UPDATE SKIP LOCKED), SQLite picks in
  // code: both take the endpoints in turns, oldest first, within each endpoint's and account's room.
  it('claims in turns over the endpoints, within what each endpoint and account has left', async () => {
    const x = (await kit.seed().account()).account
    const y = (await kit.seed().account()).account
    const a = await createEndpoint(kit.deps, x.id, { url: 'http://127.0.0.1:9/a' })
    const b = await createEndpoint(kit.deps, x.id, { url: 'http://127.0.0.1:9/b' })
    const c = await createEndpoint(kit.deps, y.id, { url: 'http://127.0.0.1:9/c' })
    const now = kit.deps.clock.now().getTime()
    const row = (accountId: string, endpointId: string | null, name: string, secondsAgo: number) => ({
      id: `msg_${name}${accountId.replaceAll('-', '').slice(0, 24)}`,
      accountId,
      endpointId,
      body: '{}',
      nextAttemptAt: new Date(now - secondsAgo * 1000),
    })
    await kit.db.webhookDelivery.createMany({
      data: [
        row(x.id, a.id, 'a1', 40),
        row(x.id, a.id, 'a2', 39),
        row(x.id, a.id, 'a3', 38),
        row(x.id, null, 'n1', 35),
        row(x.id, b.id, 'b1', 30),
        row(x.id, b.id, 'b2', 29),
        row(x.id, b.id, 'b3', 28),
        row(y.id, c.id, 'c1', 20),
        row(y.id, c.id, 'c2', 19),
        row(y.id, c.id, 'c3', 18),
      ],
    })
    try {
      // Two a endpoint slots and four account slots in all; one of each already in flight for a and x.
      const inFlight = { endpoints: new Map([[a.id, 1]]), accounts: new Map([[x.id, 1]]) }
      const claimed = await claimDueDeliveries(kit.deps, 'fair', 10, 60_000, 2, inFlight)
      const names = claimed.map((d) => d.id.slice(4, 6))
      // Turn one: a (its last slot), the removed endpoint's, b, c; x is then full, so turn two is c's alone.
      expect(names).toEqual(['a1', 'n1', 'b1', 'c1', 'c2'])
      expect(claimed.map((d) => d.endpoint?.url ?? null)).toEqual([a.url, null, b.url, c.url, c.url])
      expect(claimed[0]).toMatchObject({ accountId: x.id, endpointId: a.id, body: '{}', attempts: 0, attemptsTotal: 0 })
      expect(claimed[0]!.endpoint).toMatchObject({ id: a.id, accountId: x.id, secret: a.secret, failures: 0, pausedUntil: null })
      // Leased: claimed again by nobody until the lease runs out.
      expect(await claimDueDeliveries(kit.deps, 'other', 10, 60_000, 2)).toEqual(
        expect.not.arrayContaining([expect.objectContaining({ id: claimed[0]!.id })]),
      )
    } finally {
      await kit.db.webhookDelivery.deleteMany({ where: { accountId: { in: [x.id, y.id] } } })
    }
  })

  // A call made while every slot was taken returned before its first await, and the dispatcher
  // then took its settled promise for a claim in progress: it never claimed again (under the crash
  // test on SQLite, thousands of deliveries stayed pending).
  it('a call while every slot is taken does not stop it: the rest are claimed as POSTs finish', async () => {
    const held: ServerResponse[] = []
    const receiver = await startReceiver((_req, res) => void held.push(res))
    const dispatcher = createDispatcher(kit.deps, { owner: 'one', concurrency: 2, perEndpoint: 2 })
    try {
      await pendingDeliveries(5, receiver.url)
      expect(await dispatcher.pump()).toBe(2)
      await expect.poll(() => held.length).toBe(2)
      // Every slot is taken: nothing to claim now.
      expect(await dispatcher.pump()).toBe(0)
      expect(dispatcher.active).toBe(2)
      // From here on only finished POSTs drive the dispatcher (no tick): each frees a slot and claims the next.
      receiver.respond((_req, res) => res.end('ok'))
      for (const res of held.splice(0)) res.end('ok')
      await expect.poll(() => receiver.received.length).toBe(5)
      await expect.poll(() => kit.db.webhookDelivery.count({ where: { state: 'delivered' } })).toBe(5)
      expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(5)
    } finally {
      for (const res of held) res.end()
      await dispatcher.stop()
      await receiver.close()
    }
  })
})

// The claim is planned without statistics on a table that was never analysed (a burst just after
// start) or whose last ANALYZE saw few pending rows (a burst in production, until autovacuum
// comes round). PostgreSQL then expected a handful of due rows, read every due one and sorted
// them for each claim: 5 to 13 ms a claim at 10,000 due (docs/performance.md). The claim must
// read about its candidates whatever the statistics say.
describe.each(targets.filter((t) => t.name === 'postgresql'))('the webhook claim on $name', (target) => {
  const kit = useKit(target, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } })

  /** Rows of "WebhookDelivery" the claim's statement reads (index fetches and sequential reads), run on its own and rolled back. */
  async function rowsReadByClaim(client: pg.Client, limit: number) {
    let statement: DirectQuery | undefined
    const capture = { ...kit.deps, directRead: async (query: DirectQuery) => ((statement = query), []) }
    await claimDueDeliveries(capture, 'plan', limit, 60_000, 50)
    // This backend's counters (those not yet sent to the statistics included), before and after: rows
    // read sequentially, by bitmap scans (the table's fetches) and by index scans (its indexes').
    const read = async () =>
      Number(
        (
          await client.query<{ read: string }>(`
            SELECT pg_stat_get_xact_tuples_returned(t.oid) + pg_stat_get_xact_tuples_fetched(t.oid)
              + (SELECT coalesce(sum(pg_stat_get_xact_tuples_fetched(i.indexrelid)), 0) FROM pg_index i WHERE i.indrelid = t.oid) AS "read"
            FROM (SELECT '"WebhookDelivery"'::regclass::oid AS oid) t`)
        ).rows[0]!.read,
      )
    await client.query('BEGIN')
    try {
      const before = await read()
      await client.query({ text: statement!.text, values: statement!.values })
      return (await read()) - before
    } finally {
      await client.query('ROLLBACK')
    }
  }

  it('reads about its candidates, not every due delivery, before any ANALYZE and after one that saw none pending', async () => {
    const { account } = await kit.seed().account()
    const endpoint = await createEndpoint(kit.deps, account.id, { url: 'http://127.0.0.1:9/hook' })
    const client = await schemaClient(kit.url)
    // No autovacuum run may analyse the table under the test: each claim is planned on the statistics the test made.
    await client.query('ALTER TABLE "WebhookDelivery" SET (autovacuum_enabled = off)')
    const now = kit.deps.clock.now().getTime()
    const burst = (name: string) =>
      kit.db.webhookDelivery.createMany({
        data: Array.from({ length: 3000 }, (_, i) => ({
          id: `msg_${name}${String(i).padStart(24, '0')}`,
          accountId: account.id,
          endpointId: endpoint.id,
          body: '{}',
          nextAttemptAt: new Date(now - 60_000 + i),
        })),
      })
    try {
      await burst('first')
      const { rows } = await client.query(
        `SELECT last_analyze, last_autoanalyze FROM pg_stat_user_tables WHERE relid = '"WebhookDelivery"'::regclass`,
      )
      expect(rows).toEqual([{ last_analyze: null, last_autoanalyze: null }])
      // 4 candidates a claimed delivery are read, and the claim's UPDATE reads the 5 it claims again.
      expect(await rowsReadByClaim(client, 5)).toBeLessThanOrEqual(4 * 5 + 5)
      // The statistics of a quiet moment: every delivery done. Then a burst they did not see.
      await client.query(`UPDATE "WebhookDelivery" SET "state" = 'delivered'`)
      await client.query('ANALYZE "WebhookDelivery"')
      await burst('second')
      expect(await rowsReadByClaim(client, 5)).toBeLessThanOrEqual(4 * 5 + 5)
    } finally {
      await client.query('ALTER TABLE "WebhookDelivery" RESET (autovacuum_enabled)')
      await client.end()
      await kit.db.webhookDelivery.deleteMany({ where: { accountId: account.id } })
    }
  })
})
