import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit, fixedClock } from './kit/kit.js'
import { anyUuid } from './kit/matchers.js'
import type { Seeded } from './kit/seed.js'
import { continueBulkSend, handOver, recordBulkSend } from '../src/sms/send-sms-to-group.js'
import { leaseToken } from '../src/sms/submit-sms.js'
import { runWorkerTick } from '../src/process/worker.js'
import { encodeNodeId } from '../src/graphql/node-id.js'

const LEASE_MS = 5_000

describe.each(targets)('sending SMS over REST and to a group on $name', (target) => {
  const clock = fixedClock('2026-03-10T08:15:00Z')
  const kit = useKit(target, { clock, env: { WORKER_LEASE_MS: String(LEASE_MS) } })

  /** An account with `credits` and a price of `price` per page, and optionally a group of `contacts`. */
  async function funded(credits: string, price = '0.8', contacts = 0): Promise<Seeded> {
    const seed = kit.seed().account()
    const s = await (contacts ? seed.group().contacts(contacts) : seed)
    await kit.db.account.update({
      where: { id: s.account.id },
      data: { creditBalance: BigInt(Math.round(Number(credits) * 10_000)), pricePerPage: BigInt(Math.round(Number(price) * 10_000)) },
    })
    return s
  }
  const balance = async (s: Seeded) => (await kit.db.account.findUniqueOrThrow({ where: { id: s.account.id } })).creditBalance
  const written = async (s: Seeded) => ({
    messages: await kit.db.message.count({ where: { accountId: s.account.id } }),
    bulkSends: await kit.db.bulkSend.count({ where: { accountId: s.account.id } }),
    balance: await balance(s),
  })
  const send = (s: Seeded, body: unknown, headers: Record<string, string> = {}) =>
    kit.rest('POST', '/api/sms/send', { key: s.key, body, headers })
  const sendToGroup = (s: Seeded, body: unknown, headers: Record<string, string> = {}) =>
    kit.rest('POST', '/api/sms/send-to-group', { key: s.key, body, headers })

  describe('POST /api/sms/send', () => {
    it('sends and answers the delivery report, the same JSON as GET /sms/delivery-report', async () => {
      const s = await funded('10')
      const res = await send(s, { mobile: '0712 345 678', message: 'Your order has shipped', sender: 'ACME' })
      expect(res.status).toBe(200)
      expect(res.body).toEqual({
        reference: anyUuid(),
        id: res.body.reference,
        mobile: '+254712345678',
        sender: 'ACME',
        status: 'SENT',
        broadcastTime: '2026-03-10 08:15 AM',
        pages: 1,
        costPerPage: '0.8000',
        creditsDeducted: '0.8000',
        mccmnc: expect.any(String),
        done: false,
        doneDate: null,
        sandbox: true,
      })
      const report = await kit.rest('GET', `/api/sms/delivery-report/${res.body.id}`, { key: s.key })
      expect(report.body).toEqual(res.body)
      expect(await balance(s)).toBe(92_000n)
    })

    it('a number as a JSON number is read like the text', async () => {
      const s = await funded('10')
      const res = await send(s, { mobile: 254712345678, message: 'hi' })
      expect(res.body).toMatchObject({ mobile: '+254712345678', status: 'SENT' })
    })

    it('answers NOCREDT without charging when the credit is short', async () => {
      const s = await funded('0.5')
      const res = await send(s, { mobile: '+254712345678', message: 'hi' })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ status: 'NOCREDT', done: true, creditsDeducted: '0.0000' })
      expect(await balance(s)).toBe(5_000n)
    })

    it('refuses a bad number, an empty or missing text, a too long text and a bad sender with a 422 naming the body field, and writes nothing', async () => {
      const s = await funded('10')
      const before = await written(s)
      const cases: [unknown, string, RegExp][] = [
        [{ mobile: '12', message: 'hi' }, 'mobile', /not a valid mobile number/],
        [{ mobile: '+254712345678', message: '' }, 'message', /message is required/],
        [{ mobile: '+254712345678' }, 'message', /message is required/],
        [{ message: 'hi' }, 'mobile', /mobile is required/],
        [{ mobile: '+254712345678', message: 'x'.repeat(153 * 10 + 1) }, 'message', /longer than 10 pages/],
        [{ mobile: '+254712345678', message: 'hi', sender: 'Far too long a sender' }, 'sender', /sender/],
        [{ mobile: '+254712345678', message: 42 }, 'message', /must be a string/],
      ]
      for (const [body, field, message] of cases) {
        const res = await send(s, body)
        expect(res.status, JSON.stringify(body)).toBe(422)
        expect(res.body.code).toBe('VALIDATION_FAILED')
        expect(res.body.details, JSON.stringify(body)).toContainEqual({ field, message: expect.stringMatching(message) })
      }
      expect((await send(s, ['not', 'an', 'object'])).status).toBe(400)
      const text = await kit.rest('POST', '/api/sms/send', { key: s.key, rawBody: 'mobile=1', headers: { 'content-type': 'text/plain' } })
      expect(text.status).toBe(415)
      expect((await kit.rest('POST', '/api/sms/send', { body: { mobile: '+254712345678', message: 'hi' } })).status).toBe(401)
      expect(await written(s)).toEqual(before)
    })

    it('with Idempotency-Key a repeat answers the first message and charges once', async () => {
      const s = await funded('10')
      const first = await send(s, { mobile: '+254712345678', message: 'once' }, { 'idempotency-key': 'order-1' })
      const again = await send(s, { mobile: '+254712345678', message: 'once' }, { 'idempotency-key': 'order-1' })
      expect(again.status).toBe(200)
      expect(again.headers.get('idempotency-replayed')).toBe('true')
      expect(again.body).toEqual(first.body)
      expect(await written(s)).toMatchObject({ messages: 1, balance: 92_000n })
      const other = await send(s, { mobile: '+254712345678', message: 'another' }, { 'idempotency-key': 'order-1' })
      expect(other.status).toBe(422)
      expect(other.body.code).toBe('IDEMPOTENCY_KEY_REUSED')
    })
  })

  describe('POST /api/sms/send-to-group', () => {
    it('sends one message to each contact, charged once for all', async () => {
      const s = await funded('10', '0.8', 3)
      const res = await sendToGroup(s, { group: s.group.id, message: 'Doors open at 6pm', sender: 'ACME' })
      expect(res.status).toBe(200)
      const mobiles = s.contacts.map((c) => c.mobile).sort()
      expect(res.body).toEqual({
        reference: anyUuid(),
        group: s.group.id,
        status: 'SENT',
        recipients: 3,
        pages: 1,
        costPerPage: '0.8000',
        creditsDeducted: '2.4000',
        messages: mobiles.map((mobile) => ({ reference: anyUuid(), mobile, status: 'SENT' })),
      })
      expect(await balance(s)).toBe(100_000n - 24_000n)
      const rows = await kit.db.message.findMany({ where: { accountId: s.account.id }, orderBy: { mobile: 'asc' } })
      expect(rows.map((m) => [m.mobile, m.creditsDeducted, m.sender, m.status])).toEqual(mobiles.map((m) => [m, 8_000n, 'ACME', 'SENT']))
      const report = await kit.rest('GET', `/api/sms/delivery-report/${res.body.messages[0].reference}`, { key: s.key })
      expect(report.body).toMatchObject({ mobile: mobiles[0], status: 'SENT', creditsDeducted: '0.8000' })
    })

    it('all or nothing on credit: short for one contact, nobody is sent to and nothing is charged (NOCREDT)', async () => {
      const s = await funded('2.3999', '0.8', 3)
      const res = await sendToGroup(s, { group: s.group.id, message: 'hi' })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ status: 'NOCREDT', recipients: 3, creditsDeducted: '0.0000', messages: [] })
      expect(await written(s)).toEqual({ messages: 0, bulkSends: 1, balance: 23_999n })
    })

    it('an unknown or another account’s group is a 404; a group without contacts, a bad sender, an empty or too long text a 422; nothing is written', async () => {
      const s = await funded('10', '0.8', 2)
      const other = await funded('10', '0.8', 2)
      const empty = await kit.rest('POST', '/api/contact/group/create', { key: s.key, body: { name: 'Nobody here' } })
      const before = await written(s)
      for (const group of ['5d8e2f0a-7b3c-4e19-a6d4-2c1f9b0e7a55', other.group.id, 'not-a-uuid']) {
        const res = await sendToGroup(s, { group, message: 'hi' })
        expect(res.status, group).toBe(404)
        expect(res.body).toEqual({ error: 'Group not found', code: 'NOT_FOUND' })
      }
      const cases: [unknown, string, RegExp][] = [
        [{ group: empty.body.reference, message: 'hi' }, 'group', /no contacts/],
        [{ group: s.group.id, message: '' }, 'message', /message is required/],
        [{ group: s.group.id, message: 'x'.repeat(153 * 10 + 1) }, 'message', /longer than 10 pages/],
        [{ group: s.group.id, message: 'hi', sender: '!!' }, 'sender', /sender/],
        [{ message: 'hi' }, 'group', /group is required/],
      ]
      for (const [body, field, message] of cases) {
        const res = await sendToGroup(s, body)
        expect(res.status, JSON.stringify(body)).toBe(422)
        expect(res.body.details).toContainEqual({ field, message: expect.stringMatching(message) })
      }
      expect(await written(s)).toEqual(before)
      expect(await written(other)).toMatchObject({ messages: 0, bulkSends: 0 })
    })

    it('with Idempotency-Key a repeat answers the same bulk send; another request under the key is refused', async () => {
      const s = await funded('10', '0.8', 2)
      const first = await sendToGroup(s, { group: s.group.id, message: 'once' }, { 'idempotency-key': 'bulk-1' })
      const again = await sendToGroup(s, { group: s.group.id, message: 'once' }, { 'idempotency-key': 'bulk-1' })
      expect(again.headers.get('idempotency-replayed')).toBe('true')
      expect(again.body).toEqual(first.body)
      expect(await written(s)).toEqual({ messages: 2, bulkSends: 1, balance: 100_000n - 16_000n })
      const other = await sendToGroup(s, { group: s.group.id, message: 'twice' }, { 'idempotency-key': 'bulk-1' })
      expect(other.status).toBe(422)
      expect(other.body.code).toBe('IDEMPOTENCY_KEY_REUSED')
    })

    /**
     * The state a crash half-way leaves, made by the real steps: the bulk send recorded and charged
     * (recordBulkSend), then the first recipient handed over (one handOver of 1), then nothing more.
     */
    async function crashedHalfWay(s: Seeded, key: string | null) {
      const recorded = await recordBulkSend(kit.deps, s.account.id, { groupId: s.group.id, message: 'resume me' }, { idempotencyKey: key })
      expect(recorded.status).toBe('SENDING')
      expect(await handOver(kit.deps, recorded.id, leaseToken('crashed', clock.now()), { limit: 1 })).toBe(1)
      const firstMessage = await kit.db.message.findFirstOrThrow({ where: { accountId: s.account.id } })
      return { id: recorded.id, firstMessage }
    }

    async function expectEachContactOnce(s: Seeded, bulkId: string) {
      const recipients = await kit.db.bulkSendRecipient.findMany({ where: { bulkSendId: bulkId }, include: { message: true } })
      expect(recipients).toHaveLength(s.contacts.length)
      expect(recipients.every((r) => r.message !== null)).toBe(true)
      const messages = await kit.db.message.findMany({ where: { accountId: s.account.id } })
      expect(messages.map((m) => m.mobile).sort()).toEqual(s.contacts.map((c) => c.mobile).sort())
      // Charged once, at the record: 3 × 0.8.
      expect(await balance(s)).toBe(100_000n - 24_000n)
      expect(messages.reduce((sum, m) => sum + m.creditsDeducted, 0n)).toBe(24_000n)
      expect((await kit.db.bulkSend.findUniqueOrThrow({ where: { id: bulkId } })).status).toBe('SENT')
    }

    it('a retry with the same Idempotency-Key after a crash half-way sends to the remaining contacts only', async () => {
      const s = await funded('10', '0.8', 3)
      const { id, firstMessage } = await crashedHalfWay(s, 'bulk-crash')
      const retry = await sendToGroup(s, { group: s.group.id, message: 'resume me' }, { 'idempotency-key': 'bulk-crash' })
      expect(retry.status).toBe(200)
      expect(retry.body).toMatchObject({ reference: id, status: 'SENT', recipients: 3, creditsDeducted: '2.4000' })
      expect(retry.body.messages).toHaveLength(3)
      expect(retry.body.messages).toContainEqual({ reference: firstMessage.id, mobile: firstMessage.mobile, status: expect.any(String) })
      await expectEachContactOnce(s, id)
    })

    it('without a key, the worker resumes it once its lease has passed, sending to the remaining contacts only', async () => {
      const s = await funded('10', '0.8', 3)
      const { id } = await crashedHalfWay(s, null)
      await runWorkerTick(kit.deps, 'test-worker')
      // Within the lease nothing is resumed: the handler may still be running.
      expect(await kit.db.message.count({ where: { accountId: s.account.id } })).toBe(1)
      clock.advance(LEASE_MS + 1)
      await runWorkerTick(kit.deps, 'test-worker')
      await expectEachContactOnce(s, id)
      clock.advance(LEASE_MS + 1)
      await runWorkerTick(kit.deps, 'test-worker')
      expect(await kit.db.message.count({ where: { accountId: s.account.id } })).toBe(3)
    })

    it('two continuations at once still give each contact one message', async () => {
      const s = await funded('10', '0.8', 3)
      const recorded = await recordBulkSend(kit.deps, s.account.id, { groupId: s.group.id, message: 'race' })
      const statuses = await Promise.all([
        continueBulkSend(kit.deps, recorded.id, leaseToken('a', clock.now())),
        continueBulkSend(kit.deps, recorded.id, leaseToken('b', clock.now())),
      ])
      expect(statuses).toEqual(['SENT', 'SENT'])
      await expectEachContactOnce(s, recorded.id)
    })

    it('a group of 1,500 contacts: one answer lists every message (loaded in chunks, within the database parameter limit)', async () => {
      const s = await funded('10000', '0.8', 1500)
      const res = await sendToGroup(s, { group: s.group.id, message: 'everyone' })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ status: 'SENT', recipients: 1500, creditsDeducted: '1200.0000' })
      expect(new Set(res.body.messages.map((m: { mobile: string }) => m.mobile)).size).toBe(1500)
    }, 120_000)

    it('GraphQL: sendSmsToGroup takes the group’s global id and answers each recipient’s message', async () => {
      const s = await funded('10', '0.8', 2)
      const data = await kit.gql(
        `mutation($input: SendSmsToGroupInput!) {
          sendSmsToGroup(input: $input) { uuid groupUuid status recipientCount creditsDeducted recipients { mobile message { to status } } }
        }`,
        { input: { groupId: encodeNodeId('Group', s.group.id), message: 'from GraphQL' } },
        s.key,
      )
      expect(data.sendSmsToGroup).toEqual({
        uuid: anyUuid(),
        groupUuid: s.group.id,
        status: 'SENT',
        recipientCount: 2,
        creditsDeducted: '1.6000',
        recipients: s.contacts
          .map((c) => c.mobile)
          .sort()
          .map((mobile) => ({ mobile, message: { to: mobile, status: 'SENT' } })),
      })
      const missing = await kit.graphql(
        `mutation { sendSmsToGroup(input: { groupId: "5d8e2f0a-7b3c-4e19-a6d4-2c1f9b0e7a55", message: "x" }) { uuid } }`,
        {},
        s.key,
      )
      expect(missing.errors?.[0]?.extensions.code).toBe('NOT_FOUND')
    })
  })
})
