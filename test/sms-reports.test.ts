import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit, fixedClock } from './kit/kit.js'
import { anyUuid } from './kit/matchers.js'
import { applyDueCarrierEvents } from '../src/sms/carrier-events.js'
import { SANDBOX_MAGIC_NUMBERS } from '../src/sms/sandbox-gateway.js'
import type { Seeded } from './kit/seed.js'
import { graphql } from '../src/graphql/typed-documents.js'

const SEND = `mutation($input: SendSmsInput!) { sendSms(input: $input) { id: uuid status done pages encoding costPerPage creditsDeducted sandbox } }`

describe.each(targets)('SMS sending and delivery reports on $name', (target) => {
  const clock = fixedClock('2026-03-10T08:15:00Z')
  const CONNECTOR = 'connector-token-of-the-carrier-side-0123456789'
  const kit = useKit(target, { clock, env: { SANDBOX_DELIVERY_DELAY_MS: '1000', CARRIER_CONNECTOR_TOKEN: CONNECTOR } })

  async function funded(credits = '10', price?: string): Promise<Seeded> {
    const s = await kit.seed().account()
    await kit.db.account.update({
      where: { id: s.account.id },
      data: {
        creditBalance: BigInt(Math.round(Number(credits) * 10_000)),
        ...(price ? { pricePerPage: BigInt(Math.round(Number(price) * 10_000)) } : {}),
      },
    })
    return s
  }

  it('sends through the sandbox: SENT at once, DELIVRD after the delay, pollable over REST', async () => {
    const s = await funded('10', '0.8')
    const sent = await kit.gql(SEND, { input: { to: '0712 345 678', message: 'Hello from the gateway', sender: 'ACME' } }, s.key)
    expect(sent.sendSms).toEqual({
      id: anyUuid(),
      status: 'SENT',
      done: false,
      pages: 1,
      encoding: 'GSM_7',
      costPerPage: '0.8000',
      creditsDeducted: '0.8000',
      sandbox: true,
    })
    const id = sent.sendSms.id
    const pending = await kit.rest('GET', `/api/sms/delivery-report/${id}`, { key: s.key })
    expect(pending.body).toMatchObject({ status: 'SENT', done: false, doneDate: null })

    expect(await applyDueCarrierEvents(kit.deps, 'test')).toBe(0)
    clock.advance(1000)
    expect(await applyDueCarrierEvents(kit.deps, 'test')).toBe(1)
    const report = await kit.rest('GET', `/api/sms/delivery-report/${id}`, { key: s.key })
    expect(report.status).toBe(200)
    expect(report.body).toEqual({
      reference: id,
      id,
      mobile: '+254712345678',
      sender: 'ACME',
      status: 'DELIVRD',
      broadcastTime: '2026-03-10 08:15 AM',
      pages: 1,
      costPerPage: '0.8000',
      creditsDeducted: '0.8000',
      mccmnc: '00101',
      done: true,
      doneDate: '2026-03-10 08:15 AM',
      sandbox: true,
    })
    const account = await kit.db.account.findUniqueOrThrow({ where: { id: s.account.id } })
    expect(account.creditBalance).toBe(92_000n)
    const history = await kit.gql(graphql(`query($id: ID!) { message(id: $id) { statusHistory { status } } }`), { id }, s.key)
    expect(history.message?.statusHistory.map((u: any) => u.status)).toEqual(['PENDING', 'SENT', 'DELIVRD'])
  })

  it('prints report times in the account time zone', async () => {
    const s = await funded()
    await kit.db.account.update({ where: { id: s.account.id }, data: { timezone: 'Africa/Nairobi' } })
    clock.set('2026-03-10T20:45:00Z')
    const sent = await kit.gql(SEND, { input: { to: '+254712345678', message: 'hi' } }, s.key)
    const report = await kit.rest('GET', `/api/sms/delivery-report/${sent.sendSms.id}`, { key: s.key })
    expect(report.body.broadcastTime).toBe('2026-03-10 11:45 PM')
  })

  it('charges every page: a 161-character message is two pages', async () => {
    const s = await funded('10', '1.25')
    const sent = await kit.gql(SEND, { input: { to: '+254712345678', message: 'x'.repeat(161) } }, s.key)
    expect(sent.sendSms).toMatchObject({ pages: 2, costPerPage: '1.2500', creditsDeducted: '2.5000' })
    const unicode = await kit.gql(SEND, { input: { to: '+254712345678', message: 'Habari 😀' } }, s.key)
    expect(unicode.sendSms).toMatchObject({ pages: 1, encoding: 'UCS_2' })
  })

  it('without enough credit does not send: NOCREDT, done, nothing deducted', async () => {
    const s = await funded('1.5', '1')
    const sent = await kit.gql(SEND, { input: { to: '+254712345678', message: 'y'.repeat(200) } }, s.key)
    expect(sent.sendSms).toMatchObject({ status: 'NOCREDT', done: true, pages: 2, creditsDeducted: '0.0000' })
    const account = await kit.db.account.findUniqueOrThrow({ where: { id: s.account.id } })
    expect(account.creditBalance).toBe(15_000n)
    expect(await kit.db.scheduledCarrierEvent.count({ where: { messageId: sent.sendSms.id } })).toBe(0)
    const report = await kit.rest('GET', `/api/sms/delivery-report/${sent.sendSms.id}`, { key: s.key })
    expect(report.body).toMatchObject({ status: 'NOCREDT', done: true, doneDate: expect.any(String) })
  })

  it('reports each magic sandbox number with its status', async () => {
    const s = await funded('100')
    const ids: Record<string, string> = {}
    for (const number of Object.keys(SANDBOX_MAGIC_NUMBERS)) {
      ids[number] = (await kit.gql(SEND, { input: { to: number, message: 'magic' } }, s.key)).sendSms.id
    }
    clock.advance(1000)
    await applyDueCarrierEvents(kit.deps, 'test')
    for (const [number, status] of Object.entries(SANDBOX_MAGIC_NUMBERS)) {
      const report = await kit.rest('GET', `/api/sms/delivery-report/${ids[number]}`, { key: s.key })
      expect(report.body, number).toMatchObject({ status, done: true })
    }
    expect(Object.values(SANDBOX_MAGIC_NUMBERS).sort()).toEqual(['DND', 'EXPIRED', 'FAILED', 'REJECTD', 'UNDELIV', 'UNKNOWN'])
  })

  it('refuses bad input with details and sends nothing', async () => {
    const s = await funded()
    const cases: [Record<string, unknown>, string][] = [
      [{ to: 'abc', message: 'x' }, 'to'],
      [{ to: '+254712345678', message: '' }, 'message'],
      [{ to: '+254712345678', message: 'x'.repeat(1531) }, 'message'],
      [{ to: '+254712345678', message: 'x', sender: 'Way too long sender' }, 'sender'],
    ]
    for (const [input, field] of cases) {
      const res = await kit.graphql(SEND, { input }, s.key)
      expect(res.errors?.[0]?.extensions?.code, field).toBe('VALIDATION_FAILED')
      expect(res.errors?.[0]?.extensions?.details?.[0]?.field).toBe(field)
    }
    expect(await kit.db.message.count({ where: { accountId: s.account.id } })).toBe(0)
  })

  it('takes carrier statuses from a connector, mapping raw codes; a final status is final and repeats change nothing', async () => {
    const s = await funded()
    const id = (await kit.gql(SEND, { input: { to: '+254712345678', message: 'carrier' } }, s.key)).sendSms.id
    const REPORT = `mutation($input: CarrierStatusInput!) { reportCarrierStatus(input: $input) { status done carrierStatus carrierErrorCode } }`
    // ENROUTE is SENT, which the message is already: nothing changes.
    const enroute = await kit.gql(REPORT, { input: { messageId: id, status: 'ENROUTE' } }, CONNECTOR)
    expect(enroute.reportCarrierStatus).toEqual({ status: 'SENT', done: false, carrierStatus: null, carrierErrorCode: null })
    const byGatewayId = await kit.gql(
      REPORT,
      { input: { gateway: 'sandbox', gatewayMessageId: `sandbox-${id}`, status: 'DELETED', errorCode: '0x0B' } },
      CONNECTOR,
    )
    expect(byGatewayId.reportCarrierStatus).toEqual({ status: 'FAILED', done: true, carrierStatus: 'DELETED', carrierErrorCode: '0x0B' })
    const late = await kit.gql(REPORT, { input: { messageId: id, status: 'ACCEPTD' } }, CONNECTOR)
    expect(late.reportCarrierStatus.status).toBe('FAILED')
    const flip = await kit.gql(REPORT, { input: { messageId: id, status: 'DELIVRD' } }, CONNECTOR)
    expect(flip.reportCarrierStatus).toEqual({ status: 'FAILED', done: true, carrierStatus: 'DELETED', carrierErrorCode: '0x0B' })
    const history = await kit.db.messageStatusUpdate.findMany({ where: { messageId: id }, orderBy: { createdAt: 'asc' } })
    expect(history.map((h) => h.status)).toEqual(['PENDING', 'SENT', 'FAILED'])
    const unknown = await kit.graphql(REPORT, { input: { messageId: id, status: 'BOGUS' } }, CONNECTOR)
    expect(unknown.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED' })
    const missing = await kit.graphql(
      REPORT,
      { input: { messageId: '00000000-0000-4000-8000-000000000000', status: 'DELIVRD' } },
      CONNECTOR,
    )
    expect(missing.errors?.[0]?.extensions?.code).toBe('NOT_FOUND')
  })

  it('refuses carrier statuses from account keys and anonymous clients, and changes nothing', async () => {
    const s = await funded()
    const id = (await kit.gql(SEND, { input: { to: '+254712345678', message: 'mine' } }, s.key)).sendSms.id
    const REPORT = `mutation($input: CarrierStatusInput!) { reportCarrierStatus(input: $input) { status } }`
    const byAccount = await kit.graphql(REPORT, { input: { messageId: id, status: 'DELIVRD' } }, s.key)
    expect(byAccount.errors?.map((e) => e.extensions?.code)).toEqual(['FORBIDDEN'])
    const anonymous = await kit.graphql(REPORT, { input: { messageId: id, status: 'DELIVRD' } })
    expect(anonymous.errors?.map((e) => e.extensions?.code)).toEqual(['UNAUTHENTICATED'])
    expect(await kit.db.message.findUniqueOrThrow({ where: { id }, select: { status: true, done: true } })).toEqual({
      status: 'SENT',
      done: false,
    })
  })

  it('makes one webhook delivery per real change: alternating final statuses cannot make more', async () => {
    const s = await funded()
    await kit.db.webhookEndpoint.create({
      data: { accountId: s.account.id, url: 'https://hooks.example.com/x', secret: 'whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dGVzdA==' },
    })
    const id = (await kit.gql(SEND, { input: { to: '+254712345678', message: 'flip' } }, s.key)).sendSms.id
    const REPORT = `mutation($input: CarrierStatusInput!) { reportCarrierStatus(input: $input) { status } }`
    for (let i = 0; i < 10; i++) {
      await kit.gql(REPORT, { input: { messageId: id, status: i % 2 ? 'UNDELIV' : 'DELIVRD' } }, CONNECTOR)
      await kit.gql(REPORT, { input: { messageId: id, status: 'SENT' } }, CONNECTOR)
    }
    const deliveries = await kit.db.webhookDelivery.findMany({ where: { messageId: id }, orderBy: { createdAt: 'asc' } })
    expect(deliveries.map((d) => JSON.parse(d.body).status)).toEqual(['SENT', 'DELIVRD'])
  })

  it('answers 404 for an unknown or another account’s report', async () => {
    const s = await funded()
    const id = (await kit.gql(SEND, { input: { to: '+254712345678', message: 'mine' } }, s.key)).sendSms.id
    const other = await kit.seed().account()
    expect((await kit.rest('GET', `/api/sms/delivery-report/${id}`, { key: other.key })).status).toBe(404)
    const unknown = await kit.rest('GET', '/api/sms/delivery-report/00000000-0000-4000-8000-000000000000', { key: s.key })
    expect(unknown.body).toEqual({ error: 'Delivery report not found', code: 'NOT_FOUND' })
    expect((await kit.rest('GET', `/api/sms/delivery-report/${id}`)).status).toBe(401)
  })
})
