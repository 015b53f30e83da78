// Crash safety: the real server is killed with SIGKILL at random points while SMS bursts, large
// add-contacts batches, webhook deliveries and group edits are under way; after every kill the
// database must satisfy the invariants of docs/reliability.md ("Crash safety").
//   npm run test:crash                      SQLite (and PostgreSQL when TEST_DATABASE_URL is set)
//   CRASH_KILLS=30 npm run test:crash       more kills per database (each hits every scenario)
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { targets, type TestDatabase } from '../kit/databases.js'
import { startReceiver } from '../kit/receiver.js'
import { applyMigrations } from '../../src/db/migrate.js'
import { openDatabase, type Database } from '../../src/db/client.js'
import { parseEnv } from '../../src/core/env.js'
import { createDeps, type Deps } from '../../src/deps.js'
import { createAccount } from '../../src/accounts/create-account.js'
import { createGroup } from '../../src/messaging/groups.js'
import { setWebhook } from '../../src/webhooks/endpoints.js'
import { freePort, kill9, startServer, stop, type ServerProcess } from './server-process.js'
import { sentMessageRow } from '../kit/seed.js'

const KILLS = Number(process.env.CRASH_KILLS ?? 10)
/** The worker's webhook concurrency (createDispatcher's default): the most a kill may re-send. */
const DISPATCH_CONCURRENCY = 50
// Short, so that leftovers of a kill are resubmitted (after the lease) or refunded (after the
// deadline) within the run. The lease also bounds webhook requests (half of it: 1.5 s).
const DEADLINE_MS = 5_000
const LEASE_MS = 3_000
const SERVER_ENV = {
  RATE_LIMIT_PER_SECOND: '0',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  SANDBOX_DELIVERY_DELAY_MS: '300',
  SMS_SUBMIT_DEADLINE_MS: String(DEADLINE_MS),
  WORKER_LEASE_MS: String(LEASE_MS),
  WORKER_ENABLED: 'true',
  // One account's 4,000 deliveries to a receiver answering in 100-400 ms: crash safety is the
  // question here, not fairness between accounts, so the endpoint may use every slot.
  WEBHOOK_ENDPOINT_CONCURRENCY: '50',
}
const CREDIT = 100_000_000n * 10_000n
const PRICE = 10_000n
const BATCH = 300
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const random = (min: number, max: number) => min + Math.floor(Math.random() * (max - min))

type Scenario = 'sendSms bursts' | 'add-contacts batches' | 'webhook delivery' | 'group edits'
const SCENARIOS: Scenario[] = ['sendSms bursts', 'add-contacts batches', 'webhook delivery', 'group edits']

class Tally {
  kills = 0
  checks = 0
  work = 0
  readonly violations: string[] = []
  check(ok: boolean, what: string) {
    this.checks++
    if (!ok) this.violations.push(what)
  }
}

interface Setup {
  key: string
  accountId: string
  batchGroup: string
  editGroup: string
}

async function call(
  server: ServerProcess,
  key: string,
  path: string,
  init: { method: string; body?: unknown; headers?: Record<string, string> },
) {
  const res = await fetch(`${server.url}${path}`, {
    method: init.method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(30_000),
  })
  return { status: res.status, body: (await res.json()) as any }
}

const SEND = `mutation($input: SendSmsInput!) { sendSms(input: $input) { id: uuid status } }`

describe.each(targets)('crash safety on $name', (target) => {
  let handle: TestDatabase
  let database: Database
  let deps: Deps
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  const tallies = Object.fromEntries(SCENARIOS.map((s) => [s, new Tally()])) as Record<Scenario, Tally>
  const duplicatesPerKill: number[] = []
  const restartMs: number[] = []

  beforeAll(async () => {
    handle = await target.create()
    await applyMigrations(handle.url)
    database = await openDatabase(handle.url)
    deps = createDeps(database, parseEnv({ DATABASE_URL: handle.url, LOG_LEVEL: 'silent', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }))
    // The receiver answers after a while, so that a kill finds deliveries in flight.
    receiver = await startReceiver((_req, res) => void setTimeout(() => res.end('ok'), random(100, 400)))
    const { account, apiKey } = await createAccount(deps, { name: 'Crash' })
    await deps.db.account.update({ where: { id: account.id }, data: { creditBalance: CREDIT, pricePerPage: PRICE } })
    await setWebhook(deps, account.id, receiver.url)
    const batchGroup = (await createGroup(deps, account.id, { name: 'Batches' })).group.id
    const editGroup = (await createGroup(deps, account.id, { name: 'Edit 0', description: 'Desc 0' })).group.id
    const setup: Setup = { key: apiKey, accountId: account.id, batchGroup, editGroup }
    // A second account whose status updates queue up faster than the receiver takes them, so that
    // every kill finds the dispatcher mid-batch (the SMS bursts add their own updates).
    const hooks = await createAccount(deps, { name: 'Hooks' })
    const hookEndpoint = await setWebhook(deps, hooks.account.id, receiver.url)
    const hookMessage = await deps.db.message.create({ data: sentMessageRow(hooks.account.id) })
    let updates = 0

    const port = await freePort()
    const sms = new SmsBursts(setup)
    const contacts = new ContactBatches(setup)
    const edits = new GroupEdits(setup)
    const lives: { start: number; kill: number }[] = []

    for (let kill = 0; kill <= KILLS; kill++) {
      const spawned = Date.now()
      const server = await startServer({ ...SERVER_ENV, DATABASE_URL: handle.url }, port)
      restartMs.push(Date.now() - spawned)
      const life = { start: spawned, kill: Infinity }
      lives.push(life)
      // What the previous life left unanswered is asked again: same key, same answer.
      await sms.replay(server, deps, tallies['sendSms bursts'])
      if (kill === KILLS) {
        await settle(server)
        await stop(server)
        break
      }
      const now = new Date()
      await deps.db.webhookDelivery.createMany({
        data: Array.from({ length: 400 }, () => ({
          id: `msg_${String(updates++).padStart(32, '0')}`,
          accountId: hooks.account.id,
          endpointId: hookEndpoint.id,
          messageId: hookMessage.id,
          body: JSON.stringify({ reference: hookMessage.id, update: updates }),
          nextAttemptAt: now,
          createdAt: now,
        })),
      })
      const running = [sms.run(server), contacts.run(server), edits.run(server)]
      // Kill once every workload is under way (a fresh process answers slowly at first), at a random point.
      const warm = Date.now() + 20_000
      while (!(sms.sent > sms.sentBefore && contacts.started && edits.sent > edits.sentBefore) && Date.now() < warm) await sleep(20)
      await sleep(random(100, 1500))
      await kill9(server)
      life.kill = Date.now()
      await Promise.allSettled(running)
      sms.sentBefore = sms.sent
      edits.sentBefore = edits.sent
      for (const t of Object.values(tallies)) t.kills++
      // The database as the dead process left it.
      await sms.check(deps, tallies['sendSms bursts'], false)
      await contacts.check(deps, tallies['add-contacts batches'])
      await edits.check(deps, tallies['group edits'])
      await checkWebhooks(false)
    }
    tallies['sendSms bursts'].work = sms.sent
    tallies['add-contacts batches'].work = contacts.batches.length
    tallies['group edits'].work = edits.sent
    tallies['webhook delivery'].work = receiver.received.length
    await sms.check(deps, tallies['sendSms bursts'], true)
    await contacts.check(deps, tallies['add-contacts batches'])
    await edits.check(deps, tallies['group edits'])
    await checkWebhooks(true)

    /** Last life: let the sweeper, the sandbox and the dispatcher finish (the deadline has passed). */
    async function settle(server: ServerProcess) {
      const until = Date.now() + DEADLINE_MS + LEASE_MS + 60_000
      await sleep(DEADLINE_MS + LEASE_MS)
      while (Date.now() < until) {
        const open =
          (await deps.db.message.count({ where: { accountId: setup.accountId, done: false } })) +
          (await deps.db.smsSubmission.count({ where: { state: 'pending' } }))
        const ids = new Set(receiver.received.map((r) => r.headers['webhook-id']))
        const deliveries = await deps.db.webhookDelivery.findMany({ select: { id: true } })
        if (!open && deliveries.every((d) => ids.has(d.id))) return
        await sleep(250)
      }
      void server
    }

    async function checkWebhooks(final: boolean) {
      const t = tallies['webhook delivery']
      const deliveries = await deps.db.webhookDelivery.findMany({ select: { id: true, state: true } })
      const received = new Map<string, number>()
      for (const r of receiver.received)
        received.set(r.headers['webhook-id'] as string, (received.get(r.headers['webhook-id'] as string) ?? 0) + 1)
      // A delivery is marked delivered only after the receiver answered 2xx.
      for (const d of deliveries.filter((d) => d.state === 'delivered'))
        t.check(received.has(d.id), `delivery ${d.id} marked delivered, never received`)
      if (!final) return
      for (const d of deliveries) t.check(received.has(d.id), `delivery ${d.id} never received`)
      // Where the deliveries that never arrived stand (state, attempts, lease, due): the first clue to why.
      const missing = new Set(deliveries.filter((d) => !received.has(d.id)).map((d) => d.id))
      if (missing.size) {
        const rows = await deps.db.webhookDelivery.findMany({
          select: { id: true, state: true, attempts: true, leaseUntil: true, nextAttemptAt: true },
        })
        const where: Record<string, number> = {}
        for (const d of rows.filter((d) => missing.has(d.id))) {
          const key = `${d.state}, ${d.attempts} attempts, ${d.leaseUntil ? 'leased' : 'not leased'}, ${d.nextAttemptAt.getTime() > Date.now() ? 'not due' : 'due'}`
          where[key] = (where[key] ?? 0) + 1
        }
        console.log(`crash ${target.name}: ${missing.size} deliveries never received: ${JSON.stringify(where)}`)
      }
      // What kill k makes the dispatcher send again: the POSTs the receiver got during that life
      // whose attempt the process never recorded (a recorded failure, say a timeout, is a retry
      // by schedule, not a crash duplicate). They go out again once the lease has passed.
      const attempts = await deps.db.webhookAttempt.findMany({ select: { createdAt: true } })
      for (const life of lives.filter((l) => l.kill !== Infinity)) {
        const got = receiver.received.filter((r) => r.at >= life.start && r.at <= life.kill).length
        const recorded = attempts.filter((a) => a.createdAt.getTime() >= life.start && a.createdAt.getTime() <= life.kill).length
        duplicatesPerKill.push(got - recorded)
        t.check(
          got - recorded <= DISPATCH_CONCURRENCY,
          `a kill left ${got - recorded} deliveries sent but unrecorded (> ${DISPATCH_CONCURRENCY})`,
        )
      }
    }
  }, 600_000)

  afterAll(async () => {
    const dups = duplicatesPerKill.length ? duplicatesPerKill : [0]
    for (const s of SCENARIOS) {
      const t = tallies[s]
      const extra =
        s === 'webhook delivery'
          ? `, duplicates per kill max ${Math.max(...dups)} mean ${(dups.reduce((a, b) => a + b, 0) / dups.length).toFixed(1)} (bound ${DISPATCH_CONCURRENCY})`
          : ''
      console.log(
        `crash ${target.name} ${s}: ${t.kills} kills, ${t.work} operations, ${t.checks} invariant checks, ${t.violations.length} violations${extra}`,
      )
    }
    const mean = restartMs.reduce((a, b) => a + b, 0) / Math.max(1, restartMs.length)
    console.log(`crash ${target.name}: ${restartMs.length} server starts, mean ${Math.round(mean)} ms to ready`)
    await receiver?.close()
    await database?.close()
    await handle?.drop()
  })

  it.each(SCENARIOS)('%s: every invariant holds after every kill', (scenario) => {
    const t = tallies[scenario]
    expect(t.kills).toBe(KILLS)
    expect(t.work).toBeGreaterThan(0)
    expect(t.violations.slice(0, 20)).toEqual([])
  })
})

/**
 * Concurrent sendSms, each with its own Idempotency-Key. Invariants: balance = credit - what the
 * messages still hold (refunds give it back); an answered send is never lost; a refunded submission
 * is FAILED with nothing held; a submitted one has its gateway id; at most one final report per
 * message; a replayed key answers the same message; and, once the deadline has passed, every
 * message is final.
 */
class SmsBursts {
  sent = 0
  sentBefore = 0
  private n = 0
  /** key -> the id the server answered (null: no answer, the process died). */
  private readonly keys = new Map<string, string | null>()
  constructor(private readonly setup: Setup) {}

  async run(server: ServerProcess) {
    const sender = async (lane: number) => {
      for (;;) {
        const key = `crash-${lane}-${this.n++}`
        this.keys.set(key, null)
        try {
          const res = await call(server, this.setup.key, '/graphql', {
            method: 'POST',
            headers: { 'idempotency-key': key },
            body: { query: SEND, variables: { input: { to: '+254712345678', message: `burst ${key}`, sender: 'CRASH' } } },
          })
          if (res.body.data?.sendSms) this.keys.set(key, res.body.data.sendSms.id)
          this.sent++
        } catch {
          return // the server is gone
        }
      }
    }
    await Promise.all(Array.from({ length: 8 }, (_, i) => sender(i)))
  }

  async replay(server: ServerProcess, deps: Deps, t: Tally) {
    const unanswered = [...this.keys].filter(([, id]) => id === null).map(([key]) => key)
    const replayOnce = (key: string) =>
      call(server, this.setup.key, '/graphql', {
        method: 'POST',
        headers: { 'idempotency-key': key },
        body: { query: SEND, variables: { input: { to: '+254712345678', message: `burst ${key}`, sender: 'CRASH' } } },
      })
    const before = new Map<string, string | undefined>()
    for (const key of unanswered) {
      const first = await deps.db.message.findFirst({
        where: { accountId: this.setup.accountId, idempotencyKey: key },
        select: { id: true },
      })
      before.set(key, first?.id)
    }
    let answers = await Promise.all(unanswered.map(async (key) => [key, await replayOnce(key)] as const))
    // A killed request's claim on its key holds until the lease passes: 409 CONFLICT, "still being
    // processed", as the contract says for a request still running. Wait for it once, then retry.
    if (answers.some(([, res]) => res.status === 409)) {
      await sleep(LEASE_MS + 500)
      answers = await Promise.all(answers.map(async ([key, res]) => [key, res.status === 409 ? await replayOnce(key) : res] as const))
    }
    for (const [key, res] of answers) {
      const id = res.body.data?.sendSms?.id ?? null
      t.check(id !== null, `replay of ${key} failed: ${JSON.stringify(res.body)}`)
      const first = before.get(key)
      if (first) t.check(id === first, `replay of ${key} answered ${id}, the first request made ${first}`)
      this.keys.set(key, id)
    }
  }

  async check({ db }: Deps, t: Tally, final: boolean) {
    const accountId = this.setup.accountId
    const [account, held, messages] = await Promise.all([
      db.account.findUniqueOrThrow({ where: { id: accountId }, select: { creditBalance: true } }),
      db.message.aggregate({ where: { accountId }, _sum: { creditsDeducted: true } }),
      db.message.findMany({
        where: { accountId },
        select: {
          id: true,
          idempotencyKey: true,
          status: true,
          done: true,
          creditsDeducted: true,
          gatewayMessageId: true,
          submission: { select: { state: true } },
          updates: { select: { status: true } },
        },
      }),
    ])
    t.check(
      account.creditBalance === CREDIT - (held._sum.creditsDeducted ?? 0n),
      `balance ${account.creditBalance} != credit - held ${held._sum.creditsDeducted}`,
    )
    const byKey = new Map(messages.map((m) => [m.idempotencyKey, m]))
    for (const [key, id] of this.keys) if (id) t.check(byKey.get(key)?.id === id, `answered message ${id} (${key}) lost`)
    for (const m of messages) {
      const state = m.submission?.state
      if (state === 'refunded')
        t.check(m.status === 'FAILED' && m.done && m.creditsDeducted === 0n, `refunded ${m.id} is ${m.status} holding ${m.creditsDeducted}`)
      else t.check(m.creditsDeducted === PRICE, `${m.id} (${state}) holds ${m.creditsDeducted}`)
      if (state === 'submitted') t.check(m.gatewayMessageId === `sandbox-${m.id}`, `submitted ${m.id} has gateway id ${m.gatewayMessageId}`)
      t.check(m.updates.filter((u) => u.status !== 'PENDING' && u.status !== 'SENT').length <= 1, `${m.id} has two final reports`)
      t.check(m.updates.filter((u) => u.status === 'SENT').length <= 1, `${m.id} was marked SENT twice`)
      if (final) {
        t.check(m.done, `${m.id} still ${m.status} after the deadline`)
        t.check(state === 'submitted' || state === 'refunded', `${m.id} submission still ${state} after the deadline`)
      }
    }
  }
}

/**
 * add-contacts batches of 300 new contacts (organization names the batch) into one group: after a
 * kill each batch is all there (contacts and memberships) or not at all, and an answered one is all there.
 */
class ContactBatches {
  readonly batches: { marker: string; answered: boolean }[] = []
  started = false
  constructor(private readonly setup: Setup) {}

  async run(server: ServerProcess) {
    this.started = false
    for (;;) {
      const b = this.batches.length
      const batch = { marker: `batch-${b}`, answered: false }
      this.batches.push(batch)
      const contacts = Array.from({ length: BATCH }, (_, i) => ({
        mobile: `+2547${String(20_000_000 + b * BATCH + i)}`,
        first_name: `B${b} P${i}`,
        organization: batch.marker,
      }))
      try {
        const request = call(server, this.setup.key, `/api/contact/group/${this.setup.batchGroup}/add-contacts`, {
          method: 'POST',
          body: { contacts },
        })
        this.started = true
        const res = await request
        batch.answered = res.status === 200
      } catch {
        return
      }
    }
  }

  async check({ db }: Deps, t: Tally) {
    const accountId = this.setup.accountId
    const counts = await db.contact.groupBy({ by: ['organization'], where: { accountId }, _count: { _all: true } })
    const members = await db.contact.groupBy({
      by: ['organization'],
      where: { accountId, memberships: { some: { groupId: this.setup.batchGroup } } },
      _count: { _all: true },
    })
    const contactsOf = new Map(counts.map((c) => [c.organization, c._count._all]))
    const membersOf = new Map(members.map((c) => [c.organization, c._count._all]))
    for (const b of this.batches) {
      const c = contactsOf.get(b.marker) ?? 0
      const m = membersOf.get(b.marker) ?? 0
      t.check(c === 0 || c === BATCH, `${b.marker}: ${c} of ${BATCH} contacts`)
      t.check(m === c, `${b.marker}: ${m} memberships for ${c} contacts`)
      if (b.answered) t.check(c === BATCH, `${b.marker} was answered but has ${c} contacts`)
    }
  }
}

/**
 * One group renamed again and again, with its description, SIM and opt-in/out codes: after a kill
 * the group shows one whole edit (name, description and codes of the same k), its SIM code rows
 * match its codes, and no answered edit is lost.
 */
class GroupEdits {
  sent = 0
  sentBefore = 0
  private k = 0
  private lastAnswered = 0
  constructor(private readonly setup: Setup) {}

  async run(server: ServerProcess) {
    for (;;) {
      const k = ++this.k
      try {
        const res = await call(server, this.setup.key, `/api/contact/group/${this.setup.editGroup}/update`, {
          method: 'PATCH',
          body: {
            name: `Edit ${k}`,
            description: `Desc ${k}`,
            subscription_sim: '+254700000999',
            optin_code: `in${k}`,
            optout_code: `out${k}`,
          },
        })
        if (res.status === 200) this.lastAnswered = k
        this.sent++
      } catch {
        return
      }
    }
  }

  async check({ db }: Deps, t: Tally) {
    const group = await db.group.findUniqueOrThrow({ where: { id: this.setup.editGroup } })
    const codes = await db.simCode.findMany({ where: { groupId: group.id }, orderBy: { kind: 'asc' } })
    const k = Number(/^Edit (\d+)$/.exec(group.name)?.[1] ?? -1)
    t.check(k >= this.lastAnswered && k <= this.k, `group shows edit ${k}; last answered ${this.lastAnswered}, last sent ${this.k}`)
    t.check(group.description === `Desc ${k}`, `name of edit ${k} with description ${group.description}`)
    if (k > 0) {
      t.check(
        group.optinCode === `in${k}` && group.optoutCode === `out${k}`,
        `name of edit ${k} with codes ${group.optinCode}/${group.optoutCode}`,
      )
      t.check(
        codes.map((c) => `${c.kind}:${c.code}`).join(',') === `optin:in${k},optout:out${k}`,
        `SIM codes ${codes.map((c) => c.code)} for edit ${k}`,
      )
    }
  }
}
