// The worker's continuous dispatcher (createDispatcher): it keeps claiming as slots free up.
import { describe, expect, it } from 'vitest'
import type { ServerResponse } from 'node:http'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { startReceiver } from './kit/receiver.js'
import { createDispatcher } from '../src/webhooks/dispatcher.js'
import { setWebhook } from '../src/webhooks/endpoints.js'
import { sentMessageRow } from './kit/seed.js'
import { createPostgresBus } from '../src/events/postgres-bus.js'
import { channelNameFor } from '../src/events/channel-name.js'
import { parseDatabaseUrl } from '../src/db/connection-url.js'
import { createLogger } from '../src/core/logger.js'
import { TOPIC, type WebhookDeliveryEvent } from '../src/live/topics.js'
import { reply } from './kit/receiver.js'

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
        expect(kit.statements.filter((q) => /^(BEGIN|COMMIT)$|pg_notify/.test(q.trim()) && !/^WITH/.test(q.trim()))).toEqual([])
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
