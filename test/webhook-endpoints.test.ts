// Several webhook endpoints per account (issue 54, items 3 and 4): subscriptions, secrets, the
// Standard Webhooks envelope, recovery of failed deliveries, per-endpoint fairness, and what the
// attempt log keeps. Real receivers (test/kit/receiver.ts), both databases.
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import type { ServerResponse } from 'node:http'
import { Webhook } from 'standardwebhooks'
import { targets } from './kit/databases.js'
import { useKit, fixedClock } from './kit/kit.js'
import { reply, startReceiver, type Received } from './kit/receiver.js'
import { createDispatcher, dispatchBatch, MAX_LOGGED_BODY_BYTES } from '../src/webhooks/dispatcher.js'
import { createEndpoint, MAX_ENDPOINTS_PER_ACCOUNT } from '../src/webhooks/endpoints.js'
import { runWorkerTick } from '../src/process/worker.js'
import { sentMessageRow } from './kit/seed.js'

const SEND = `mutation($input: SendSmsInput!) { sendSms(input: $input) { id: uuid } }`
const CREATE = `mutation($input: WebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret webhook { id url eventTypes payloadFormat } } }`
const SET = `mutation($url: String!) { setWebhook(url: $url) { secret webhook { id } } }`
const TEST_EVENT = `mutation($endpointId: ID) { sendTestWebhook(endpointId: $endpointId) { id eventType } }`
const RECOVER = `mutation($since: DateTime!, $endpointId: ID) { recoverFailedWebhookDeliveries(since: $since, endpointId: $endpointId) { recovered more deliveryIds } }`
const LIST = `{ webhookEndpoints { id url eventTypes payloadFormat } webhook { id } }`

describe.each(targets)('webhook endpoints on $name', (target) => {
  const clock = fixedClock('2026-05-01T10:00:00Z')
  const kit = useKit(target, { clock, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', SANDBOX_DELIVERY_DELAY_MS: '1000' } })
  let one: Awaited<ReturnType<typeof startReceiver>>
  let two: Awaited<ReturnType<typeof startReceiver>>
  beforeAll(async () => {
    one = await startReceiver()
    two = await startReceiver()
  })
  afterAll(async () => {
    await one.close()
    await two.close()
  })
  // Each test looks at its own deliveries: park whatever an earlier test left pending.
  beforeEach(async () => {
    await kit.db.webhookDelivery.updateMany({ where: { state: 'pending' }, data: { state: 'delivered' } })
    for (const r of [one, two]) {
      r.received.length = 0
      r.respond(reply(200))
    }
  })

  async function funded() {
    const s = await kit.seed().account()
    await kit.db.account.update({ where: { id: s.account.id }, data: { creditBalance: 1_000_000n } })
    return s
  }

  const dispatch = () => dispatchBatch(kit.deps, { owner: 'test', random: () => 0.5, timeoutMs: 2000 })

  /** Verifies a received request with a secret (standardwebhooks, at our clock); throws when it does not match. */
  function verify(secret: string, r: Received) {
    vi.useFakeTimers({ now: clock.now(), toFake: ['Date'] })
    try {
      return new Webhook(secret).verify(r.body, {
        'webhook-id': r.headers['webhook-id'] as string,
        'webhook-timestamp': r.headers['webhook-timestamp'] as string,
        'webhook-signature': r.headers['webhook-signature'] as string,
      })
    } finally {
      vi.useRealTimers()
    }
  }

  it('two endpoints with different subscriptions get exactly their events, each signed with its own secret', async () => {
    const s = await funded()
    const reports = await kit.gql(CREATE, { input: { url: one.url, eventTypes: ['MESSAGE_STATUS'] } }, s.key)
    const tests = await kit.gql(CREATE, { input: { url: two.url, eventTypes: ['TEST'], payloadFormat: 'STANDARD' } }, s.key)
    expect(reports.createWebhookEndpoint.webhook).toMatchObject({ eventTypes: ['MESSAGE_STATUS'], payloadFormat: 'LEGACY' })
    expect(tests.createWebhookEndpoint.webhook).toMatchObject({ eventTypes: ['TEST'], payloadFormat: 'STANDARD' })
    expect(reports.createWebhookEndpoint.secret).not.toBe(tests.createWebhookEndpoint.secret)
    const listed = await kit.gql(LIST, {}, s.key)
    expect(listed.webhookEndpoints.map((e: { id: string }) => e.id)).toEqual([
      reports.createWebhookEndpoint.webhook.id,
      tests.createWebhookEndpoint.webhook.id,
    ])
    // The oldest is the default.
    expect(listed.webhook.id).toBe(reports.createWebhookEndpoint.webhook.id)

    const id = (await kit.gql(SEND, { input: { to: '+254712345678', message: 'two hooks' } }, s.key)).sendSms.id
    await runWorkerTick(kit.deps, 'test')
    clock.advance(1000)
    await runWorkerTick(kit.deps, 'test')
    const test = await kit.gql(TEST_EVENT, { endpointId: tests.createWebhookEndpoint.webhook.id }, s.key)
    expect(test.sendTestWebhook.eventType).toBe('TEST')
    // An endpoint that did not subscribe to test events is not sent one.
    const refused = await kit.graphql(TEST_EVENT, { endpointId: reports.createWebhookEndpoint.webhook.id }, s.key)
    expect(refused.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED')
    await dispatch()

    expect(one.received.map((r) => JSON.parse(r.body).status)).toEqual(['SENT', 'DELIVRD'])
    expect(two.received).toHaveLength(1)
    for (const r of one.received) {
      expect((verify(reports.createWebhookEndpoint.secret, r) as { reference: string }).reference).toBe(id)
      expect(() => verify(tests.createWebhookEndpoint.secret, r)).toThrow('No matching signature found')
    }
    const envelope = verify(tests.createWebhookEndpoint.secret, two.received[0]!) as Record<string, any>
    expect(envelope).toEqual({
      type: 'test',
      timestamp: clock.now().toISOString(),
      data: { test: true, id: test.sendTestWebhook.id, message: expect.any(String), sentAt: clock.now().toISOString() },
    })
    expect(() => verify(reports.createWebhookEndpoint.secret, two.received[0]!)).toThrow('No matching signature found')
  })

  it('the envelope endpoint gets {type, timestamp, data} around the exact report the legacy endpoint gets', async () => {
    const s = await funded()
    await kit.gql(SET, { url: one.url }, s.key)
    await kit.gql(CREATE, { input: { url: two.url, eventTypes: ['MESSAGE_STATUS'], payloadFormat: 'STANDARD' } }, s.key)
    const id = (await kit.gql(SEND, { input: { to: '+254712345678', message: 'envelope' } }, s.key)).sendSms.id
    const sentAt = clock.now().toISOString()
    await runWorkerTick(kit.deps, 'test')
    const polled = (await kit.rest('GET', `/api/sms/delivery-report/${id}`, { key: s.key })).body
    expect(one.received.map((r) => JSON.parse(r.body))).toEqual([polled])
    expect(two.received.map((r) => JSON.parse(r.body))).toEqual([{ type: 'message.status', timestamp: sentAt, data: polled }])
    // One delivery each, each with its own webhook-id.
    expect(one.received[0]!.headers['webhook-id']).not.toBe(two.received[0]!.headers['webhook-id'])
  })

  it('recovers exactly the deliveries that failed since T, through the outbox, numbering their attempts on', async () => {
    const s = await funded()
    const other = await funded()
    const endpoint = await createEndpoint(kit.deps, s.account.id, { url: one.url })
    const disabled = await createEndpoint(kit.deps, s.account.id, { url: two.url })
    await kit.db.webhookEndpoint.update({
      where: { id: disabled.id },
      data: { disabledAt: clock.now(), disabledReason: 'it answered 410 Gone' },
    })
    const foreign = await createEndpoint(kit.deps, other.account.id, { url: one.url })
    const message = await kit.db.message.create({ data: sentMessageRow(s.account.id, clock.now()) })
    const since = new Date(clock.now().getTime() - 3_600_000)
    const before = new Date(since.getTime() - 1000)
    const after = new Date(since.getTime() + 1000)
    let n = 0
    const delivery = async (accountId: string, endpointId: string, state: string, finishedAt: Date | null) => {
      const id = `msg_${s.account.id.replaceAll('-', '').slice(0, 24)}${String(n++).padStart(8, '0')}`
      await kit.db.webhookDelivery.create({
        data: {
          id,
          accountId,
          endpointId,
          messageId: accountId === s.account.id ? message.id : null,
          body: JSON.stringify({ n }),
          state,
          attempts: state === 'failed' ? 8 : 1,
          attemptsTotal: state === 'failed' ? 8 : 1,
          nextAttemptAt: before,
          finishedAt,
          createdAt: before,
        },
      })
      return id
    }
    const wanted = [await delivery(s.account.id, endpoint.id, 'failed', since), await delivery(s.account.id, endpoint.id, 'failed', after)]
    const left = {
      failedBefore: await delivery(s.account.id, endpoint.id, 'failed', before),
      delivered: await delivery(s.account.id, endpoint.id, 'delivered', after),
      ofDisabled: await delivery(s.account.id, disabled.id, 'failed', after),
      ofOther: await delivery(other.account.id, foreign.id, 'failed', after),
    }
    const result = await kit.gql(RECOVER, { since: since.toISOString() }, s.key)
    expect(result.recoverFailedWebhookDeliveries).toEqual({ recovered: 2, more: false, deliveryIds: wanted })
    // Back in the outbox: pending from now, sent by the dispatcher like any other.
    const states = await kit.db.webhookDelivery.findMany({ where: { id: { in: [...wanted, ...Object.values(left)] } } })
    const stateOf = Object.fromEntries(states.map((d) => [d.id, d.state]))
    expect(wanted.map((id) => stateOf[id])).toEqual(['pending', 'pending'])
    expect(Object.values(left).map((id) => stateOf[id])).toEqual(['failed', 'delivered', 'failed', 'failed'])
    await dispatch()
    expect(one.received.map((r) => r.headers['webhook-id']).sort()).toEqual([...wanted].sort())
    const attempts = await kit.db.webhookAttempt.findMany({ where: { deliveryId: { in: wanted } } })
    expect(attempts.map((a) => a.attempt)).toEqual([9, 9])
    // Nothing failed since T any more: a second call recovers nothing.
    expect((await kit.gql(RECOVER, { since: since.toISOString() }, s.key)).recoverFailedWebhookDeliveries.recovered).toBe(0)
  })

  it('numbers the attempts of a replayed delivery on (#1, #2), and logs what the receiver answered, bounded', async () => {
    const s = await funded()
    await kit.gql(SET, { url: one.url }, s.key)
    const long = 'é'.repeat(3000) // 6,000 bytes of UTF-8
    one.respond((_req, res) => {
      res.writeHead(500, { 'x-reason': 'maintenance', 'content-type': 'text/plain' })
      res.end(long)
    })
    await kit.gql(SEND, { input: { to: '+254712345678', message: 'logged' } }, s.key)
    await dispatch()
    const d = await kit.db.webhookDelivery.findFirstOrThrow({ where: { accountId: s.account.id } })
    one.respond((_req, res) => {
      res.writeHead(200, { 'x-reason': 'fine' })
      res.end('thanks')
    })
    await kit.gql(`mutation($id: ID!) { redeliverWebhook(id: $id) { id } }`, { id: d.id }, s.key)
    await dispatch()
    const log = await kit.gql(
      `{ webhookDeliveries { id body attemptLog { attempt statusCode requestHeaders responseHeaders responseBody responseTruncated } } }`,
      {},
      s.key,
    )
    const [delivery] = log.webhookDeliveries
    expect(delivery.body).toBe(one.received[0]!.body)
    const [first, second] = delivery.attemptLog
    expect(delivery.attemptLog.map((a: { attempt: number }) => a.attempt)).toEqual([1, 2])
    expect(first).toMatchObject({ statusCode: 500, responseTruncated: true })
    expect(first.responseHeaders).toContain('x-reason: maintenance')
    expect(Buffer.byteLength(first.responseBody)).toBeLessThanOrEqual(MAX_LOGGED_BODY_BYTES + 2)
    expect(long.startsWith(first.responseBody.replace(/\uFFFD$/, ''))).toBe(true)
    expect(first.responseBody.length).toBeGreaterThan(2000)
    expect(first.requestHeaders).toContain(`webhook-id: ${d.id}`)
    expect(second).toMatchObject({ statusCode: 200, responseBody: 'thanks', responseTruncated: false })
    expect(second.responseHeaders).toContain('x-reason: fine')
  })

  it('a failing endpoint does not delay another endpoint of the same account', async () => {
    const s = await funded()
    const held: ServerResponse[] = []
    one.respond((_req, res) => void held.push(res))
    const stuck = await createEndpoint(kit.deps, s.account.id, { url: one.url })
    const healthy = await createEndpoint(kit.deps, s.account.id, { url: two.url })
    const message = await kit.db.message.create({ data: sentMessageRow(s.account.id, clock.now()) })
    // The stuck endpoint's 30 are older: a claim by age alone would fill every slot with them.
    const rows = (endpointId: string, count: number, at: Date, tag: string) =>
      Array.from({ length: count }, (_, i) => ({
        id: `msg_${tag}${s.account.id.replaceAll('-', '').slice(0, 20)}${String(i).padStart(8, '0')}`,
        accountId: s.account.id,
        endpointId,
        messageId: message.id,
        body: '{}',
        nextAttemptAt: at,
        createdAt: at,
      }))
    await kit.db.webhookDelivery.createMany({ data: rows(stuck.id, 30, new Date(clock.now().getTime() - 60_000), 'aaaa') })
    await kit.db.webhookDelivery.createMany({ data: rows(healthy.id, 5, clock.now(), 'bbbb') })
    const dispatcher = createDispatcher(kit.deps, { owner: 'one', concurrency: 10, perEndpoint: 5, timeoutMs: 60_000 })
    try {
      await dispatcher.pump()
      // Every delivery of the healthy endpoint arrives while the stuck one's are still unanswered.
      await expect.poll(() => two.received.length, { timeout: 20_000 }).toBe(5)
      expect(held.length).toBeLessThanOrEqual(5)
      // Recorded once each answer is in (the receiver has the POST before the dispatcher commits it).
      await expect.poll(() => kit.db.webhookDelivery.count({ where: { endpointId: healthy.id, state: 'delivered' } })).toBe(5)
    } finally {
      one.respond(reply(200))
      for (const res of held) res.end('ok')
      await dispatcher.stop()
    }
  })

  it('refuses a bad URL, an unknown event type, no event type, and a new endpoint over the cap, changing nothing', async () => {
    const s = await funded()
    const count = () => kit.db.webhookEndpoint.count({ where: { accountId: s.account.id } })
    for (const url of ['ftp://example.com/x', 'not a url', 'http://user:pw@example.com/']) {
      const res = await kit.graphql(CREATE, { input: { url } }, s.key)
      expect(res.errors?.[0]?.extensions?.code, url).toBe('VALIDATION_FAILED')
    }
    const unknown = await kit.graphql(CREATE, { input: { url: one.url, eventTypes: ['SMS_SENT'] } }, s.key)
    expect(unknown.errors?.[0]?.message).toMatch(/SMS_SENT/)
    await expect(
      createEndpoint(kit.deps, s.account.id, { url: one.url, eventTypes: ['message.status', 'sms.sent'] }),
    ).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ field: 'eventTypes[1]', message: 'unknown event type; one of message.status, test' }],
    })
    const none = await kit.graphql(CREATE, { input: { url: one.url, eventTypes: [] } }, s.key)
    expect(none.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'eventTypes' }] })
    expect(await count()).toBe(0)

    const ids: string[] = []
    for (let i = 0; i < MAX_ENDPOINTS_PER_ACCOUNT; i++)
      ids.push((await kit.gql(CREATE, { input: { url: `${one.url}/${i}` } }, s.key)).createWebhookEndpoint.webhook.id)
    const over = await kit.graphql(CREATE, { input: { url: one.url } }, s.key)
    expect(over.errors?.[0]?.extensions).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ field: 'url', message: `an account has at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints` }],
    })
    expect(await count()).toBe(MAX_ENDPOINTS_PER_ACCOUNT)

    // An update with a bad part changes none of it; another account's endpoint answers like a missing one.
    const UPDATE = `mutation($id: ID!, $input: UpdateWebhookEndpointInput!) { updateWebhookEndpoint(id: $id, input: $input) { url eventTypes } }`
    const bad = await kit.graphql(UPDATE, { id: ids[0], input: { url: 'ftp://example.com/x', eventTypes: ['TEST'] } }, s.key)
    expect(bad.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED')
    const unchanged = await kit.db.webhookEndpoint.findUniqueOrThrow({ where: { id: ids[0]! } })
    expect(unchanged).toMatchObject({ url: `${one.url}/0`, eventTypes: 'message.status test' })
    const stranger = await funded()
    for (const [document, variables] of [
      [UPDATE, { id: ids[0], input: { eventTypes: ['TEST'] } }],
      [`mutation($id: ID!) { deleteWebhookEndpoint(id: $id) { deletedId } }`, { id: ids[0] }],
      [TEST_EVENT, { endpointId: ids[0] }],
      [RECOVER, { since: clock.now().toISOString(), endpointId: ids[0] }],
    ] as const) {
      const res = await kit.graphql(document, variables, stranger.key)
      expect(res.errors?.[0]?.extensions?.code, document).toBe('NOT_FOUND')
    }
    expect(await count()).toBe(MAX_ENDPOINTS_PER_ACCOUNT)
    const future = await kit.graphql(RECOVER, { since: new Date(clock.now().getTime() + 60_000).toISOString() }, s.key)
    expect(future.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'since' }] })

    // Deleting one makes room again.
    await kit.gql(`mutation($id: ID!) { deleteWebhookEndpoint(id: $id) { deletedId } }`, { id: ids[3] }, s.key)
    await kit.gql(CREATE, { input: { url: one.url } }, s.key)
    expect(await count()).toBe(MAX_ENDPOINTS_PER_ACCOUNT)
  })
})
