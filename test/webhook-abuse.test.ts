// What one account's webhook receiver can do to the service and to the other accounts.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit, fixedClock } from './kit/kit.js'
import { startReceiver } from './kit/receiver.js'
import { dispatchBatch, MAX_RESPONSE_BYTES } from '../src/webhooks/dispatcher.js'

const SEND = `mutation($input: SendSmsInput!) { sendSms(input: $input) { id: uuid } }`
const SET = `mutation($url: String!) { setWebhook(url: $url) { secret } }`

describe.each(targets)('webhook receivers that attack on $name', (target) => {
  const clock = fixedClock('2026-05-01T10:00:00Z')
  const kit = useKit(target, { clock, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', SANDBOX_DELIVERY_DELAY_MS: '1000' } })
  beforeEach(async () => {
    await kit.db.webhookDelivery.updateMany({ where: { state: 'pending' }, data: { state: 'failed' } })
  })

  async function accountWithWebhook(url: string) {
    const s = await kit.seed().account()
    await kit.db.account.update({ where: { id: s.account.id }, data: { creditBalance: 1_000_000n } })
    await kit.gql(SET, { url }, s.key)
    return s
  }

  describe('an endless answer', () => {
    // Answers 200, then writes as fast as the connection takes it, until it is cut (or 256 MiB, the bound of this test).
    let written = 0
    let cut = false
    let receiver: Awaited<ReturnType<typeof startReceiver>>
    beforeAll(async () => {
      receiver = await startReceiver((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' })
        const chunk = Buffer.alloc(64 * 1024, 'x')
        res.on('close', () => (cut = true))
        const pump = () => {
          while (!cut && written < 256 * 1024 * 1024) {
            written += chunk.length
            if (!res.write(chunk)) return void res.once('drain', pump)
          }
          res.end()
        }
        pump()
      })
    })
    afterAll(() => receiver.close())

    it('is read up to 64 KiB, then the connection is cut; the delivery counts as delivered', async () => {
      const s = await accountWithWebhook(receiver.url)
      await kit.gql(SEND, { input: { to: '+254712345678', message: 'endless' } }, s.key)
      const result = await dispatchBatch(kit.deps, { owner: 'test', random: () => 0.5, timeoutMs: 5000 })
      expect(result).toEqual({ claimed: 1, delivered: 1, retrying: 0, failed: 0 })
      await expect.poll(() => cut).toBe(true)
      expect(MAX_RESPONSE_BYTES).toBe(64 * 1024)
      // What the receiver got out before the cut: the 64 KiB read plus what the kernel's socket
      // buffers held. Reading the whole answer would have taken all 256 MiB.
      expect(written).toBeLessThan(32 * 1024 * 1024)
      const [delivery] = await kit.db.webhookDelivery.findMany({ where: { accountId: s.account.id }, include: { attemptLog: true } })
      expect(delivery).toMatchObject({ state: 'delivered', attempts: 1 })
      expect(delivery!.attemptLog.map((a) => a.statusCode)).toEqual([200])
    }, 30_000)
  })

  it('a delivery to a name that resolves to a private address records the same refusal, naming no address', async () => {
    const s = await accountWithWebhook('http://localhost:9/hooks')
    await kit.gql(SEND, { input: { to: '+254712345678', message: 'probe' } }, s.key)
    const strict = { ...kit.deps, env: { ...kit.deps.env, WEBHOOK_ALLOW_PRIVATE_NETWORKS: false } }
    await dispatchBatch(strict, { owner: 'test', random: () => 0.5, timeoutMs: 2000 })
    const attempts = await kit.db.webhookAttempt.findMany({ where: { delivery: { accountId: s.account.id } } })
    expect(attempts.map((a) => a.error)).toEqual(['url must resolve to a public address'])
  })
})
