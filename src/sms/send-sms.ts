import { timeOrderedId } from '../db/time-ordered-id.js'
import type { Deps } from '../deps.js'
import { AppError, isUniqueViolation, notFound, validationError } from '../core/errors.js'
import { Prisma } from '../generated/sqlite/client.js'
import { bigOf, flag, moneyParam, timeOf, type SqlTx } from './sql.js'
import { normalizeMobile } from '../messaging/mobile.js'
import { InputRules } from '../messaging/input-rules.js'
import { MAX_PAGES, segment } from './encoding.js'
import { applyStatusChange } from './record-status.js'
import { leaseToken, submitHeld, type KnownMessage } from './submit-sms.js'
import { publishStatusChanges, statusChanges } from '../live/status-events.js'
import type { StatusEvent } from '../live/topics.js'

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
  const id = timeOrderedId()
  const token = leaseToken('send', now)
  const send: NewSend = {
    id,
    accountId,
    to: to!,
    sender,
    text: input.message,
    encoding: seg.encoding,
    pages: seg.pages,
    key,
    token,
    now,
    sandbox: gateway.sandbox,
    gateway: gateway.name,
    deadlineAt: new Date(now.getTime() + deps.env.SMS_SUBMIT_DEADLINE_MS),
    leaseUntil: new Date(now.getTime() + deps.env.WORKER_LEASE_MS),
  }
  let created: Written
  try {
    // A keyed send is written on its own: its unique key's violation is its caller's answer.
    created = key === null ? await writeGrouped(deps, send) : await writeAlone(deps, send)
  } catch (error) {
    // The same key sent twice at once: the other request committed first; answer its message.
    if (key !== null && isUniqueViolation(error)) {
      const first = await findByKey(deps, accountId, key, to!, input.message)
      if (first) return first
    }
    throw error
  }
  const changes = created.changes
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

/** A send to write: the message as sendSms validated it, with what its gateway and settings add. */
interface NewSend {
  id: string
  accountId: string
  to: string
  /** As given; null or empty: the account's name (defaultSender). */
  sender: string | null | undefined
  text: string
  encoding: string
  pages: number
  key: string | null
  token: string
  now: Date
  sandbox: boolean
  gateway: string
  deadlineAt: Date
  leaseUntil: Date
}

/** A written send: paid (with the message for the in-process submit) or NOCREDT, and its status changes to publish. */
interface Written {
  paid: boolean
  message?: KnownMessage
  changes: StatusEvent[]
}

type WriteDeps = Pick<Deps, 'dbKind' | 'directTransaction'> & Partial<Pick<Deps, 'directRead'>>

/**
 * Writes sends in one transaction of raw statements (src/sms/sql.ts): the charge (one conditional
 * UPDATE answering the price it charged at, for all of an account's sends when its balance covers
 * them, else for each; the account is read only when it failed),
 * then the messages, their PENDING history rows and the paid ones' submissions, each in one
 * multi-row INSERT. A charge and its message commit together.
 */
async function writeSends(tx: SqlTx, sends: NewSend[]): Promise<Written[]> {
  const { run } = tx
  const charges: { paid: boolean; pricePerPage: bigint; sender: string }[] = []
  // In account order: two groups charging the same accounts lock their rows (PostgreSQL) in the same order, never in a cycle.
  const order = sends
    .map((_, i) => i)
    .sort((a, b) => (sends[a]!.accountId < sends[b]!.accountId ? -1 : sends[a]!.accountId > sends[b]!.accountId ? 1 : a - b))
  // An account's several sends in one charge when its balance covers them all (the usual case):
  // each of them, charged one after the other, would have been paid too. Else one by one.
  const byAccount = new Map<string, number[]>()
  for (const i of order) {
    const list = byAccount.get(sends[i]!.accountId)
    if (list) list.push(i)
    else byAccount.set(sends[i]!.accountId, [i])
  }
  const charge = (accountId: string, pages: number) => {
    const times = Prisma.sql`CAST(${pages} AS INTEGER)`
    return run(Prisma.sql`
      UPDATE "Account" SET "creditBalance" = "creditBalance" - "pricePerPage" * ${times}
      WHERE "id" = ${accountId} AND "creditBalance" >= "pricePerPage" * ${times}
      RETURNING "pricePerPage", "name"`)
  }
  for (const [accountId, indexes] of byAccount) {
    if (indexes.length > 1) {
      const [charged] = await charge(
        accountId,
        indexes.reduce((sum, i) => sum + sends[i]!.pages, 0),
      )
      if (charged) {
        for (const i of indexes)
          charges[i] = {
            paid: true,
            pricePerPage: bigOf(charged.pricePerPage),
            sender: sends[i]!.sender || defaultSender(charged.name as string),
          }
        continue
      }
    }
    for (const i of indexes) {
      const send = sends[i]!
      const [charged] = await charge(accountId, send.pages)
      const account = charged ?? (await run(Prisma.sql`SELECT "pricePerPage", "name" FROM "Account" WHERE "id" = ${accountId}`))[0]
      if (!account) throw notFound('Account')
      charges[i] = {
        paid: charged !== undefined,
        pricePerPage: bigOf(account.pricePerPage),
        sender: send.sender || defaultSender(account.name as string),
      }
    }
  }
  const updatedAt = timeOf(tx, new Date())
  await run(Prisma.sql`
    INSERT INTO "Message" ("id", "accountId", "mobile", "sender", "text", "encoding", "pages", "costPerPage", "creditsDeducted",
      "sandbox", "gateway", "status", "broadcastAt", "idempotencyKey", "createdAt", "updatedAt")
    VALUES ${Prisma.join(
      sends.map((send, i) => {
        const { paid, pricePerPage, sender } = charges[i]!
        const at = timeOf(tx, send.now)
        return Prisma.sql`(${send.id}, ${send.accountId}, ${send.to}, ${sender}, ${send.text}, ${send.encoding}, ${send.pages},
          ${moneyParam(pricePerPage)}, ${moneyParam(paid ? pricePerPage * BigInt(send.pages) : 0n)}, ${flag(send.sandbox)},
          ${send.gateway}, 'PENDING', ${at}, ${send.key}, ${at}, ${updatedAt})`
      }),
    )}`)
  await run(Prisma.sql`
    INSERT INTO "MessageStatusUpdate" ("id", "messageId", "status", "createdAt")
    VALUES ${Prisma.join(sends.map((send) => Prisma.sql`(${timeOrderedId()}, ${send.id}, 'PENDING', ${timeOf(tx, send.now)})`))}`)
  const written: Written[] = []
  for (const [i, send] of sends.entries()) {
    const changes = statusChanges()
    if (!charges[i]!.paid) await applyStatusChange(tx, send.id, { status: 'NOCREDT', at: send.now }, changes)
    written.push({ paid: charges[i]!.paid, changes })
  }
  const paid = sends.filter((_, i) => charges[i]!.paid)
  // Held by its request for the in-process submit; the sweeper takes it over only when the
  // lease has passed (that process died or is stuck).
  if (paid.length)
    await run(Prisma.sql`
      INSERT INTO "SmsSubmission" ("messageId", "accountId", "nextAttemptAt", "deadlineAt", "leaseOwner", "leaseUntil", "createdAt")
      VALUES ${Prisma.join(
        paid.map(
          (send) => Prisma.sql`(${send.id}, ${send.accountId}, ${timeOf(tx, send.now)}, ${timeOf(tx, send.deadlineAt)}, ${send.token},
            ${timeOf(tx, send.leaseUntil)}, ${timeOf(tx, send.now)})`,
        ),
      )}`)
  return sends.map((send, i) => {
    const { paid, sender } = charges[i]!
    if (!paid) return written[i]!
    const message = { mobile: send.to, sender, text: send.text, encoding: send.encoding, pages: send.pages, submission: { attempts: 0 } }
    return { ...written[i]!, message }
  })
}

const writeAlone = async (deps: WriteDeps, send: NewSend) =>
  (await writeAtOnce(deps, [send]))?.[0] ?? (await deps.directTransaction((run) => writeSends({ run, kind: deps.dbKind }, [send])))[0]!

/**
 * PostgreSQL: sends of one account written in one statement, atomic on its own (data-modifying
 * WITH queries; no BEGIN and COMMIT), where the transaction of writeSends is six round trips: the
 * charge of them all, then the messages, their PENDING history rows and their submissions, each
 * inserted only from the charge's row. The sender of a send without one is the account's name as
 * defaultSender makes it. null (nothing written) when it does not apply (SQLite, sends of several
 * accounts, traces on: Database.directRead declines) or when the balance does not cover them all:
 * writeSends then charges them one by one.
 */
async function writeAtOnce(deps: WriteDeps, sends: NewSend[]): Promise<Written[] | null> {
  const accountId = sends[0]!.accountId
  if (deps.dbKind !== 'postgresql' || !deps.directRead || sends.some((send) => send.accountId !== accountId)) return null
  const tx = { kind: deps.dbKind }
  const pages = Prisma.sql`CAST(${sends.reduce((sum, send) => sum + send.pages, 0)} AS INTEGER)`
  const time = (date: Date) => Prisma.sql`CAST(${timeOf(tx, date)} AS TIMESTAMP(3))`
  const rows = await deps.directRead(Prisma.sql`
    WITH "charged" AS (
      UPDATE "Account" SET "creditBalance" = "creditBalance" - "pricePerPage" * ${pages}
      WHERE "id" = ${accountId} AND "creditBalance" >= "pricePerPage" * ${pages}
      RETURNING "pricePerPage",
        COALESCE(NULLIF(LEFT(BTRIM(REGEXP_REPLACE("name", '[^A-Za-z0-9 ]', '', 'g'), ' '), 11), ''), 'SMS') AS "defaultSender"
    ), "sends" ("id", "mobile", "sender", "text", "encoding", "pages", "sandbox", "gateway", "key", "at", "deadlineAt", "token",
      "leaseUntil", "historyId") AS (
      VALUES ${Prisma.join(
        sends.map(
          (send) => Prisma.sql`(${send.id}, ${send.to}, ${send.sender || null}, ${send.text}, ${send.encoding},
            CAST(${send.pages} AS INTEGER), ${flag(send.sandbox)}, ${send.gateway}, ${send.key}, ${time(send.now)},
            ${time(send.deadlineAt)}, ${send.token}, ${time(send.leaseUntil)}, ${timeOrderedId()})`,
        ),
      )}
    ), "messages" AS (
      INSERT INTO "Message" ("id", "accountId", "mobile", "sender", "text", "encoding", "pages", "costPerPage", "creditsDeducted",
        "sandbox", "gateway", "status", "broadcastAt", "idempotencyKey", "createdAt", "updatedAt")
      SELECT s."id", ${accountId}, s."mobile", COALESCE(s."sender", c."defaultSender"), s."text", s."encoding", s."pages",
        c."pricePerPage", c."pricePerPage" * s."pages", s."sandbox", s."gateway", 'PENDING', s."at", s."key", s."at",
        ${time(new Date())}
      FROM "sends" s CROSS JOIN "charged" c
      RETURNING "id", "sender"
    ), "history" AS (
      INSERT INTO "MessageStatusUpdate" ("id", "messageId", "status", "createdAt")
      SELECT s."historyId", s."id", 'PENDING', s."at" FROM "sends" s CROSS JOIN "charged"
    ), "submissions" AS (
      INSERT INTO "SmsSubmission" ("messageId", "accountId", "nextAttemptAt", "deadlineAt", "leaseOwner", "leaseUntil", "createdAt")
      SELECT s."id", ${accountId}, s."at", s."deadlineAt", s."token", s."leaseUntil", s."at" FROM "sends" s CROSS JOIN "charged"
    )
    SELECT "id", "sender" FROM "messages"`)
  if (!rows?.length) return null
  const senders = new Map(rows.map((row) => [row.id as string, row.sender as string]))
  return sends.map((send) => ({
    paid: true,
    changes: statusChanges(),
    message: {
      mobile: send.to,
      sender: senders.get(send.id)!,
      text: send.text,
      encoding: send.encoding,
      pages: send.pages,
      submission: { attempts: 0 },
    },
  }))
}

/** Sends in one group at most (a multi-row INSERT's values stay far below both databases' limits). */
const MAX_GROUP = 100

interface Waiting {
  send: NewSend
  resolve(written: Written): void
  reject(error: unknown): void
}
/** The sends waiting for this turn's transaction, by the database's transaction (one per database). */
const groups = new WeakMap<WriteDeps['directTransaction'], Waiting[]>()

/**
 * Writes a send with the others that arrive in the same event-loop turn (concurrent requests,
 * a bulk send's callers): one transaction, one commit and one INSERT per table for all of them,
 * at the next `setImmediate`. When the group's transaction fails (one send's bad value undoes
 * all), each send is written again on its own, so that only its own caller sees its failure.
 */
function writeGrouped(deps: WriteDeps, send: NewSend): Promise<Written> {
  return new Promise((resolve, reject) => {
    let group = groups.get(deps.directTransaction)
    if (!group) {
      const started: Waiting[] = []
      group = started
      groups.set(deps.directTransaction, started)
      setImmediate(() => {
        if (groups.get(deps.directTransaction) === started) groups.delete(deps.directTransaction)
        void writeGroup(deps, started)
      })
    }
    group.push({ send, resolve, reject })
    if (group.length >= MAX_GROUP) groups.delete(deps.directTransaction)
  })
}

async function writeGroup(deps: WriteDeps, group: Waiting[]) {
  try {
    const written =
      (await writeAtOnce(
        deps,
        group.map((w) => w.send),
      )) ??
      (await deps.directTransaction((run) =>
        writeSends(
          { run, kind: deps.dbKind },
          group.map((w) => w.send),
        ),
      ))
    group.forEach((w, i) => w.resolve(written[i]!))
  } catch (error) {
    if (group.length === 1) return group[0]!.reject(error)
    for (const w of group) await writeAlone(deps, w.send).then(w.resolve, w.reject)
  }
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
