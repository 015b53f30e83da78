// The worker's continuous dispatcher (createDispatcher): it keeps claiming as slots free up.
import { describe, expect, it } from 'vitest'
import type { ServerResponse } from 'node:http'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { startReceiver } from './kit/receiver.js'
import { createDispatcher } from '../src/webhooks/dispatcher.js'
import { setWebhook } from '../src/webhooks/endpoints.js'
import { sentMessageRow } from './kit/seed.js'

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
  }

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
