import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit, fixedClock } from './kit/kit.js'
import { createSandboxGateway } from '../src/sms/sandbox-gateway.js'
import { TransientGatewayError, type SmsGateway } from '../src/sms/gateway.js'
import { defaultSender, sendSms } from '../src/sms/send-sms.js'
import { sweepSubmissions } from '../src/sms/submit-sms.js'
import { applyDueCarrierEvents } from '../src/sms/carrier-events.js'
import { recordCarrierStatus } from '../src/sms/record-status.js'
import type { Seeded } from './kit/seed.js'

const SEND = `mutation($input: SendSmsInput!) { sendSms(input: $input) { id: uuid status done creditsDeducted carrierErrorCode } }`
const LEASE = 2_000
const DEADLINE = 60_000

/**
 * The real sandbox behind a switch: `accept` passes through; `refuse` and `transient` throw;
 * `crash` lets the sandbox accept and then never answers, like a process killed before it
 * recorded the answer (and `stall` never reaches the sandbox at all).
 */
function switchableGateway() {
  const sandbox = createSandboxGateway({ delayMs: 1000 })
  const control = { mode: 'accept' as 'accept' | 'refuse' | 'transient' | 'crash' | 'stall', calls: [] as string[] }
  const gateway: SmsGateway = {
    name: 'sandbox',
    sandbox: true,
    async submit(message, context) {
      control.calls.push(message.id)
      switch (control.mode) {
        case 'refuse':
          throw new Error('carrier says no')
        case 'transient':
          throw new TransientGatewayError('bind lost')
        case 'stall':
          return new Promise(() => undefined)
        case 'crash':
          await sandbox.submit(message, context)
          return new Promise(() => undefined)
        default:
          return sandbox.submit(message, context)
      }
    },
  }
  return { gateway, control }
}

describe.each(targets)('SMS submission outbox on $name', (target) => {
  const clock = fixedClock('2026-04-02T09:00:00Z')
  const { gateway, control } = switchableGateway()
  const kit = useKit(target, {
    clock,
    gateway,
    env: { WORKER_LEASE_MS: String(LEASE), SMS_SUBMIT_DEADLINE_MS: String(DEADLINE), SANDBOX_DELIVERY_DELAY_MS: '1000' },
  })

  async function funded(): Promise<Seeded> {
    const s = await kit.seed().account()
    await kit.db.account.update({ where: { id: s.account.id }, data: { creditBalance: 100_000n, pricePerPage: 10_000n } })
    return s
  }
  const balance = async (s: Seeded) => (await kit.db.account.findUniqueOrThrow({ where: { id: s.account.id } })).creditBalance
  const state = (id: string) => kit.db.smsSubmission.findUniqueOrThrow({ where: { messageId: id } })
  const history = async (id: string) =>
    (await kit.db.messageStatusUpdate.findMany({ where: { messageId: id }, orderBy: { createdAt: 'asc' } })).map((u) => u.status)
  /** Starts a send whose gateway never answers (a process dying mid-submit) and returns its message id. */
  async function sendThatDies(s: Seeded, key: string, mode: 'crash' | 'stall') {
    control.mode = mode
    void sendSms(kit.deps, s.account.id, { to: '+254712345678', message: 'in flight' }, { idempotencyKey: key })
    for (let i = 0; i < 200; i++) {
      const m = await kit.db.message.findFirst({ where: { accountId: s.account.id, idempotencyKey: key } })
      if (m && control.calls.includes(m.id)) {
        // The sandbox's own write must have landed before the "crash".
        if (mode === 'stall' || (await kit.db.scheduledCarrierEvent.count({ where: { messageId: m.id } }))) return m.id
      }
      await new Promise((r) => setTimeout(r, 10))
    }
    throw new Error('the send never reached the gateway')
  }

  it('answers SENT at once and closes the submission', async () => {
    control.mode = 'accept'
    const s = await funded()
    const { sendSms: sent } = await kit.gql(SEND, { input: { to: '+254712345678', message: 'hi' } }, s.key)
    expect(sent).toMatchObject({ status: 'SENT', done: false, creditsDeducted: '1.0000' })
    expect(await state(sent.id)).toMatchObject({ state: 'submitted', attempts: 1, leaseUntil: null })
    expect(await balance(s)).toBe(90_000n)
  })

  it('writes the sends of one turn in one transaction; one that fails there is written again alone and fails alone', async () => {
    control.mode = 'accept'
    const s = await funded()
    const poor = await kit.seed().account()
    await kit.db.account.update({ where: { id: poor.account.id }, data: { creditBalance: 0n } })
    const [paid, unpaid, missing] = await Promise.allSettled([
      sendSms(kit.deps, s.account.id, { to: '+254712345678', message: 'one' }),
      sendSms(kit.deps, poor.account.id, { to: '+254712345678', message: 'two' }),
      sendSms(kit.deps, randomUUID(), { to: '+254712345678', message: 'three' }),
    ])
    expect(paid).toMatchObject({ status: 'fulfilled', value: { status: 'SENT' } })
    expect(unpaid).toMatchObject({ status: 'fulfilled', value: { status: 'NOCREDT' } })
    expect(missing).toMatchObject({ status: 'rejected', reason: { code: 'NOT_FOUND' } })
    expect(await balance(s)).toBe(90_000n)
    expect(await balance(poor)).toBe(0n)
    const written = await kit.db.message.findMany({ where: { text: { in: ['one', 'two', 'three'] } }, orderBy: { text: 'asc' } })
    expect(written.map((m) => [m.text, m.status, m.creditsDeducted])).toEqual([
      ['one', 'SENT', 10_000n],
      ['two', 'NOCREDT', 0n],
    ])
    expect(await history((paid as PromiseFulfilledResult<{ id: string }>).value.id)).toEqual(['PENDING', 'SENT'])
  })

  it("charges one account's sends of one turn together when its balance covers them, else one by one as far as it goes", async () => {
    control.mode = 'accept'
    const rich = await funded()
    const short = await funded()
    await kit.db.account.update({ where: { id: short.account.id }, data: { creditBalance: 20_000n } })
    const texts = ['rich one', 'rich two', 'rich three', 'short one', 'short two', 'short three']
    const sent = await Promise.all(
      texts.map((message) => sendSms(kit.deps, (message.startsWith('rich') ? rich : short).account.id, { to: '+254712345678', message })),
    )
    expect(sent.map((s) => s.status)).toEqual(['SENT', 'SENT', 'SENT', 'SENT', 'SENT', 'NOCREDT'])
    expect(await balance(rich)).toBe(70_000n)
    expect(await balance(short)).toBe(0n)
    const written = await kit.db.message.findMany({ where: { text: { in: texts } }, select: { text: true, creditsDeducted: true } })
    expect(new Map(written.map((m) => [m.text, m.creditsDeducted]))).toEqual(
      new Map(texts.map((text) => [text, text === 'short three' ? 0n : 10_000n])),
    )
  })

  it("signs a send without a sender with its account's name, as defaultSender makes it, alone and in a group", async () => {
    control.mode = 'accept'
    for (const name of ['Ünïcode & Sons — Ltd. 2026', '  ¡¿!!  ', 'a  b.c  d  e  f  g', 'Plain']) {
      const s = await funded()
      await kit.db.account.update({ where: { id: s.account.id }, data: { name } })
      const alone = await sendSms(kit.deps, s.account.id, { to: '+254712345678', message: 'alone' })
      const group = await Promise.all([1, 2].map(() => sendSms(kit.deps, s.account.id, { to: '+254712345678', message: 'group' })))
      const written = await kit.db.message.findMany({ where: { id: { in: [alone.id, ...group.map((g) => g.id)] } } })
      expect(written.map((m) => m.sender)).toEqual([defaultSender(name), defaultSender(name), defaultSender(name)])
    }
  })

  it('refunds a refusal at once: FAILED, credits back, submission refunded', async () => {
    control.mode = 'refuse'
    const s = await funded()
    const { sendSms: sent } = await kit.gql(SEND, { input: { to: '+254712345678', message: 'no' } }, s.key)
    expect(sent).toMatchObject({ status: 'FAILED', done: true, creditsDeducted: '0.0000', carrierErrorCode: 'SUBMIT' })
    expect(await state(sent.id)).toMatchObject({ state: 'refunded', lastError: 'carrier says no' })
    expect(await balance(s)).toBe(100_000n)
    control.mode = 'accept'
  })

  it('answers PENDING on a transient failure, retries with backoff and ends SENT, charged once', async () => {
    control.mode = 'transient'
    const s = await funded()
    const { sendSms: sent } = await kit.gql(SEND, { input: { to: '+254712345678', message: 'later' } }, s.key)
    expect(sent).toMatchObject({ status: 'PENDING', done: false, creditsDeducted: '1.0000' })
    expect(await state(sent.id)).toMatchObject({ state: 'pending', attempts: 1, leaseOwner: null, lastError: 'bind lost' })
    // Not due before the backoff (1 s after the first failure).
    expect((await sweepSubmissions(kit.deps, 'w1')).claimed).toBe(0)
    clock.advance(1000)
    expect(await sweepSubmissions(kit.deps, 'w1')).toMatchObject({ claimed: 1, retrying: 1 })
    expect((await state(sent.id)).nextAttemptAt.getTime()).toBe(clock.now().getTime() + 2000)
    control.mode = 'accept'
    clock.advance(2000)
    expect(await sweepSubmissions(kit.deps, 'w1')).toMatchObject({ claimed: 1, sent: 1 })
    expect(await state(sent.id)).toMatchObject({ state: 'submitted', attempts: 3 })
    expect(await history(sent.id)).toEqual(['PENDING', 'SENT'])
    expect(await balance(s)).toBe(90_000n)
  })

  it('refunds exactly once past the deadline, even with two sweepers at once', async () => {
    control.mode = 'transient'
    const s = await funded()
    const { sendSms: sent } = await kit.gql(SEND, { input: { to: '+254712345678', message: 'never' } }, s.key)
    clock.advance(DEADLINE)
    const [a, b] = await Promise.all([sweepSubmissions(kit.deps, 'w1'), sweepSubmissions(kit.deps, 'w2')])
    expect(a.timedOut + b.timedOut).toBe(1)
    clock.advance(LEASE + 1)
    expect((await sweepSubmissions(kit.deps, 'w1')).claimed).toBe(0)
    const message = await kit.db.message.findUniqueOrThrow({ where: { id: sent.id } })
    expect(message).toMatchObject({ status: 'FAILED', done: true, carrierErrorCode: 'SUBMIT_TIMEOUT', creditsDeducted: 0n })
    expect(await state(sent.id)).toMatchObject({ state: 'refunded' })
    expect(await balance(s)).toBe(100_000n)
    expect(await history(sent.id)).toEqual(['PENDING', 'FAILED'])
    // A carrier report arriving after the refund cannot undo it.
    const late = await recordCarrierStatus(kit.deps, { messageId: sent.id, status: 'DELIVRD' })
    expect(late.applied).toBe(false)
    expect(await kit.db.message.findUniqueOrThrow({ where: { id: sent.id } })).toMatchObject({ status: 'FAILED' })
    control.mode = 'accept'
  })

  it('resubmits a send that died after the gateway accepted it: same gateway id, one carrier event, one report', async () => {
    const s = await funded()
    const id = await sendThatDies(s, 'died-after-accept', 'crash')
    expect(await kit.db.message.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: 'PENDING', gatewayMessageId: null })
    control.mode = 'accept'
    // Held by the dead request until its lease has passed.
    expect((await sweepSubmissions(kit.deps, 'w1')).claimed).toBe(0)
    clock.advance(LEASE + 1)
    expect(await sweepSubmissions(kit.deps, 'w1')).toMatchObject({ claimed: 1, sent: 1 })
    expect(await kit.db.scheduledCarrierEvent.count({ where: { messageId: id } })).toBe(1)
    expect(await kit.db.message.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: 'SENT', gatewayMessageId: `sandbox-${id}` })
    await applyDueCarrierEvents(kit.deps, 'w1')
    expect(await history(id)).toEqual(['PENDING', 'SENT', 'DELIVRD'])
    expect(await balance(s)).toBe(90_000n)
  })

  it('keeps the carrier report when it came before the resubmission, and never refunds a delivered message', async () => {
    const s = await funded()
    const id = await sendThatDies(s, 'reported-first', 'crash')
    clock.advance(1000)
    expect(await applyDueCarrierEvents(kit.deps, 'w1')).toBeGreaterThanOrEqual(1)
    control.mode = 'accept'
    clock.advance(LEASE + 1)
    expect(await sweepSubmissions(kit.deps, 'w1')).toMatchObject({ claimed: 1, sent: 1 })
    expect(await kit.db.scheduledCarrierEvent.count({ where: { messageId: id } })).toBe(0)
    expect(await kit.db.message.findUniqueOrThrow({ where: { id } })).toMatchObject({
      status: 'DELIVRD',
      done: true,
      gatewayMessageId: `sandbox-${id}`,
    })
    expect(await history(id)).toEqual(['PENDING', 'DELIVRD'])

    // The same crash, but nobody resubmits before the deadline: the report shows it was sent.
    const other = await sendThatDies(s, 'reported-then-deadline', 'crash')
    clock.advance(1000)
    await applyDueCarrierEvents(kit.deps, 'w1')
    control.mode = 'accept'
    clock.advance(DEADLINE)
    expect(await sweepSubmissions(kit.deps, 'w1')).toMatchObject({ claimed: 1, timedOut: 0 })
    expect(await kit.db.scheduledCarrierEvent.count({ where: { messageId: other } })).toBe(0)
    expect(await state(other)).toMatchObject({ state: 'submitted' })
    expect(await kit.db.message.findUniqueOrThrow({ where: { id: other } })).toMatchObject({
      status: 'DELIVRD',
      creditsDeducted: 10_000n,
      gatewayMessageId: `sandbox-${other}`,
    })
    expect(await balance(s)).toBe(80_000n)
    control.mode = 'accept'
  })

  it('refunds a send that died before reaching the gateway once the deadline has passed', async () => {
    const s = await funded()
    const id = await sendThatDies(s, 'died-before-submit', 'stall')
    control.mode = 'transient'
    clock.advance(LEASE + 1)
    expect(await sweepSubmissions(kit.deps, 'w1')).toMatchObject({ claimed: 1, retrying: 1 })
    clock.advance(DEADLINE)
    expect(await sweepSubmissions(kit.deps, 'w1')).toMatchObject({ claimed: 1, timedOut: 1 })
    expect(await kit.db.message.findUniqueOrThrow({ where: { id } })).toMatchObject({
      status: 'FAILED',
      carrierErrorCode: 'SUBMIT_TIMEOUT',
    })
    expect(await balance(s)).toBe(100_000n)
    control.mode = 'accept'
  })

  // Over HTTP the Idempotency-Key layer (src/idempotency) answers first: byte-equal repeats are
  // replayed, in-flight duplicates are 409, a malformed key is 400. sendSms keeps the key on the
  // message as well, so a retry after a crash that lost the layer's record still pays once.
  describe('Idempotency-Key', () => {
    const send = (s: Seeded, key: string, input: Record<string, unknown>) =>
      kit.rest('POST', '/graphql', { key: s.key, headers: { 'idempotency-key': key }, body: { query: SEND, variables: { input } } })

    it('answers the first message to a retry with the same key and charges once', async () => {
      control.mode = 'accept'
      const s = await funded()
      const first = await send(s, 'order-1', { to: '+254712345678', message: 'once' })
      const again = await send(s, 'order-1', { to: '+254712345678', message: 'once' })
      expect(again.body.data.sendSms.id).toBe(first.body.data.sendSms.id)
      expect(again.headers.get('idempotency-replayed')).toBe('true')
      expect(await kit.db.message.count({ where: { accountId: s.account.id } })).toBe(1)
      expect(await balance(s)).toBe(90_000n)
      // Another account may use the same key.
      const t = await funded()
      const theirs = await send(t, 'order-1', { to: '+254712345678', message: 'once' })
      expect(theirs.body.data.sendSms.id).not.toBe(first.body.data.sendSms.id)
    })

    it('answers the first message after the first request died mid-submit, and charges once', async () => {
      const s = await funded()
      const id = await sendThatDies(s, 'order-crash', 'crash')
      control.mode = 'accept'
      const retry = await send(s, 'order-crash', { to: '+254712345678', message: 'in flight' })
      expect(retry.body.data.sendSms).toMatchObject({ id, status: 'PENDING' })
      expect(await balance(s)).toBe(90_000n)
    })

    it('gives one message to concurrent requests with the same key', async () => {
      control.mode = 'accept'
      const s = await funded()
      const answers = await Promise.all(Array.from({ length: 5 }, () => send(s, 'race', { to: '+254712345678', message: 'race' })))
      const sent = answers.filter((a) => a.status === 200)
      expect(sent.length).toBeGreaterThanOrEqual(1)
      expect(new Set(sent.map((a) => a.body.data.sendSms.id)).size).toBe(1)
      // The others were still running when they came: 409 CONFLICT, nothing charged.
      for (const other of answers.filter((a) => a.status !== 200)) {
        expect(other.status).toBe(409)
        expect(other.body.errors[0].extensions.code).toBe('CONFLICT')
      }
      expect(await kit.db.message.count({ where: { accountId: s.account.id } })).toBe(1)
      expect(await balance(s)).toBe(90_000n)
    })

    it('refuses the key with another message (IDEMPOTENCY_KEY_REUSED) and a malformed key (BAD_REQUEST), changing nothing', async () => {
      control.mode = 'accept'
      const s = await funded()
      await send(s, 'order-2', { to: '+254712345678', message: 'first' })
      const reused = await send(s, 'order-2', { to: '+254712345678', message: 'second' })
      expect(reused.body.errors[0].extensions.code).toBe('IDEMPOTENCY_KEY_REUSED')
      for (const bad of ['x'.repeat(256), 'tab\there', 'caf\u00e9']) {
        const refused = await send(s, bad, { to: '+254712345678', message: 'bad key' })
        expect(refused.status).toBe(400)
        expect(refused.body.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST' })
        expect(refused.body.errors[0].message).toContain('Idempotency-Key')
      }
      expect(await kit.db.message.count({ where: { accountId: s.account.id } })).toBe(1)
      expect(await balance(s)).toBe(90_000n)
    })
  })
})
