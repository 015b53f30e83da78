// SMPP crash safety (docs/sms.md "Crashes"): the real server, bound to the test kit's SMSC, is killed
// with SIGKILL between a submit_sm and the recording of its answer. No message may reach the SMSC
// twice, and every charged message must end with a status that agrees with the balance.
//   npm run test:crash -- test/crash/smpp-crash.test.ts
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { targets, type TestDatabase } from '../kit/databases.js'
import { startSmsc, type Smsc } from '../kit/smsc.js'
import { applyMigrations } from '../../src/db/migrate.js'
import { openDatabase, type Database } from '../../src/db/client.js'
import { parseEnv } from '../../src/core/env.js'
import { createDeps, type Deps } from '../../src/deps.js'
import { createAccount } from '../../src/accounts/create-account.js'
import { freePort, kill9, startServer, stop, type ServerProcess } from './server-process.js'

const KILLS = Number(process.env.CRASH_KILLS ?? 4)
const LEASE_MS = 3_000
const PRICE = 10_000n
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const SEND = `mutation($input: SendSmsInput!) { sendSms(input: $input) { id: uuid status } }`

describe.each(targets)('SMPP crash safety on $name', (target) => {
  let handle: TestDatabase
  let database: Database
  let deps: Deps
  let smsc: Smsc
  let key: string
  let accountId: string
  let port: number
  const sent = new Map<string, string>() // text -> message id (when the answer came back)
  const texts: string[] = []

  const env = () => ({
    DATABASE_URL: handle.url,
    SMS_GATEWAY: 'smpp',
    SMPP_URL: smsc.url,
    SMPP_ENQUIRE_LINK_MS: '1000',
    WORKER_LEASE_MS: String(LEASE_MS),
    SMS_SUBMIT_DEADLINE_MS: '600000',
    WORKER_ENABLED: 'true',
    RATE_LIMIT_PER_SECOND: '0',
  })

  function send(server: ServerProcess, text: string) {
    texts.push(text)
    return fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: SEND, variables: { input: { to: '+254711300001', message: text } } }),
    })
      .then((r) => r.json() as Promise<{ data?: { sendSms: { id: string } } }>)
      .then((body) => {
        if (body.data) sent.set(text, body.data.sendSms.id)
      })
      .catch(() => undefined) // killed mid-request
  }

  beforeAll(async () => {
    handle = await target.create()
    await applyMigrations(handle.url)
    database = await openDatabase(handle.url)
    deps = createDeps(database, parseEnv({ DATABASE_URL: handle.url, LOG_LEVEL: 'silent' }))
    const made = await createAccount(deps, { name: 'Crash' })
    key = made.apiKey
    accountId = made.account.id
    await deps.db.account.update({ where: { id: accountId }, data: { creditBalance: 1_000_000n * PRICE, pricePerPage: PRICE } })
    smsc = await startSmsc()
    port = await freePort()
  })
  afterAll(async () => {
    await smsc?.close()
    await database?.close()
    await handle?.drop()
  })

  it('never sends a message twice when killed before the answer is recorded, and settles every message', async () => {
    for (let life = 0; life < KILLS; life++) {
      // Odd lives: the SMSC never answers, so every kill lands between submit_sm and its answer.
      // Even lives: it answers (with receipts), and the kill lands anywhere in a burst.
      smsc.options.submit = life % 2 === 0 ? 'silent' : 'accept'
      smsc.options.autoReceipt = life % 2 === 0 ? null : { stat: 'DELIVRD', when: 'after' }
      const server = await startServer(env(), port)
      await smsc.waitFor('the bind', () => smsc.bound.length > 0, 60_000)
      const before = smsc.submits.length
      const burst = Array.from({ length: 20 }, (_, i) => send(server, `life ${life} message ${i}`))
      await smsc.waitFor('submits in flight', () => smsc.submits.length >= before + 5, 60_000)
      await kill9(server)
      await Promise.all(burst)
    }
    // The last life settles what the others left: leases pass, the sweeper finishes every submission.
    smsc.options.submit = 'accept'
    smsc.options.autoReceipt = { stat: 'DELIVRD', when: 'after' }
    const server = await startServer(env(), port)
    try {
      const deadline = Date.now() + 120_000
      while ((await deps.db.smsSubmission.count({ where: { state: 'pending' } })) > 0) {
        if (Date.now() > deadline) throw new Error('submissions still pending after 120 s')
        await sleep(200)
      }
    } finally {
      await stop(server)
    }
    // SIGTERM unbinds (the killed lives never did).
    expect(smsc.unbinds).toBe(1)

    // No text reached the SMSC twice.
    const counts = new Map<string, number>()
    for (const r of smsc.submits) counts.set(r.text, (counts.get(r.text) ?? 0) + 1)
    const twice = [...counts].filter(([, n]) => n > 1)
    expect(twice).toEqual([])

    // Every message charged is settled, and the balance agrees with the messages.
    const messages = await deps.db.message.findMany({ where: { accountId }, include: { submission: true } })
    expect(messages.length).toBeGreaterThan(0)
    for (const m of messages) {
      expect(m.submission?.state).not.toBe('pending')
      const reached = counts.get(m.text) ?? 0
      if (m.status === 'UNKNOWN') expect(m.carrierErrorCode).toBe('SUBMIT_UNCONFIRMED')
      // A message the SMSC never saw was never reported sent: refused, or UNKNOWN when the process
      // died between writing the part's row and the PDU leaving (the two cannot be one step).
      if (reached === 0) expect(['FAILED', 'UNKNOWN']).toContain(m.status)
    }
    const account = await deps.db.account.findUniqueOrThrow({ where: { id: accountId } })
    const charged = messages.reduce((sum, m) => sum + m.creditsDeducted, 0n)
    expect(account.creditBalance).toBe(1_000_000n * PRICE - charged)
    // What became of the messages killed before their answer: UNKNOWN, charged, never resent.
    expect(messages.some((m) => m.status === 'UNKNOWN')).toBe(true)
  }, 900_000)
})
