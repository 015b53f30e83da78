// What one account's webhook receiver can do to the service and to the other accounts.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit, fixedClock } from './kit/kit.js'
import { reply, startReceiver } from './kit/receiver.js'
import { createServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { createDispatcher, dispatchBatch, MAX_RESPONSE_BYTES, PER_ENDPOINT } from '../src/webhooks/dispatcher.js'
import { TestKit } from './kit/kit.js'
import { graphql } from '../src/graphql/typed-documents.js'

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

  describe('a receiver that never answers', () => {
    // Accepts the connection and the request, and says nothing until the test ends.
    const sockets = new Set<Socket>()
    const blackHole = createServer((socket) => {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.resume()
    })
    let receiver: Awaited<ReturnType<typeof startReceiver>>
    // PostgreSQL is the scale-out target: two instances there. SQLite is one instance (two Prisma
    // clients in one process would block each other's event loop in SQLite's busy wait).
    const second = target.name === 'postgresql' ? new TestKit(target, { clock, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } }) : null
    beforeAll(async () => {
      await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve))
      receiver = await startReceiver()
      await second?.attach(kit.url)
    })
    afterAll(async () => {
      for (const s of sockets) s.destroy()
      await new Promise((resolve) => blackHole.close(resolve))
      await receiver.close()
      await second?.detach()
    })

    it("holds only its endpoint's few slots on each instance: another account's deliveries arrive within 5 s", async () => {
      const attacker = await accountWithWebhook(`http://127.0.0.1:${(blackHole.address() as AddressInfo).port}/hooks`)
      for (let i = 0; i < 100; i++) await kit.gql(SEND, { input: { to: '+254712345678', message: `flood ${i}` } }, attacker.key)
      // Two instances on one database, each with the worker's dispatcher as shipped (10 s request timeout), ticking every second.
      const dispatchers = [kit, ...(second ? [second] : [])].map((instance, i) =>
        createDispatcher(instance.deps, { owner: `instance-${i}` }),
      )
      const tick = () => Promise.all(dispatchers.map((d) => d.pump()))
      const ticker = setInterval(() => void tick(), 1000)
      try {
        await tick()
        // Each instance sends at most PER_ENDPOINT of one endpoint's deliveries at once.
        const share = PER_ENDPOINT * dispatchers.length
        await expect.poll(() => sockets.size).toBe(share)
        const victim = await accountWithWebhook(receiver.url)
        receiver.received.length = 0
        const sent = Date.now()
        for (let i = 0; i < 2; i++) await kit.gql(SEND, { input: { to: '+254712345679', message: `victim ${i}` } }, victim.key)
        await expect.poll(() => receiver.received.length, { timeout: 5000, interval: 50 }).toBe(2)
        console.log(
          `the other account's 2 deliveries arrived ${Date.now() - sent} ms after sending, with ${sockets.size} connections held by the silent receiver`,
        )
        // The silent receiver never holds more than its endpoint's share on each instance.
        expect(sockets.size).toBeLessThanOrEqual(share)
        expect(
          await kit.db.webhookDelivery.count({ where: { accountId: attacker.account.id, leaseUntil: { gte: clock.now() } } }),
        ).toBeLessThanOrEqual(share)
      } finally {
        clearInterval(ticker)
        for (const s of sockets) s.destroy()
        await Promise.all(dispatchers.map((d) => d.stop()))
      }
    }, 30_000)
  })

  describe('an endpoint that keeps failing', () => {
    let receiver: Awaited<ReturnType<typeof startReceiver>>
    beforeAll(async () => {
      receiver = await startReceiver(reply(500))
    })
    afterAll(() => receiver.close())
    const dispatch = (extra: { perEndpoint?: number } = {}) =>
      dispatchBatch(kit.deps, { owner: 'test', random: () => 0.5, timeoutMs: 2000, ...extra })
    const endpointOf = (accountId: string) =>
      kit.db.webhookEndpoint.findFirstOrThrow({
        where: { accountId },
        select: { failures: true, pausedUntil: true, disabledAt: true, disabledReason: true },
      })

    it('is paused after 5 failures in a row, longer with each further one; a 2xx makes it healthy again', async () => {
      receiver.respond(reply(500))
      const s = await accountWithWebhook(receiver.url)
      for (let i = 0; i < 6; i++) await kit.gql(SEND, { input: { to: '+254712345678', message: `fail ${i}` } }, s.key)
      // One at a time, 15 s apart: five failures over a minute, the run that pauses an endpoint.
      for (let i = 0; i < 5; i++) {
        if (i) clock.advance(15_000)
        expect((await dispatch({ perEndpoint: 1 })).retrying).toBe(1)
      }
      expect(await endpointOf(s.account.id)).toEqual({
        failures: 5,
        pausedUntil: new Date(clock.now().getTime() + 5_000),
        disabledAt: null,
        disabledReason: null,
      })
      // Paused: its due deliveries are not claimed until the pause ends.
      expect((await dispatch()).claimed).toBe(0)
      clock.advance(5_000)
      receiver.respond(reply(200))
      expect((await dispatch()).delivered).toBeGreaterThan(0)
      expect(await endpointOf(s.account.id)).toEqual({ failures: 0, pausedUntil: null, disabledAt: null, disabledReason: null })
    })

    it('is disabled, with its reason, once every attempt has failed for 5 days; setting it again enables it', async () => {
      receiver.respond(reply(500))
      const s = await accountWithWebhook(receiver.url)
      const started = clock.now()
      await kit.gql(SEND, { input: { to: '+254712345678', message: 'days' } }, s.key)
      await dispatch()
      await kit.db.webhookEndpoint.updateMany({ where: { accountId: s.account.id }, data: { pausedUntil: null } })
      clock.advance(5 * 24 * 60 * 60_000)
      await kit.db.webhookDelivery.updateMany({
        where: { accountId: s.account.id, state: 'pending' },
        data: { nextAttemptAt: clock.now() },
      })
      await dispatch()
      const endpoint = await endpointOf(s.account.id)
      expect(endpoint.disabledAt).toEqual(clock.now())
      expect(endpoint.disabledReason).toBe(`every attempt failed since ${started.toISOString()}`)
      const read = await kit.gql(graphql(`{ webhook { enabled disabledReason } }`), {}, s.key)
      expect(read.webhook).toEqual({ enabled: false, disabledReason: `every attempt failed since ${started.toISOString()}` })
      receiver.respond(reply(200))
      await kit.gql(SET, { url: receiver.url }, s.key)
      expect(await endpointOf(s.account.id)).toEqual({ failures: 0, pausedUntil: null, disabledAt: null, disabledReason: null })
    })
  })
})
