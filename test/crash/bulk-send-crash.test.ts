// A bulk send to a group killed half-way (SIGKILL of the real server), then resumed: by a retry
// with the same Idempotency-Key, and, without a key, by the worker once the lease has passed.
// Each contact gets exactly one message and the account is charged once (docs/sms.md, "Bulk sends").
//   npm run test:crash -- test/crash/bulk-send-crash.test.ts
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { targets, type TestDatabase } from '../kit/databases.js'
import { applyMigrations } from '../../src/db/migrate.js'
import { openDatabase, type Database } from '../../src/db/client.js'
import { parseEnv } from '../../src/core/env.js'
import { createDeps, type Deps } from '../../src/deps.js'
import { createAccount } from '../../src/accounts/create-account.js'
import { createGroup } from '../../src/messaging/groups.js'
import { parseContacts } from '../../src/messaging/contacts.js'
import { upsertContacts } from '../../src/messaging/upsert-contacts.js'
import { freePort, kill9, startServer, stop, type ServerProcess } from './server-process.js'

const CONTACTS = 1500
const PRICE = 10_000n
const CREDIT = PRICE * BigInt(CONTACTS) * 3n
const LEASE_MS = 1_000
const SERVER_ENV = { RATE_LIMIT_PER_SECOND: '0', WORKER_LEASE_MS: String(LEASE_MS), SANDBOX_DELIVERY_DELAY_MS: '60000' }
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe.each(targets)('bulk send crash on $name', (target) => {
  let handle: TestDatabase
  let database: Database
  let deps: Deps
  let key: string
  let accountId: string
  let groupId: string
  let port: number

  beforeAll(async () => {
    handle = await target.create()
    await applyMigrations(handle.url)
    database = await openDatabase(handle.url)
    deps = createDeps(database, parseEnv({ DATABASE_URL: handle.url, LOG_LEVEL: 'silent' }))
    const created = await createAccount(deps, { name: 'Bulk' })
    key = created.apiKey
    accountId = created.account.id
    await deps.db.account.update({ where: { id: accountId }, data: { creditBalance: CREDIT, pricePerPage: PRICE } })
    groupId = (await createGroup(deps, accountId, { name: 'Everyone' })).group.id
    const inputs = Array.from({ length: CONTACTS }, (_, i) => ({ mobile: `+2547${String(30_000_000 + i)}`, firstName: `P${i}` }))
    await upsertContacts(deps, accountId, parseContacts(inputs, 'KE'), groupId)
    port = await freePort()
  }, 300_000)

  afterAll(async () => {
    await database?.close()
    await handle?.drop()
  })

  const post = (server: ServerProcess, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/api/sms/send-to-group`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })

  /** Starts a bulk send on a fresh server and kills it once some, not all, recipients are handed over. */
  async function killHalfWay(message: string, headers: Record<string, string> = {}) {
    const server = await startServer({ ...SERVER_ENV, DATABASE_URL: handle.url, WORKER_ENABLED: 'false' }, port)
    let answered: number | null = null
    const request = post(server, { group: groupId, message }, headers).then(
      (res) => (answered = res.status),
      () => null,
    )
    let handed = 0
    while (handed === 0) {
      // An answer before any recipient was handed over is a failure of the request, not a crash.
      expect(answered).toBeNull()
      const bulk = await deps.db.bulkSend.findFirst({ where: { accountId, text: message }, select: { id: true } })
      if (bulk) handed = await deps.db.bulkSendRecipient.count({ where: { bulkSendId: bulk.id, messageId: { not: null } } })
      if (!handed) await pause(5)
    }
    await kill9(server)
    expect(await request).toBeNull()
    const bulk = await deps.db.bulkSend.findFirstOrThrow({ where: { accountId, text: message } })
    const atKill = await deps.db.bulkSendRecipient.count({ where: { bulkSendId: bulk.id, messageId: { not: null } } })
    // Killed half-way: some contacts have their message, the others are left.
    expect(atKill).toBeGreaterThan(0)
    expect(atKill).toBeLessThan(CONTACTS)
    return bulk.id
  }

  /** Each contact of the group has exactly one message of this bulk send, and the whole charge was taken once. */
  async function expectEachContactOnce(bulkId: string, message: string, balance: bigint) {
    const messages = await deps.db.message.findMany({
      where: { accountId, text: message },
      select: { mobile: true, creditsDeducted: true },
    })
    expect(messages).toHaveLength(CONTACTS)
    expect(new Set(messages.map((m) => m.mobile)).size).toBe(CONTACTS)
    expect(await deps.db.bulkSendRecipient.count({ where: { bulkSendId: bulkId, messageId: null } })).toBe(0)
    const account = await deps.db.account.findUniqueOrThrow({ where: { id: accountId }, select: { creditBalance: true } })
    expect(account.creditBalance).toBe(balance)
  }

  it('a retry with the same Idempotency-Key after a SIGKILL sends to the remaining contacts only', async () => {
    const bulkId = await killHalfWay('with a key', { 'idempotency-key': 'bulk-crash-1' })
    const server = await startServer({ ...SERVER_ENV, DATABASE_URL: handle.url, WORKER_ENABLED: 'false' }, port)
    try {
      // The killed request's claim on the key holds until its lease passes: 409 until then.
      let res = await post(server, { group: groupId, message: 'with a key' }, { 'idempotency-key': 'bulk-crash-1' })
      while (res.status === 409) {
        await pause(100)
        res = await post(server, { group: groupId, message: 'with a key' }, { 'idempotency-key': 'bulk-crash-1' })
      }
      expect(res.status).toBe(200)
      const body = (await res.json()) as { reference: string; status: string; messages: unknown[] }
      expect(body).toMatchObject({ reference: bulkId, status: 'SENT' })
      expect(body.messages).toHaveLength(CONTACTS)
    } finally {
      await stop(server)
    }
    await expectEachContactOnce(bulkId, 'with a key', CREDIT - PRICE * BigInt(CONTACTS))
  }, 300_000)

  it('without a key, the worker of the next server resumes it once the lease has passed', async () => {
    const bulkId = await killHalfWay('without a key')
    const server = await startServer({ ...SERVER_ENV, DATABASE_URL: handle.url, WORKER_ENABLED: 'true' }, port)
    try {
      while ((await deps.db.bulkSend.findUniqueOrThrow({ where: { id: bulkId } })).status !== 'SENT') await pause(100)
    } finally {
      await stop(server)
    }
    await expectEachContactOnce(bulkId, 'without a key', CREDIT - 2n * PRICE * BigInt(CONTACTS))
  }, 300_000)
})
