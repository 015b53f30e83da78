import { planRowChecksOnce } from '../db/row-checks.js'
import { timeOrderedId } from '../db/time-ordered-id.js'
import type { Deps } from '../deps.js'
import { AppError, isUniqueViolation, notFound, validationError } from '../core/errors.js'
import { InputRules, isStorableText } from '../messaging/input-rules.js'
import { MAX_PAGES, segment } from './encoding.js'
import { IDEMPOTENCY_KEY, SENDER_PATTERN, defaultSender } from './send-sms.js'
import { leaseToken, submitHeld } from './submit-sms.js'

type BulkDeps = Pick<Deps, 'db' | 'dbKind' | 'directRead' | 'directTransaction' | 'env' | 'clock' | 'gateway' | 'logger'> &
  Partial<Pick<Deps, 'events'>>

export interface SendSmsToGroupInput {
  groupId: string
  message: string
  sender?: string | null
}

/** SENDING: recipients are still being handed over; SENT: every recipient has its message; NOCREDT: nothing sent, nothing charged. */
export type BulkSendStatus = 'SENDING' | 'SENT' | 'NOCREDT'

/** Recipients handed over per transaction: their messages, status rows and submissions are written together. */
const CHUNK = 100
/** Submits to the gateway at once per bulk send, as the sweeper does. */
const SUBMIT_CONCURRENCY = 8

/**
 * Sends one SMS to every contact of a group. All or nothing on credit: one transaction reads the
 * group's contacts, charges the whole cost with one conditional decrement (pages × price ×
 * contacts), and records the bulk send with one recipient row per contact. Short of credit, the
 * bulk send is recorded NOCREDT and nothing is charged or sent. Then each recipient is handed over
 * exactly once (continueBulkSend): its Message is created, paid from the reservation, in the same
 * transaction that marks the recipient, so a crash at any point leaves every recipient either
 * with its message (which the submission sweeper finishes) or without (sent on resumption).
 *
 * Resumption: the same Idempotency-Key finds the bulk send and hands over what is left; without a
 * key, the worker takes over a bulk send whose lease has passed (resumeBulkSends).
 */
export async function sendSmsToGroup(
  deps: BulkDeps,
  accountId: string,
  input: SendSmsToGroupInput,
  options: { idempotencyKey?: string | null } = {},
): Promise<{ id: string; status: BulkSendStatus; replayed?: boolean }> {
  const recorded = await recordBulkSend(deps, accountId, input, options)
  if (recorded.status !== 'SENDING') return recorded
  return { ...recorded, status: await continueBulkSend(deps, recorded.id, leaseToken('bulk', deps.clock.now())) }
}

/**
 * The first step of sendSmsToGroup: checks the input, then records the bulk send with its
 * recipients and the whole charge in one transaction (or NOCREDT). With a key used before for the
 * same request, it answers that bulk send (`replayed`) instead. Nothing is handed over yet.
 */
export async function recordBulkSend(
  deps: BulkDeps,
  accountId: string,
  input: SendSmsToGroupInput,
  options: { idempotencyKey?: string | null } = {},
): Promise<{ id: string; status: BulkSendStatus; replayed?: boolean }> {
  const { db } = deps
  const key = options.idempotencyKey ?? null
  if (key !== null && !IDEMPOTENCY_KEY.test(key)) {
    throw validationError([{ field: 'Idempotency-Key', message: 'Idempotency-Key must be 1-255 printable ASCII characters' }])
  }
  const rules = new InputRules()
  if (typeof input.message !== 'string' || input.message.length === 0) rules.fail('message', 'message is required')
  else rules.storable('message', input.message)
  const sender = rules.optional('sender', input.sender, 15)
  if (sender && !SENDER_PATTERN.test(sender)) rules.fail('sender', 'sender must be up to 11 letters and digits, or a phone number')
  rules.check()
  const seg = segment(input.message)
  if (seg.pages > MAX_PAGES) throw validationError([{ field: 'message', message: `message is longer than ${MAX_PAGES} pages` }])
  if (!isStorableText(input.groupId)) throw notFound('Group')

  if (key !== null) {
    const first = await findByKey(deps, accountId, key, input, sender)
    if (first) return first
  }
  const group = await db.group.findFirst({ where: { id: input.groupId, accountId }, select: { id: true } })
  if (!group) throw notFound('Group')

  const now = deps.clock.now()
  const id = timeOrderedId()
  let status: BulkSendStatus
  try {
    status = await db.$transaction(async (tx) => {
      // Each recipient row's bulkSendId check planned once, not once a row: 80 to 160 ms of PostgreSQL's time at a group of 10,000.
      await planRowChecksOnce(tx, deps.dbKind)
      const account = await tx.account.findUniqueOrThrow({ where: { id: accountId }, select: { pricePerPage: true, name: true } })
      // One query with a subquery: loading the memberships' contacts would pass one IN list of every id.
      const members = (
        await tx.contact.findMany({
          where: { accountId, memberships: { some: { groupId: group.id } } },
          select: { id: true, mobile: true },
        })
      ).map((c) => ({ contactId: c.id, contact: { mobile: c.mobile } }))
      if (!members.length) throw validationError([{ field: 'group', message: 'the group has no contacts' }])
      const cost = account.pricePerPage * BigInt(seg.pages) * BigInt(members.length)
      const { count: paid } = await tx.account.updateMany({
        where: { id: accountId, creditBalance: { gte: cost } },
        data: { creditBalance: { decrement: cost } },
      })
      await tx.bulkSend.create({
        data: {
          id,
          accountId,
          groupId: group.id,
          sender: sender || defaultSender(account.name),
          text: input.message,
          encoding: seg.encoding,
          pages: seg.pages,
          costPerPage: account.pricePerPage,
          recipientCount: members.length,
          creditsDeducted: paid ? cost : 0n,
          status: paid ? 'SENDING' : 'NOCREDT',
          idempotencyKey: key,
          // The caller continues at once (its lease is taken there); a crash before leaves it to the worker after WORKER_LEASE_MS.
          leaseUntil: paid ? new Date(now.getTime() + deps.env.WORKER_LEASE_MS) : null,
          createdAt: now,
          finishedAt: paid ? null : now,
        },
      })
      if (!paid) return 'NOCREDT'
      // In chunks: one statement for thousands of rows would pass SQLite's parameter limit.
      for (let i = 0; i < members.length; i += CHUNK) {
        await tx.bulkSendRecipient.createMany({
          data: members.slice(i, i + CHUNK).map((m) => ({ bulkSendId: id, contactId: m.contactId, mobile: m.contact.mobile })),
        })
      }
      return 'SENDING'
    })
  } catch (error) {
    // The same key sent twice at once: the other request recorded it first; continue that one.
    if (key !== null && isUniqueViolation(error)) {
      const first = await findByKey(deps, accountId, key, input, sender)
      if (first) return first
    }
    throw error
  }
  return { id, status }
}

/** The bulk send an earlier request with this key recorded, or null. Another request under the key is refused. */
async function findByKey(deps: BulkDeps, accountId: string, key: string, input: SendSmsToGroupInput, sender: string | null | undefined) {
  const first = await deps.db.bulkSend.findUnique({
    where: { accountId_idempotencyKey: { accountId, idempotencyKey: key } },
    select: { id: true, status: true, groupId: true, text: true, sender: true },
  })
  if (!first) return null
  if (first.groupId !== input.groupId || first.text !== input.message || (sender && first.sender !== sender)) {
    throw new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request', [
      { field: 'Idempotency-Key', message: 'already used for another bulk send' },
    ])
  }
  return { id: first.id, status: first.status as BulkSendStatus, replayed: true }
}

/** A recipient handed over by someone else meanwhile: the chunk is rolled back and read again. */
class RecipientTaken extends Error {}

/**
 * Hands the recipients still without a message over until none is left, then marks the bulk send
 * SENT. Several callers at once are safe, only slower (each renews the lease, which only keeps the
 * worker away). Returns the bulk send's status (NOCREDT or SENT at once when it is not SENDING).
 */
export async function continueBulkSend(deps: BulkDeps, bulkId: string, token: string): Promise<BulkSendStatus> {
  const bulk = await deps.db.bulkSend.findUniqueOrThrow({ where: { id: bulkId }, select: { status: true } })
  if (bulk.status !== 'SENDING') return bulk.status as BulkSendStatus
  while ((await handOver(deps, bulkId, token)) > 0);
  await deps.db.bulkSend.updateMany({
    where: { id: bulkId, status: 'SENDING' },
    data: { status: 'SENT', finishedAt: deps.clock.now(), leaseOwner: null, leaseUntil: null },
  })
  return 'SENT'
}

/**
 * Hands over up to `limit` recipients still without a message: one transaction creates their
 * messages (PENDING, paid from the reservation), status rows and submissions (held by `token`),
 * and sets each recipient's messageId only where it is still null; if another caller (a retry,
 * the worker) took one first, the whole chunk is rolled back and read again. The chunk is then
 * submitted in-process; what a crash leaves there is the submission sweeper's. Returns how many
 * were handed over (0: none is left).
 */
export async function handOver(deps: BulkDeps, bulkId: string, token: string, { limit = CHUNK } = {}): Promise<number> {
  const { db } = deps
  const bulk = await db.bulkSend.findUniqueOrThrow({ where: { id: bulkId } })
  const cost = bulk.costPerPage * BigInt(bulk.pages)
  for (;;) {
    const now = deps.clock.now()
    await db.bulkSend.updateMany({
      where: { id: bulkId, status: 'SENDING' },
      data: { leaseOwner: token, leaseUntil: new Date(now.getTime() + deps.env.WORKER_LEASE_MS) },
    })
    const left = await db.bulkSendRecipient.findMany({
      where: { bulkSendId: bulkId, messageId: null },
      orderBy: { contactId: 'asc' },
      take: limit,
      select: { contactId: true, mobile: true },
    })
    if (!left.length) return 0
    const handed = left.map((r) => ({ ...r, messageId: timeOrderedId() }))
    try {
      await db.$transaction(async (tx) => {
        // Four foreign key checks a recipient, planned once rather than once a row.
        await planRowChecksOnce(tx, deps.dbKind)
        await tx.message.createMany({
          data: handed.map((r) => ({
            id: r.messageId,
            accountId: bulk.accountId,
            mobile: r.mobile,
            sender: bulk.sender,
            text: bulk.text,
            encoding: bulk.encoding,
            pages: bulk.pages,
            costPerPage: bulk.costPerPage,
            creditsDeducted: cost,
            sandbox: deps.gateway.sandbox,
            gateway: deps.gateway.name,
            status: 'PENDING',
            broadcastAt: now,
            createdAt: now,
          })),
        })
        await tx.messageStatusUpdate.createMany({
          data: handed.map((r) => ({ messageId: r.messageId, status: 'PENDING', createdAt: now })),
        })
        await tx.smsSubmission.createMany({
          data: handed.map((r) => ({
            messageId: r.messageId,
            accountId: bulk.accountId,
            nextAttemptAt: now,
            deadlineAt: new Date(now.getTime() + deps.env.SMS_SUBMIT_DEADLINE_MS),
            leaseOwner: token,
            leaseUntil: new Date(now.getTime() + deps.env.WORKER_LEASE_MS),
            createdAt: now,
          })),
        })
        for (const r of handed) {
          const { count } = await tx.bulkSendRecipient.updateMany({
            where: { bulkSendId: bulkId, contactId: r.contactId, messageId: null },
            data: { messageId: r.messageId },
          })
          if (!count) throw new RecipientTaken()
        }
      })
    } catch (error) {
      if (error instanceof RecipientTaken) continue
      throw error
    }
    await submitAll(deps, handed, token)
    return handed.length
  }
}

async function submitAll(deps: BulkDeps, handed: { messageId: string }[], token: string) {
  let next = 0
  const work = async () => {
    while (next < handed.length) {
      const { messageId } = handed[next++]!
      try {
        await submitHeld(deps, messageId, token)
      } catch (error) {
        // Charged and recorded: the sweeper resubmits once the lease has passed.
        deps.logger.error({ err: error, messageId }, 'in-process submit of a bulk message failed; left to the sweeper')
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(SUBMIT_CONCURRENCY, handed.length) }, work))
}

/**
 * The worker's share: bulk sends whose handler died (their lease has passed) are claimed, one
 * conditional UPDATE each so that one claimer wins, and continued. Returns how many were resumed.
 */
export async function resumeBulkSends(deps: BulkDeps, owner: string, { limit = 5 } = {}): Promise<number> {
  const { db } = deps
  const now = deps.clock.now()
  const stale = { status: 'SENDING', OR: [{ leaseUntil: null }, { leaseUntil: { lt: now } }] }
  const candidates = await db.bulkSend.findMany({ where: stale, orderBy: { createdAt: 'asc' }, take: limit, select: { id: true } })
  let resumed = 0
  for (const { id } of candidates) {
    const token = leaseToken(owner, now)
    const { count } = await db.bulkSend.updateMany({
      where: { id, ...stale },
      data: { leaseOwner: token, leaseUntil: new Date(now.getTime() + deps.env.WORKER_LEASE_MS) },
    })
    if (!count) continue
    try {
      await continueBulkSend(deps, id, token)
      resumed++
    } catch (error) {
      deps.logger.error({ err: error, bulkSendId: id }, 'resuming a bulk send failed; the worker tries again once its lease has passed')
    }
  }
  return resumed
}
