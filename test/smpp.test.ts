import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PDU } from 'smpp'
import { targets } from './kit/databases.js'
import { useKit, fixedClock } from './kit/kit.js'
import { startSmsc, type Smsc } from './kit/smsc.js'
import { sleep, spawnServer } from './kit/server-process.js'
import { createSmppGateway, type SmppGateway } from '../src/sms/smpp/smpp-gateway.js'
import { UnansweredError } from '../src/sms/smpp/smpp-bind.js'
import { createLogger } from '../src/core/logger.js'
import { sendSms } from '../src/sms/send-sms.js'
import { sweepSubmissions } from '../src/sms/submit-sms.js'
import { segment } from '../src/sms/encoding.js'
import { parseEnv } from '../src/core/env.js'
import type { Deps } from '../src/deps.js'
import { runWorkerTick } from '../src/process/worker.js'
import { matchPendingReceipts, PENDING_RECEIPT_RETENTION_MS } from '../src/sms/smpp/smpp-receipts.js'
import { otherSpellings } from '../src/sms/smpp/receipt.js'

const logger = createLogger('silent')
const LEASE = 2_000

/** Polls an async probe every 20 ms (conditions, never "long enough"). */
async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

describe.each(targets)('SMPP connector on $name', (target) => {
  const clock = fixedClock('2026-04-02T09:00:00Z')
  let smsc: Smsc
  let gateway: SmppGateway
  const extra: SmppGateway[] = []
  // Before useKit's own beforeAll, which builds the deps with this gateway.
  beforeAll(async () => {
    smsc = await startSmsc()
    gateway = createSmppGateway({ url: smsc.url, logger, enquireLinkMs: 60_000, responseTimeoutMs: 30_000 })
  })
  const kit = useKit(target, {
    clock,
    env: { WORKER_LEASE_MS: String(LEASE), SMS_SUBMIT_DEADLINE_MS: '600000', SMS_GATEWAY: 'smpp', SMPP_URL: 'smpp://x:y@127.0.0.1:1' },
    get gateway() {
      return gateway
    },
  })
  beforeAll(async () => {
    gateway.start(kit.deps)
    await gateway.whenBound()
  })
  afterAll(async () => {
    for (const g of [gateway, ...extra]) await g.stop()
    await smsc.close()
  })

  /** Another connector on the same database (another instance), with its own settings. */
  async function instance(options: Partial<Parameters<typeof createSmppGateway>[0]> = {}, url = smsc.url) {
    const g = createSmppGateway({ url, logger, enquireLinkMs: 60_000, responseTimeoutMs: 30_000, ...options })
    extra.push(g)
    const deps: Deps = kit.depsWith({ WORKER_LEASE_MS: String(LEASE), SMS_GATEWAY: 'smpp', SMPP_URL: url }, { clock, gateway: g, logger })
    g.start(deps)
    await g.whenBound()
    return { g, deps }
  }

  async function funded() {
    const s = await kit.seed().account()
    await kit.db.account.update({ where: { id: s.account.id }, data: { creditBalance: 1_000_000n, pricePerPage: 10_000n } })
    return s
  }
  const balance = async (accountId: string) =>
    (await kit.db.account.findUniqueOrThrow({ where: { id: accountId }, select: { creditBalance: true } })).creditBalance
  const message = (id: string) => kit.db.message.findUniqueOrThrow({ where: { id } })
  /** A one-page GSM-7 message of the account through the SMPP gateway, charged, in `status`. */
  const smppMessage = (accountId: string, mobile: string, text: string, status: 'PENDING' | 'SENT') =>
    kit.db.message.create({
      data: {
        accountId,
        mobile,
        sender: 'ACME',
        text,
        encoding: 'GSM_7',
        pages: 1,
        costPerPage: 10_000n,
        creditsDeducted: 10_000n,
        gateway: 'smpp',
        status,
        broadcastAt: clock.now(),
      },
    })
  const reset = () => {
    smsc.options.submit = 'accept'
    smsc.options.autoReceipt = null
    smsc.options.bind = 'accept'
    smsc.options.answerEnquireLink = true
    smsc.options.messageIds = 'hex'
  }

  it('binds as a transceiver and shows the bind on /readyz and /metrics', async () => {
    expect(smsc.bound.length).toBeGreaterThanOrEqual(1)
    const ready = await kit.app.fetch(new Request('http://localhost/readyz'))
    expect(await ready.json()).toEqual({ status: 'ready', smsGateway: { name: 'smpp', state: 'bound', bound: true } })
    const metrics = await (await kit.app.fetch(new Request('http://localhost/metrics'))).text()
    expect(metrics).toContain('gateway_sms_bound{gateway="smpp"} 1')
    expect(metrics).toContain('gateway_sms_connection{gateway="smpp",state="bound"} 1')
  })

  it('answers the SMSC enquire_link', async () => {
    const session = smsc.bound[0]!
    const answer = await new Promise<PDU>((resolve) => session.enquire_link({}, resolve))
    expect(answer.command).toBe('enquire_link_resp')
    expect(answer.command_status).toBe(0)
  })

  it('submits GSM-7 as data_coding 0 with an alphanumeric sender, and a DELIVRD receipt finishes the message', async () => {
    reset()
    const s = await funded()
    const before = smsc.submits.length
    const sent = await sendSms(kit.deps, s.account.id, { to: '+254711000001', message: 'Hello {world} €5', sender: 'ACME' })
    expect(sent.status).toBe('SENT')
    const record = smsc.submits[before]!
    expect(smsc.submits.length).toBe(before + 1)
    expect(record.text).toBe('Hello {world} €5')
    expect(record.pdu).toMatchObject({
      source_addr_ton: 5,
      source_addr_npi: 0,
      source_addr: 'ACME',
      dest_addr_ton: 1,
      dest_addr_npi: 1,
      destination_addr: '254711000001',
      registered_delivery: 1,
      data_coding: 0,
      esm_class: 0,
    })
    expect((await message(sent.id)).gatewayMessageId).toBe(record.messageId)
    await kit.db.webhookEndpoint.create({ data: { accountId: s.account.id, url: 'https://example.com/hook', secret: 'whsec_dGVzdA==' } })
    expect(await smsc.receipt(record, 'DELIVRD', { done: '2604021015' })).toBe(0)
    const done = await until('DELIVRD', async () => {
      const m = await message(sent.id)
      return m.status === 'DELIVRD' && m
    })
    expect(done).toMatchObject({ done: true, carrierStatus: 'DELIVRD', carrierErrorCode: '000' })
    expect(done.doneAt?.toISOString()).toBe('2026-04-02T10:15:00.000Z')
    // Webhooks fire as for any status change: one delivery for SENT? No: the endpoint came after SENT; one for DELIVRD.
    expect(await kit.db.webhookDelivery.count({ where: { messageId: sent.id } })).toBe(1)
  })

  it('submits UCS-2 as data_coding 8 with a numeric sender as an international number', async () => {
    reset()
    const s = await funded()
    const before = smsc.submits.length
    const sent = await sendSms(kit.deps, s.account.id, { to: '+254711000002', message: 'Habari 😀 ✓', sender: '+254722000000' })
    expect(sent.status).toBe('SENT')
    const record = smsc.submits[before]!
    expect(record.text).toBe('Habari 😀 ✓')
    expect(record.pdu).toMatchObject({ data_coding: 8, source_addr_ton: 1, source_addr_npi: 1, source_addr: '254722000000' })
  })

  it('sends a short code sender as TON 3', async () => {
    reset()
    const s = await funded()
    const before = smsc.submits.length
    await sendSms(kit.deps, s.account.id, { to: '+254711000003', message: 'hi', sender: '22555' })
    expect(smsc.submits[before]!.pdu).toMatchObject({ source_addr_ton: 3, source_addr_npi: 0, source_addr: '22555' })
  })

  it('sends a long text as concatenated parts with a UDH, charges one page a part, and finishes once every part has a receipt', async () => {
    reset()
    const s = await funded()
    const text = `${'a'.repeat(150)}[]${'b'.repeat(200)}`
    const pages = segment(text).pages
    expect(pages).toBe(3)
    const before = smsc.submits.length
    const start = await balance(s.account.id)
    const sent = await sendSms(kit.deps, s.account.id, { to: '+254711000004', message: text })
    expect(sent.status).toBe('SENT')
    const parts = smsc.submits.slice(before)
    expect(parts.length).toBe(pages)
    expect(start - (await balance(s.account.id))).toBe(BigInt(pages) * 10_000n)
    expect(parts.map((p) => p.pdu.esm_class)).toEqual([0x40, 0x40, 0x40])
    const ordered = [...parts].sort((a, b) => a.concat!.part - b.concat!.part)
    expect(ordered.map((p) => p.concat)).toEqual([1, 2, 3].map((part) => ({ reference: parts[0]!.concat!.reference, parts: 3, part })))
    expect(ordered.map((p) => p.text).join('')).toBe(text)
    await smsc.receipt(ordered[0]!, 'DELIVRD')
    await smsc.receipt(ordered[2]!, 'DELIVRD')
    await until(
      'parts recorded',
      async () => (await kit.db.smppPart.count({ where: { messageId: sent.id, carrierStatus: 'DELIVRD' } })) === 2,
    )
    expect((await message(sent.id)).status).toBe('SENT')
    await smsc.receipt(ordered[1]!, 'UNDELIV', { err: '034' })
    const done = await until('final', async () => {
      const m = await message(sent.id)
      return m.done && m
    })
    expect(done).toMatchObject({ status: 'UNDELIV', carrierErrorCode: '034' })
  })

  it('sends a long text as one message_payload when SMPP_LONG_MESSAGES=payload, charged by its pages', async () => {
    reset()
    const { g, deps } = await instance({ longMessages: 'payload' })
    const s = await funded()
    const text = 'ü'.repeat(300)
    const before = smsc.submits.length
    const start = await balance(s.account.id)
    const sent = await sendSms(deps, s.account.id, { to: '+254711000005', message: text })
    expect(sent.status).toBe('SENT')
    expect(smsc.submits.length).toBe(before + 1)
    const record = smsc.submits[before]!
    expect(record.text).toBe(text)
    expect(record.concat).toBeUndefined()
    expect(start - (await balance(s.account.id))).toBe(BigInt(segment(text).pages) * 10_000n)
    await g.stop()
  })

  it('maps every receipt stat to its status (the table in docs/sms.md)', async () => {
    reset()
    const s = await funded()
    const table: [string, string][] = [
      ['DELIVRD', 'DELIVRD'],
      ['UNDELIV', 'UNDELIV'],
      ['EXPIRED', 'EXPIRED'],
      ['REJECTD', 'REJECTD'],
      ['UNKNOWN', 'UNKNOWN'],
      ['DELETED', 'FAILED'],
      ['ACCEPTD', 'SENT'],
    ]
    for (const [stat, status] of table) {
      const before = smsc.submits.length
      const sent = await sendSms(kit.deps, s.account.id, { to: '+254711000006', message: `stat ${stat}` })
      // The receipt text alone (no TLV): the id comes from "id:".
      await smsc.receipt(smsc.submits[before]!, stat, { tlv: false, err: '007' })
      await until(stat, async () => (await kit.db.smppPart.findFirst({ where: { messageId: sent.id, carrierStatus: stat } })) !== null)
      const m = await message(sent.id)
      expect(m.status).toBe(status)
      // ACCEPTD is SENT, which the message already was: nothing to change (docs/sms.md "Only real changes count").
      if (status !== 'SENT') expect(m).toMatchObject({ carrierStatus: stat, carrierErrorCode: '007' })
    }
  })

  it('retries ESME_RTHROTTLED and ESME_RMSGQFUL and charges once', async () => {
    reset()
    const s = await funded()
    const start = await balance(s.account.id)
    smsc.options.submit = { status: 0x58, times: 2 }
    const before = smsc.submits.length
    const a = await sendSms(kit.deps, s.account.id, { to: '+254711000007', message: 'throttled' })
    expect(a.status).toBe('SENT')
    smsc.options.submit = { status: 0x14, times: 1 }
    const b = await sendSms(kit.deps, s.account.id, { to: '+254711000007', message: 'queue full' })
    expect(b.status).toBe('SENT')
    expect(smsc.submits.length).toBe(before + 2)
    expect(start - (await balance(s.account.id))).toBe(20_000n)
  })

  it('leaves a message PENDING while the SMSC keeps throttling, and the retry path sends it once, charged once', async () => {
    reset()
    const s = await funded()
    const start = await balance(s.account.id)
    smsc.options.submit = { status: 0x58 }
    const sent = await sendSms(kit.deps, s.account.id, { to: '+254711000008', message: 'later' })
    expect(sent.status).toBe('PENDING')
    expect(await kit.db.smppPart.count({ where: { messageId: sent.id } })).toBe(0)
    reset()
    const before = smsc.submits.length
    clock.advance(5_000)
    await sweepSubmissions(kit.deps, 'test')
    expect((await message(sent.id)).status).toBe('SENT')
    expect(smsc.submits.length).toBe(before + 1)
    expect(start - (await balance(s.account.id))).toBe(10_000n)
  })

  it('refunds and fails a permanent error and a generic_nack', async () => {
    reset()
    const s = await funded()
    const start = await balance(s.account.id)
    smsc.options.submit = { status: 0x0b }
    const refused = await sendSms(kit.deps, s.account.id, { to: '+254711000009', message: 'bad number' })
    expect(refused.status).toBe('FAILED')
    smsc.options.submit = { nack: 0x03 }
    const nacked = await sendSms(kit.deps, s.account.id, { to: '+254711000009', message: 'nack' })
    expect(nacked.status).toBe('FAILED')
    for (const id of [refused.id, nacked.id])
      expect(await message(id)).toMatchObject({ done: true, creditsDeducted: 0n, carrierErrorCode: 'SUBMIT' })
    expect(await balance(s.account.id)).toBe(start)
  })

  it('matches a receipt that arrives before the submit_sm_resp', async () => {
    reset()
    smsc.options.autoReceipt = { stat: 'DELIVRD', when: 'before' }
    const s = await funded()
    const sent = await sendSms(kit.deps, s.account.id, { to: '+254711000010', message: 'fast receipt' })
    await until('DELIVRD', async () => (await message(sent.id)).status === 'DELIVRD')
    expect(await kit.db.smppPendingReceipt.count()).toBe(0)
  })

  it('matches a receipt that arrives at another bound instance, also before the answer is recorded', async () => {
    reset()
    await instance()
    const s = await funded()
    expect(smsc.bound.length).toBeGreaterThanOrEqual(2)
    smsc.options.autoReceipt = { stat: 'DELIVRD', when: 'after', to: 'other' }
    const one = await sendSms(kit.deps, s.account.id, { to: '+254711000011', message: 'other instance' })
    smsc.options.autoReceipt = { stat: 'EXPIRED', when: 'before', to: 'other' }
    const two = await sendSms(kit.deps, s.account.id, { to: '+254711000011', message: 'other instance, early' })
    await until('both final', async () => (await message(one.id)).status === 'DELIVRD' && (await message(two.id)).status === 'EXPIRED')
  })

  it('purges receipts that matched no part once they are a week old, in the worker tick', async () => {
    reset()
    const now = clock.now().getTime()
    const old = await kit.db.smppPendingReceipt.create({
      data: { smscMessageId: 'lost-old', carrierStatus: 'DELIVRD', receivedAt: new Date(now - PENDING_RECEIPT_RETENTION_MS - 1) },
    })
    const recent = await kit.db.smppPendingReceipt.create({
      data: { smscMessageId: 'lost-recent', carrierStatus: 'DELIVRD', receivedAt: new Date(now - PENDING_RECEIPT_RETENTION_MS + 60_000) },
    })
    const tick = await runWorkerTick(kit.deps, 'test')
    expect(tick.receiptsPurged).toBe(1)
    const left = await kit.db.smppPendingReceipt.findMany({ where: { id: { in: [old.id, recent.id] } } })
    expect(left.map((r) => r.smscMessageId)).toEqual(['lost-recent'])
    await kit.db.smppPendingReceipt.deleteMany({ where: { id: recent.id } })
  })

  it('matches a receipt that names the message in the other base: hex answer and decimal receipt, and the reverse', async () => {
    const s = await funded()
    for (const [answer, receiptId] of [
      ['hex', (id: string) => BigInt(`0x${id}`).toString(10)],
      ['decimal', (id: string) => BigInt(id).toString(16).toUpperCase()],
    ] as const) {
      reset()
      smsc.options.messageIds = answer
      const before = smsc.submits.length
      const sent = await sendSms(kit.deps, s.account.id, { to: '+254711000021', message: `${answer} answer` })
      const record = smsc.submits[before]!
      expect(await smsc.receipt(receiptId(record.messageId), 'DELIVRD', { session: record.session })).toBe(0)
      const done = await until('DELIVRD', async () => {
        const m = await message(sent.id)
        return m.status === 'DELIVRD' && m
      })
      expect(done.gatewayMessageId).toBe(record.messageId)
    }
    reset()
  })

  it("matches a pending receipt in the other base once the part's id is recorded", async () => {
    const s = await funded()
    const m = await smppMessage(s.account.id, '+254711000022', 'pending in decimal', 'SENT')
    // The receipt came first, its id in decimal; the answer then recorded the id in hex.
    await kit.db.smppPendingReceipt.create({ data: { smscMessageId: '11259375', carrierStatus: 'DELIVRD', receivedAt: clock.now() } })
    await kit.db.smppPart.create({ data: { messageId: m.id, part: 1, parts: 1, smscMessageId: '00abcdef', createdAt: clock.now() } })
    expect(await matchPendingReceipts(kit.deps, ['00abcdef'])).toBe(1)
    expect(await message(m.id)).toMatchObject({ status: 'DELIVRD', done: true })
    expect(await kit.db.smppPendingReceipt.count({ where: { smscMessageId: '11259375' } })).toBe(0)
  })

  it('holds the window: no more than SMPP_WINDOW submits in flight', async () => {
    reset()
    const { g, deps } = await instance({ window: 2 })
    const session = smsc.bound.at(-1)!
    smsc.options.submit = 'silent'
    const s = await funded()
    const before = smsc.submits.length
    const sends = [1, 2, 3, 4, 5].map((n) => sendSms(deps, s.account.id, { to: '+254711000012', message: `window ${n}` }))
    await smsc.waitFor('two submits', () => smsc.submits.length === before + 2)
    // A round trip on the same connection after the two: nothing more was written before it.
    await new Promise((resolve) => session.enquire_link({}, resolve))
    expect(smsc.submits.length).toBe(before + 2)
    expect(smsc.submits.slice(before).every((r) => r.session === session)).toBe(true)
    reset()
    // Answer the held ones: the others follow, two at a time.
    for (const r of smsc.submits.slice(before)) r.session.send(r.pdu.response({ message_id: `held-${r.pdu.sequence_number}` }))
    const results = await Promise.all(sends)
    expect(results.map((r) => r.status)).toEqual(['SENT', 'SENT', 'SENT', 'SENT', 'SENT'])
    await g.stop()
  })

  it('holds SMPP_TPS: no one second at the SMSC holds more than TPS submits (+1 for arrivals bunched in transit)', async () => {
    reset()
    const TPS = 5
    const { g, deps } = await instance({ tps: TPS, window: 10 })
    const s = await funded()
    const before = smsc.submits.length
    // Twelve at once through a window of ten: without the limit they would all arrive within one second.
    const count = 12
    const results = await Promise.all(
      Array.from({ length: count }, (_, n) => sendSms(deps, s.account.id, { to: '+254711000020', message: `paced ${n}` })),
    )
    expect(results.every((r) => r.status === 'SENT')).toBe(true)
    const arrivals = smsc.submits
      .slice(before)
      .filter((r) => r.text.startsWith('paced '))
      .map((r) => r.at)
      .sort((a, b) => a - b)
    // Not vacuous: every one went, more than one second's worth (the limit had to hold some back).
    expect(arrivals).toHaveLength(count)
    expect(count).toBeGreaterThan(TPS + 1)
    const busiest = Math.max(...arrivals.map((t) => arrivals.filter((u) => u >= t && u < t + 1000).length))
    expect(busiest).toBeLessThanOrEqual(TPS + 1)
    await g.stop()
  })

  it('never sends again a submit the SMSC never answered: UNKNOWN, charged, SUBMIT_UNCONFIRMED', async () => {
    reset()
    const { g, deps } = await instance({ responseTimeoutMs: 300 })
    smsc.options.submit = 'silent'
    const s = await funded()
    const start = await balance(s.account.id)
    const before = smsc.submits.length
    const sent = await sendSms(deps, s.account.id, { to: '+254711000013', message: 'into the void' })
    expect(await message(sent.id)).toMatchObject({ status: 'UNKNOWN', done: true, carrierErrorCode: 'SUBMIT_UNCONFIRMED' })
    expect(start - (await balance(s.account.id))).toBe(10_000n)
    reset()
    clock.advance(LEASE * 2)
    await sweepSubmissions(deps, 'test')
    expect(smsc.submits.length).toBe(before + 1)
    await g.stop()
  })

  it('times out each unanswered submit_sm of a window in flight at its own deadline, and keeps the one answered meanwhile', async () => {
    reset()
    // Long enough that the SMSC's answer to the second (sent as soon as it is seen) comes well within it.
    const timeoutMs = 1500
    const { g } = await instance({ responseTimeoutMs: timeoutMs, window: 4 })
    smsc.options.submit = 'silent'
    const before = smsc.submits.length
    const seen = (count: number) => until(`${count} submits at the SMSC`, async () => smsc.submits.length >= before + count)
    const submit = (text: string) => {
      const at = performance.now()
      const params = { source_addr: 'TEST', destination_addr: '254711000020', short_message: Buffer.from(text, 'latin1') }
      return g.bind.submit(params).then(
        (answer) => ({ answer, error: null, afterMs: performance.now() - at }),
        (error: unknown) => ({ answer: null, error, afterMs: performance.now() - at }),
      )
    }
    const one = submit('window one')
    const two = submit('window two')
    await seen(2)
    // A third sent later: due later than the first two, so the timer is set again for it.
    await sleep(200)
    const three = submit('window three')
    await seen(3)
    const answered = smsc.submits.slice(before).find((r) => r.text === 'window two')!
    answered.session.send(answered.pdu.response({ message_id: 'answered-in-time' }))
    const [first, second, third] = await Promise.all([one, two, three])
    for (const unanswered of [first, third]) {
      expect(unanswered.error).toBeInstanceOf(UnansweredError)
      // Never before its own deadline (a lower bound only: a loaded machine fires timers late).
      expect(unanswered.afterMs).toBeGreaterThanOrEqual(timeoutMs)
    }
    expect(second.error).toBeNull()
    expect(second.answer?.message_id).toBe('answered-in-time')
    // The window's slots came back: another submit goes (and, unanswered, times out too).
    const again = await submit('window again')
    expect(again.error).toBeInstanceOf(UnansweredError)
    expect(smsc.submits.length).toBe(before + 4)
    await g.stop()
  })

  // Written by one statement (a caller without transactions), or in the turn's transaction (sendSms and the sweeper's).
  it.each(['one statement', "the turn's transaction"])(
    "keeps a part's row when another transaction open meanwhile rolls back: a resubmission never sends the part again (%s)",
    async (how) => {
      // SQLite runs every statement on one connection: the row written before the submit_sm used to
      // land inside whatever transaction was open then, and went with its rollback (or with a kill -9
      // before its commit); the resubmission after the crash then sent the part a second time.
      reset()
      const s = await funded()
      const m = await smppMessage(s.account.id, '+254711000019', 'written once', 'PENDING')
      const outgoing = { id: m.id, to: m.mobile, sender: m.sender, text: m.text, encoding: 'GSM_7' as const, pages: 1 }
      const before = smsc.submits.length
      let opened!: () => void
      const open = new Promise<void>((resolve) => (opened = resolve))
      let release!: () => void
      const held = new Promise<void>((resolve) => (release = resolve))
      const other = kit.db
        .$transaction(async (tx) => {
          await tx.serviceSetting.create({ data: { name: `other-${m.id}`, value: '1' } })
          opened()
          await held
          throw new Error('rolled back')
        })
        .catch((error: Error) => error.message)
      await open
      const first = gateway.submit(outgoing, {
        db: kit.db,
        dbKind: kit.deps.dbKind,
        now: clock.now(),
        directTransaction: how === 'one statement' ? undefined : kit.deps.directTransaction,
      })
      // Long enough for the submit to finish if it does not wait for the open transaction.
      await Promise.race([first, sleep(1_000)])
      release()
      expect(await other).toBe('rolled back')
      const accepted = await first
      expect(smsc.submits.length).toBe(before + 1)
      expect(accepted.gatewayMessageId).toBe(smsc.submits[before]!.messageId)
      // The outbox's retry (the same message id again) finds the part and its id, and sends nothing.
      expect(await gateway.submit(outgoing, { db: kit.db, dbKind: kit.deps.dbKind, now: clock.now() })).toEqual({
        gatewayMessageId: accepted.gatewayMessageId,
      })
      expect(smsc.submits.length).toBe(before + 1)
    },
  )

  it('survives an SMSC that drops the connection with a full window: in flight ones are UNKNOWN, queued ones go after the rebind', async () => {
    reset()
    const { g, deps } = await instance({ window: 2 })
    smsc.options.submit = 'silent'
    const s = await funded()
    const before = smsc.submits.length
    const sends = [1, 2, 3].map((n) => sendSms(deps, s.account.id, { to: '+254711000014', message: `drop ${n}` }))
    await smsc.waitFor('two submits', () => smsc.submits.length === before + 2)
    const binds = smsc.binds
    reset()
    smsc.bound.at(-1)!.destroy()
    const results = await Promise.all(sends)
    const statuses = await Promise.all(results.map(async (r) => (await message(r.id)).status))
    expect([...statuses].sort()).toEqual(['PENDING', 'UNKNOWN', 'UNKNOWN'])
    await smsc.waitFor('the rebind', () => smsc.binds > binds)
    await g.whenBound()
    clock.advance(5_000)
    await sweepSubmissions(deps, 'test')
    const pending = results[statuses.indexOf('PENDING')]!
    expect((await message(pending.id)).status).toBe('SENT')
    // Only the queued one was sent again.
    expect(smsc.submits.length).toBe(before + 3)
    await g.stop()
  })

  it('answers PENDING while not bound (refused bind), binds again with backoff and sends through the retry path', async () => {
    reset()
    const { g, deps } = await instance()
    smsc.options.bind = 'refuse'
    const binds = smsc.binds
    smsc.bound.at(-1)!.destroy()
    await until('unbound', async () => g.bind.state !== 'bound')
    const s = await funded()
    const sent = await sendSms(deps, s.account.id, { to: '+254711000015', message: 'when bound' })
    expect(sent.status).toBe('PENDING')
    const health = await (await kit.app.fetch(new Request('http://localhost/readyz'))).json()
    expect(health.status).toBe('ready')
    smsc.options.bind = 'accept'
    await g.whenBound()
    expect(smsc.binds).toBe(binds + 1)
    clock.advance(5_000)
    await sweepSubmissions(deps, 'test')
    expect((await message(sent.id)).status).toBe('SENT')
    await g.stop()
  })

  it('notices a peer silent for two enquire_link periods and binds again', async () => {
    reset()
    const { g } = await instance({ enquireLinkMs: 200 })
    const binds = smsc.binds
    smsc.options.answerEnquireLink = false
    await smsc.waitFor('a new bind', () => smsc.binds > binds, 10_000)
    expect(smsc.enquireLinks).toBeGreaterThan(0)
    reset()
    await g.stop()
  })

  it('unbinds cleanly when stopped', async () => {
    reset()
    const { g } = await instance()
    const unbinds = smsc.unbinds
    await g.stop()
    expect(smsc.unbinds).toBe(unbinds + 1)
    expect(g.health?.()).toEqual({ state: 'stopped', bound: false })
  })

  it('binds over TLS (smpps://)', async () => {
    const secure = await startSmsc({ tls: true })
    try {
      const { g, deps } = await instance({ tls: { ca: secure.cert } }, secure.url)
      const s = await funded()
      const sent = await sendSms(deps, s.account.id, { to: '+254711000016', message: 'over tls' })
      expect(sent.status).toBe('SENT')
      expect(secure.submits.map((r) => r.text)).toEqual(['over tls'])
      await g.stop()
    } finally {
      await secure.close()
    }
  })
})

describe('SMPP settings', () => {
  const base = { SMS_GATEWAY: 'smpp', SMPP_URL: 'smpp://sys:pw@smsc.example:2775' }
  it('accepts the documented settings', () => {
    const env = parseEnv({ ...base, SMPP_WINDOW: '20', SMPP_TPS: '50', SMPP_ENQUIRE_LINK_MS: '15000', SMPP_LONG_MESSAGES: 'payload' })
    expect(env).toMatchObject({
      SMS_GATEWAY: 'smpp',
      SMPP_WINDOW: 20,
      SMPP_TPS: 50,
      SMPP_ENQUIRE_LINK_MS: 15000,
      SMPP_LONG_MESSAGES: 'payload',
    })
    expect(parseEnv({}).SMS_GATEWAY).toBe('sandbox')
  })
  it.each([
    [{ SMS_GATEWAY: 'smpp' }, 'SMPP_URL: is required when SMS_GATEWAY=smpp'],
    [{ SMS_GATEWAY: 'kannel' }, 'SMS_GATEWAY: must be sandbox or smpp'],
    [{ ...base, SMPP_URL: 'http://sys:pw@h:1' }, 'SMPP_URL: must be smpp://'],
    [{ ...base, SMPP_URL: 'smpp://h:2775' }, 'SMPP_URL: must be smpp://'],
    [{ ...base, SMPP_WINDOW: '0' }, 'SMPP_WINDOW'],
    [{ ...base, SMPP_TPS: 'fast' }, 'SMPP_TPS: must be a number'],
    [{ ...base, SMPP_ENQUIRE_LINK_MS: '10' }, 'SMPP_ENQUIRE_LINK_MS'],
    [{ ...base, SMPP_LONG_MESSAGES: 'split' }, 'SMPP_LONG_MESSAGES: must be udh or payload'],
  ])('refuses %j', (env, problem) => {
    expect(() => parseEnv(env)).toThrow(problem)
    // The password never appears in the message.
    expect(() => parseEnv(env)).not.toThrow(/pw@/)
  })
})

describe('SMPP receipt ids in another base', () => {
  it('spells a decimal id in hex and a hex id in decimal, padded as SMSCs pad them, never the id itself', () => {
    const decimal = otherSpellings('11259375')
    expect(decimal).toEqual(expect.arrayContaining(['abcdef', 'ABCDEF', '00abcdef', '00ABCDEF', '0000000000abcdef']))
    // Digits only: also a hex number (0x11259375), in decimal.
    expect(decimal).toContain(String(0x11259375))
    expect(decimal).not.toContain('11259375')
    const hex = otherSpellings('00abcdef')
    expect(hex).toEqual(expect.arrayContaining(['11259375', '0011259375']))
    expect(otherSpellings('ABCDEF')).toContain('11259375')
  })

  it('has none for an id that is no number, or longer than 64 bits', () => {
    expect(otherSpellings('msg-7f3a')).toEqual([])
    expect(otherSpellings('')).toEqual([])
    expect(otherSpellings('1'.repeat(21))).toEqual([])
    expect(otherSpellings('f'.repeat(17))).toEqual([])
  })
})

describe('SMPP in the server process', () => {
  it('binds when the service starts with SMS_GATEWAY=smpp (the connector is loaded only then)', async () => {
    const smsc = await startSmsc()
    const dir = mkdtempSync(join(tmpdir(), 'gateway-smpp-start-'))
    const server = spawnServer({
      DATABASE_URL: `file:${join(dir, 'smpp.db')}`,
      SMS_GATEWAY: 'smpp',
      SMPP_URL: smsc.url,
      WORKER_ENABLED: 'false',
    })
    try {
      const url = await server.listening()
      await until('the bind', async () => smsc.bound.length > 0)
      const ready = await fetch(`${url}/readyz`)
      expect(await ready.json()).toEqual({ status: 'ready', smsGateway: { name: 'smpp', state: 'bound', bound: true } })
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
      await smsc.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
