import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { targets } from './kit/databases.js'
import { useKit, fixedClock, TestKit } from './kit/kit.js'
import { reply, startReceiver } from './kit/receiver.js'
import { claimDueDeliveries, dispatchBatch, LEASE_MS } from '../src/webhooks/dispatcher.js'
import { runWorkerTick } from '../src/process/worker.js'
import { RETRY_DELAYS_MS } from '../src/webhooks/retry-schedule.js'
import { sentMessageRow } from './kit/seed.js'
import { graphql } from '../src/graphql/typed-documents.js'

const SEND = `mutation($input: SendSmsInput!) { sendSms(input: $input) { id: uuid } }`
const SET = `mutation($url: String!) { setWebhook(url: $url) { secret webhook { url enabled } } }`

describe.each(targets)('webhooks on $name', (target) => {
  const clock = fixedClock('2026-05-01T10:00:00Z')
  const kit = useKit(target, { clock, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', SANDBOX_DELIVERY_DELAY_MS: '1000' } })
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  beforeAll(async () => {
    receiver = await startReceiver()
  })
  afterAll(() => receiver.close())
  // Each test looks at its own deliveries: park whatever an earlier test left pending.
  beforeEach(async () => {
    await kit.db.webhookDelivery.updateMany({ where: { state: 'pending' }, data: { state: 'failed' } })
  })

  async function accountWithWebhook() {
    const s = await kit.seed().account()
    await kit.db.account.update({ where: { id: s.account.id }, data: { creditBalance: 1_000_000n } })
    const set = await kit.gql(SET, { url: receiver.url }, s.key)
    return { ...s, secret: set.setWebhook.secret as string }
  }

  const dispatch = (extra: Partial<Parameters<typeof dispatchBatch>[1]> = {}) =>
    dispatchBatch(kit.deps, { owner: 'test', random: () => 0.5, timeoutMs: 1000, ...extra })

  it('pushes every status update, signed so the standardwebhooks library verifies it', async () => {
    receiver.respond(reply(200))
    receiver.received.length = 0
    const s = await accountWithWebhook()
    expect(s.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/)
    const id = (await kit.gql(SEND, { input: { to: '+254712345678', message: 'pushed' } }, s.key)).sendSms.id
    await runWorkerTick(kit.deps, 'test')
    clock.advance(1000)
    await runWorkerTick(kit.deps, 'test')
    expect(receiver.received.map((r) => JSON.parse(r.body).status)).toEqual(['SENT', 'DELIVRD'])
    const verifier = new Webhook(s.secret)
    // The library checks the timestamp against its own clock: give it ours.
    vi.useFakeTimers({ now: clock.now(), toFake: ['Date'] })
    for (const r of receiver.received) {
      const payload = verifier.verify(r.body, {
        'webhook-id': r.headers['webhook-id'] as string,
        'webhook-timestamp': r.headers['webhook-timestamp'] as string,
        'webhook-signature': r.headers['webhook-signature'] as string,
      }) as any
      expect(payload.reference).toBe(id)
      expect(r.headers['content-type']).toBe('application/json')
      expect(r.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/)
    }
    const last = JSON.parse(receiver.received[1]!.body)
    const polled = await kit.rest('GET', `/api/sms/delivery-report/${id}`, { key: s.key })
    expect(last).toEqual(polled.body)
    const tampered = receiver.received[1]!
    expect(() =>
      verifier.verify(tampered.body.replace('DELIVRD', 'UNDELIV'), {
        'webhook-id': tampered.headers['webhook-id'] as string,
        'webhook-timestamp': tampered.headers['webhook-timestamp'] as string,
        'webhook-signature': tampered.headers['webhook-signature'] as string,
      }),
    ).toThrow('No matching signature found')
    vi.useRealTimers()
  })

  it('retries a 500 on the schedule with the same webhook-id, logging each attempt', async () => {
    receiver.received.length = 0
    receiver.respond(reply(500))
    const s = await accountWithWebhook()
    await kit.gql(SEND, { input: { to: '+254712345678', message: 'retry me' } }, s.key)
    const first = await dispatch()
    expect(first).toMatchObject({ claimed: 1, retrying: 1 })
    let delivery = await kit.db.webhookDelivery.findFirstOrThrow({ where: { accountId: s.account.id } })
    expect(delivery.nextAttemptAt.getTime() - clock.now().getTime()).toBe(RETRY_DELAYS_MS[1])
    expect(await dispatch()).toMatchObject({ claimed: 0 })
    clock.advance(RETRY_DELAYS_MS[1]!)
    receiver.respond(reply(204))
    expect(await dispatch()).toMatchObject({ claimed: 1, delivered: 1 })
    const ids = receiver.received.map((r) => r.headers['webhook-id'])
    expect(ids).toHaveLength(2)
    expect(ids[0]).toBe(ids[1])
    const log = await kit.gql(graphql(`{ webhookDeliveries { id state attempts attemptLog { attempt statusCode error } } }`), {}, s.key)
    expect(log.webhookDeliveries).toEqual([
      {
        id: ids[0],
        state: 'DELIVERED',
        attempts: 2,
        attemptLog: [
          { attempt: 1, statusCode: 500, error: 'HTTP 500' },
          { attempt: 2, statusCode: 204, error: null },
        ],
      },
    ])
  })

  it('runs the whole schedule, then marks the delivery failed and keeps the report pollable', async () => {
    receiver.respond(reply(503))
    const s = await accountWithWebhook()
    const id = (await kit.gql(SEND, { input: { to: '+254712345678', message: 'never lands' } }, s.key)).sendSms.id
    const start = clock.now().getTime()
    const attemptTimes: number[] = []
    for (let i = 0; i < 8; i++) {
      const r = await dispatch({ random: () => Math.random() })
      expect(r.claimed, `attempt ${i + 1}`).toBe(1)
      attemptTimes.push(clock.now().getTime() - start)
      const d = await kit.db.webhookDelivery.findFirstOrThrow({ where: { accountId: s.account.id } })
      if (i < 7) {
        const wait = d.nextAttemptAt.getTime() - clock.now().getTime()
        expect(wait).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[i + 1]! * 0.9)
        expect(wait).toBeLessThanOrEqual(RETRY_DELAYS_MS[i + 1]! * 1.1)
        clock.set(d.nextAttemptAt)
      } else {
        expect(d).toMatchObject({ state: 'failed', attempts: 8, lastError: 'HTTP 503' })
      }
    }
    // About 27.6 hours from the first attempt to the last.
    expect(attemptTimes[7]! / 3_600_000).toBeGreaterThan(24)
    expect(await dispatch()).toMatchObject({ claimed: 0 })
    expect((await kit.rest('GET', `/api/sms/delivery-report/${id}`, { key: s.key })).body.id).toBe(id)
  })

  it('honours Retry-After on a 429', async () => {
    receiver.respond(reply(429, { 'Retry-After': '120' }))
    const s = await accountWithWebhook()
    await kit.gql(SEND, { input: { to: '+254712345678', message: 'slow down' } }, s.key)
    await dispatch()
    const d = await kit.db.webhookDelivery.findFirstOrThrow({ where: { accountId: s.account.id } })
    expect(d.nextAttemptAt.getTime() - clock.now().getTime()).toBe(120_000)
  })

  it('disables the endpoint on 410 Gone and fails the delivery', async () => {
    receiver.respond(reply(410))
    const s = await accountWithWebhook()
    await kit.gql(SEND, { input: { to: '+254712345678', message: 'gone' } }, s.key)
    expect(await dispatch()).toMatchObject({ failed: 1 })
    const hook = await kit.gql(graphql(`{ webhook { enabled disabledAt } }`), {}, s.key)
    expect(hook.webhook).toEqual({ enabled: false, disabledAt: clock.now().toISOString() })
    // No new deliveries while disabled; setting the URL again enables it.
    await kit.gql(SEND, { input: { to: '+254712345678', message: 'while disabled' } }, s.key)
    expect(await kit.db.webhookDelivery.count({ where: { accountId: s.account.id } })).toBe(1)
    const again = await kit.gql(SET, { url: receiver.url }, s.key)
    expect(again.setWebhook).toEqual({ secret: s.secret, webhook: { url: receiver.url, enabled: true } })
  })

  it('does not follow redirects', async () => {
    const target = await startReceiver(reply(200))
    receiver.respond(reply(302, { Location: target.url }))
    const s = await accountWithWebhook()
    await kit.gql(SEND, { input: { to: '+254712345678', message: 'redirected' } }, s.key)
    await dispatch()
    const d = await kit.db.webhookDelivery.findFirstOrThrow({ where: { accountId: s.account.id } })
    expect(d).toMatchObject({ state: 'pending', attempts: 1, lastError: 'redirect (302) not followed' })
    expect(target.received).toHaveLength(0)
    await target.close()
  })

  it('gives up on a receiver that hangs past the timeout, and on one that closes the connection', async () => {
    receiver.respond(() => undefined)
    const s = await accountWithWebhook()
    await kit.gql(SEND, { input: { to: '+254712345678', message: 'hang' } }, s.key)
    await dispatch({ timeoutMs: 300 })
    let d = await kit.db.webhookDelivery.findFirstOrThrow({ where: { accountId: s.account.id } })
    expect(d).toMatchObject({ state: 'pending', attempts: 1, lastError: 'timed out after 300 ms' })

    receiver.respond((req) => req.socket.destroy())
    clock.set(d.nextAttemptAt)
    await dispatch()
    d = await kit.db.webhookDelivery.findFirstOrThrow({ where: { accountId: s.account.id } })
    expect(d.attempts).toBe(2)
    expect(d.lastError).toMatch(/socket hang up|ECONNRESET/)
    clock.set(d.nextAttemptAt)
  })

  it('hands a claim held by a dead process to another after the lease, with the same webhook-id', async () => {
    receiver.received.length = 0
    receiver.respond(reply(200))
    const s = await accountWithWebhook()
    await kit.gql(SEND, { input: { to: '+254712345678', message: 'lease' } }, s.key)
    const dead = await claimDueDeliveries(kit.deps, 'dead-process', 10)
    expect(dead).toHaveLength(1)
    expect(await dispatch({ owner: 'alive' })).toMatchObject({ claimed: 0 })
    clock.advance(LEASE_MS + 1)
    expect(await dispatch({ owner: 'alive' })).toMatchObject({ claimed: 1, delivered: 1 })
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([dead[0]!.id])
  })

  it('records each delivery as its POST completes, not when the batch ends', async () => {
    // One slow receiver answer holds the batch open; everything answered before it must already
    // be recorded, so a process killed now would send again only what is still in flight.
    const s = await accountWithWebhook()
    const message = await kit.db.message.create({ data: sentMessageRow(s.account.id, clock.now()) })
    const ids = Array.from({ length: 12 }, (_, i) => `msg_${'e'.repeat(28)}${String(i).padStart(4, '0')}`)
    const endpoint = await kit.db.webhookEndpoint.findFirstOrThrow({ where: { accountId: s.account.id } })
    await kit.db.webhookDelivery.createMany({
      data: ids.map((id) => ({
        id,
        accountId: s.account.id,
        endpointId: endpoint.id,
        messageId: message.id,
        body: '{}',
        nextAttemptAt: clock.now(),
      })),
    })
    let release: () => void = () => undefined
    const held = new Promise<void>((r) => (release = r))
    receiver.respond((req, res) => {
      if (req.headers['webhook-id'] === ids[0]) void held.then(() => res.end('ok'))
      else res.end('ok')
    })
    // One endpoint's deliveries: lift its cap (PER_ENDPOINT) so the batch holds all twelve.
    const batch = dispatch({ concurrency: 3, timeoutMs: 10_000, perEndpoint: 12 })
    const deadline = Date.now() + 10_000
    while ((await kit.db.webhookDelivery.count({ where: { id: { in: ids }, state: 'delivered' } })) < 11 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20))
    }
    const midBatch = await kit.db.webhookDelivery.findMany({
      where: { id: { in: ids } },
      select: { id: true, state: true },
      orderBy: { id: 'asc' },
    })
    release()
    expect(await batch).toMatchObject({ claimed: 12, delivered: 12 })
    expect(midBatch.filter((d) => d.state === 'pending').map((d) => d.id)).toEqual([ids[0]])
    expect(await kit.db.webhookAttempt.count({ where: { deliveryId: { in: ids } } })).toBe(12)
    receiver.respond(reply(200))
  })

  it('redelivers on request with the same id and body', async () => {
    receiver.received.length = 0
    receiver.respond(reply(200))
    const s = await accountWithWebhook()
    await kit.gql(SEND, { input: { to: '+254712345678', message: 'again' } }, s.key)
    await dispatch()
    const d = await kit.db.webhookDelivery.findFirstOrThrow({ where: { accountId: s.account.id } })
    const res = await kit.gql(graphql(`mutation($id: ID!) { redeliverWebhook(id: $id) { id state attempts } }`), { id: d.id }, s.key)
    expect(res.redeliverWebhook).toEqual({ id: d.id, state: 'PENDING', attempts: 0 })
    await dispatch()
    expect(receiver.received).toHaveLength(2)
    expect(receiver.received[1]!.body).toBe(receiver.received[0]!.body)
    const other = await kit.seed().account()
    const foreign = await kit.graphql(graphql(`mutation($id: ID!) { redeliverWebhook(id: $id) { id } }`), { id: d.id }, other.key)
    expect(foreign.errors?.[0]?.extensions?.code).toBe('NOT_FOUND')
  })

  it('rotates the secret, removes the webhook, and refuses URLs that are not http(s)', async () => {
    const s = await accountWithWebhook()
    const rotated = await kit.gql(graphql(`mutation { rotateWebhookSecret { secret } }`), {}, s.key)
    expect(rotated.rotateWebhookSecret.secret).not.toBe(s.secret)
    for (const url of ['ftp://example.com/x', 'not a url', 'http://user:pw@example.com/']) {
      const res = await kit.graphql(SET, { url }, s.key)
      expect(res.errors?.[0]?.extensions?.code, url).toBe('VALIDATION_FAILED')
    }
    await kit.gql(graphql(`mutation { removeWebhook { deletedId } }`), {}, s.key)
    expect((await kit.gql(graphql(`{ webhook { url } }`), {}, s.key)).webhook).toBeNull()
    await kit.gql(SEND, { input: { to: '+254712345678', message: 'no hook' } }, s.key)
    expect(await kit.db.webhookDelivery.count({ where: { accountId: s.account.id } })).toBe(0)
  })
})

describe.each(targets)('webhook SSRF guard on $name', (target) => {
  const kit = useKit(target)

  it('refuses private addresses at registration and again at delivery time', async () => {
    const receiver = await startReceiver(reply(200))
    const s = await kit.seed().account()
    await kit.db.account.update({ where: { id: s.account.id }, data: { creditBalance: 100_000n } })
    for (const url of [receiver.url, 'http://localhost/x', 'http://10.0.0.1/x', 'http://[::1]/x', 'http://169.254.169.254/latest']) {
      const res = await kit.graphql(SET, { url }, s.key)
      expect(res.errors?.[0]?.extensions?.code, url).toBe('VALIDATION_FAILED')
    }
    // A URL that passed once (say, its DNS answer changed since) is checked again when sent.
    await kit.db.webhookEndpoint.create({ data: { accountId: s.account.id, url: receiver.url, secret: 'whsec_AAAA' } })
    await kit.gql(SEND, { input: { to: '+254712345678', message: 'ssrf' } }, s.key)
    await dispatchBatch(kit.deps, { owner: 'test' })
    const d = await kit.db.webhookDelivery.findFirstOrThrow({ where: { accountId: s.account.id } })
    expect(d.lastError).toBe('url must resolve to a public address')
    expect(receiver.received).toHaveLength(0)
    await receiver.close()
  })
})

// Two instances are two processes. In one test process, two better-sqlite3 connections block the
// event loop on each other's write lock, so this runs on PostgreSQL, the scale-out target.
describe.each(targets.filter((t) => t.name === 'postgresql'))('two dispatchers on one $name database', (target) => {
  it('deliver every update, none in flight twice at once', async () => {
    const clock = fixedClock('2026-05-01T10:00:00Z')
    const kit = await new TestKit(target, { clock, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } }).start()
    const second = await new TestKit(target, { clock, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } }).attach(kit.url)
    const inFlight = new Set<string>()
    let overlaps = 0
    const receiver = await startReceiver((req, res) => {
      const id = req.headers['webhook-id'] as string
      if (inFlight.has(id)) overlaps++
      inFlight.add(id)
      setTimeout(() => {
        inFlight.delete(id)
        res.end('ok')
      }, 2)
    })
    try {
      const s = await kit.seed().account()
      const endpoint = await kit.db.webhookEndpoint.create({ data: { accountId: s.account.id, url: receiver.url, secret: 'whsec_AAAA' } })
      const message = await kit.db.message.create({ data: sentMessageRow(s.account.id, clock.now()) })
      const total = 300
      await kit.db.webhookDelivery.createMany({
        data: Array.from({ length: total }, (_, i) => ({
          id: `msg_${String(i).padStart(32, '0')}`,
          accountId: s.account.id,
          endpointId: endpoint.id,
          messageId: message.id,
          body: '{}',
          nextAttemptAt: clock.now(),
        })),
      })
      const loop = async (deps: typeof kit.deps, owner: string) => {
        let delivered = 0
        for (;;) {
          const r = await dispatchBatch(deps, { owner, batchSize: 25, concurrency: 10 })
          delivered += r.delivered
          if (r.claimed === 0 && (await kit.db.webhookDelivery.count({ where: { state: 'pending' } })) === 0) return delivered
        }
      }
      const [a, b] = await Promise.all([loop(kit.deps, 'one'), loop(second.deps, 'two')])
      expect(a + b).toBe(total)
      expect(a).toBeGreaterThan(0)
      expect(b).toBeGreaterThan(0)
      expect(overlaps).toBe(0)
      const ids = receiver.received.map((r) => r.headers['webhook-id'])
      expect(new Set(ids).size).toBe(total)
      expect(ids).toHaveLength(total)
      expect(await kit.db.webhookDelivery.count({ where: { state: 'delivered' } })).toBe(total)
    } finally {
      await receiver.close()
      await second.detach()
      await kit.stop()
    }
  })
})
