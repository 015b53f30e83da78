import { randomUUID } from 'node:crypto'
import type { Deps } from '../deps.js'
import { AppError, isUniqueViolation, notFound, validationError } from '../core/errors.js'
import { Prisma } from '../generated/sqlite/client.js'
import { bigOf, flag, moneyParam, timeOf } from './sql.js'
import { normalizeMobile } from '../messaging/mobile.js'
import { InputRules } from '../messaging/input-rules.js'
import { MAX_PAGES, segment } from './encoding.js'
import { applyStatusChange } from './record-status.js'
import { leaseToken, submitHeld, type KnownMessage } from './submit-sms.js'
import { publishStatusChanges, statusChanges } from '../live/status-events.js'

export interface SendSmsInput {
  to: string
  message: string
  sender?: string | null
}

/** Sender ids: up to 11 letters/digits/spaces (alphanumeric) or a phone number of up to 15 digits. */
export const SENDER_PATTERN = /^(?:[A-Za-z0-9 .&-]{1,11}|\+?\d{3,15})$/

/** The Idempotency-Key form of the contract: 1-255 printable ASCII characters. */
export const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/

export interface SendSmsOptions {
  /** The request's Idempotency-Key: a retry with the same key answers the first message. */
  idempotencyKey?: string | null
}

export type SendSmsStatus = 'SENT' | 'PENDING' | 'FAILED' | 'NOCREDT' | (string & {})

/**
 * Sends one SMS through the submission outbox. One transaction deducts the credits for every page
 * and writes the message (PENDING) with its SmsSubmission; without enough credit the message is
 * NOCREDT (done) and nothing is submitted. After the commit the submit is tried at once in this
 * process, so the usual answer is SENT (or FAILED, refunded, when the gateway refuses); PENDING
 * when it must be retried. The worker's sweeper finishes what a crash or a gateway outage left:
 * a resubmission carries the same message id, which the gateway recognises, and past the
 * deadline the credits go back exactly once. Returns the message id (the report reference).
 */
export async function sendSms(
  deps: Pick<Deps, 'db' | 'dbKind' | 'directRead' | 'directTransaction' | 'env' | 'clock' | 'gateway' | 'logger'> &
    Partial<Pick<Deps, 'events'>>,
  accountId: string,
  input: SendSmsInput,
  options: SendSmsOptions = {},
): Promise<{ id: string; status: SendSmsStatus; replayed?: boolean }> {
  const { db, gateway } = deps
  const key = options.idempotencyKey ?? null
  if (key !== null && !IDEMPOTENCY_KEY.test(key)) {
    throw validationError([{ field: 'Idempotency-Key', message: 'Idempotency-Key must be 1-255 printable ASCII characters' }])
  }
  const rules = new InputRules()
  const rawTo = rules.required('to', input.to, 64)
  const to = rawTo ? normalizeMobile(rawTo, deps.env.DEFAULT_COUNTRY) : null
  if (rawTo && !to) rules.fail('to', `to "${rawTo}" is not a valid mobile number`)
  if (typeof input.message !== 'string' || input.message.length === 0) rules.fail('message', 'message is required')
  else rules.storable('message', input.message)
  const sender = rules.optional('sender', input.sender, 15)
  if (sender && !SENDER_PATTERN.test(sender)) rules.fail('sender', 'sender must be up to 11 letters and digits, or a phone number')
  rules.check()
  const seg = segment(input.message)
  if (seg.pages > MAX_PAGES) throw validationError([{ field: 'message', message: `message is longer than ${MAX_PAGES} pages` }])

  if (key !== null) {
    const first = await findByKey(deps, accountId, key, to!, input.message)
    if (first) return first
  }

  const now = deps.clock.now()
  const id = randomUUID()
  const token = leaseToken('send', now)
  let created: { paid: boolean; message?: KnownMessage }
  const changes = statusChanges()
  try {
    // Raw statements in one transaction (src/sms/sql.ts): the charge, the message, its history
    // row and its submission; a charge and its message commit together.
    created = await deps.directTransaction(async (run) => {
      const tx = { run, kind: deps.dbKind }
      const pages = Prisma.sql`CAST(${seg.pages} AS INTEGER)`
      // The charge: one conditional UPDATE, answering the price it charged at.
      const [charged] = await run(Prisma.sql`
        UPDATE "Account" SET "creditBalance" = "creditBalance" - "pricePerPage" * ${pages}
        WHERE "id" = ${accountId} AND "creditBalance" >= "pricePerPage" * ${pages}
        RETURNING "pricePerPage", "name"`)
      const account = charged ?? (await run(Prisma.sql`SELECT "pricePerPage", "name" FROM "Account" WHERE "id" = ${accountId}`))[0]
      if (!account) throw notFound('Account')
      const paid = charged !== undefined
      const pricePerPage = bigOf(account.pricePerPage)
      const from = sender || defaultSender(account.name as string)
      const at = timeOf(tx, now)
      await run(Prisma.sql`
        INSERT INTO "Message" ("id", "accountId", "mobile", "sender", "text", "encoding", "pages", "costPerPage", "creditsDeducted",
          "sandbox", "gateway", "status", "broadcastAt", "idempotencyKey", "createdAt", "updatedAt")
        VALUES (${id}, ${accountId}, ${to!}, ${from}, ${input.message}, ${seg.encoding}, ${seg.pages}, ${moneyParam(pricePerPage)},
          ${moneyParam(paid ? pricePerPage * BigInt(seg.pages) : 0n)}, ${flag(gateway.sandbox)}, ${gateway.name}, 'PENDING', ${at}, ${key},
          ${at}, ${timeOf(tx, new Date())})`)
      await run(Prisma.sql`
        INSERT INTO "MessageStatusUpdate" ("id", "messageId", "status", "createdAt") VALUES (${randomUUID()}, ${id}, 'PENDING', ${at})`)
      if (!paid) {
        await applyStatusChange(tx, id, { status: 'NOCREDT', at: now }, changes)
        return { paid: false }
      }
      // Held by this request for the in-process submit below; the sweeper takes it over only
      // when the lease has passed (this process died or is stuck).
      await run(Prisma.sql`
        INSERT INTO "SmsSubmission" ("messageId", "accountId", "nextAttemptAt", "deadlineAt", "leaseOwner", "leaseUntil", "createdAt")
        VALUES (${id}, ${accountId}, ${at}, ${timeOf(tx, new Date(now.getTime() + deps.env.SMS_SUBMIT_DEADLINE_MS))}, ${token},
          ${timeOf(tx, new Date(now.getTime() + deps.env.WORKER_LEASE_MS))}, ${at})`)
      const written = { mobile: to!, sender: from, text: input.message, encoding: seg.encoding, pages: seg.pages }
      return { paid: true, message: { ...written, submission: { attempts: 0 } } }
    })
  } catch (error) {
    // The same key sent twice at once: the other request committed first; answer its message.
    if (key !== null && isUniqueViolation(error)) {
      const first = await findByKey(deps, accountId, key, to!, input.message)
      if (first) return first
    }
    throw error
  }
  await publishStatusChanges(deps, changes)
  if (!created.paid) return { id, status: 'NOCREDT' }

  try {
    const outcome = await submitHeld(deps, id, token, created.message)
    if (outcome === 'SENT' || outcome === 'FAILED') return { id, status: outcome }
  } catch (error) {
    // Charged and recorded: the sweeper resubmits once the lease has passed.
    deps.logger.error({ err: error, messageId: id }, 'in-process submit failed; left to the sweeper')
  }
  const current = await db.message.findUniqueOrThrow({ where: { id }, select: { status: true } })
  return { id, status: current.status }
}

/** The message an earlier request with this key created, or null. Another request under the key is refused. */
async function findByKey(deps: Pick<Deps, 'db'>, accountId: string, key: string, to: string, text: string) {
  const first = await deps.db.message.findUnique({
    where: { accountId_idempotencyKey: { accountId, idempotencyKey: key } },
    select: { id: true, status: true, mobile: true, text: true },
  })
  if (!first) return null
  if (first.mobile !== to || first.text !== text) {
    throw new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request', [
      { field: 'Idempotency-Key', message: 'already used for another message' },
    ])
  }
  return { id: first.id, status: first.status, replayed: true }
}

export const defaultSender = (accountName: string) =>
  accountName
    .replace(/[^A-Za-z0-9 ]/g, '')
    .trim()
    .slice(0, 11) || 'SMS'
