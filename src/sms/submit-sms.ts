import type { Deps } from '../deps.js'
import { Prisma } from '../generated/sqlite/client.js'
import { notFound } from '../core/errors.js'
import { bigOf, moneyParam, timeOf } from './sql.js'
import { TransientGatewayError } from './gateway.js'
import { applyStatusChange, applyStatusChangeAfter } from './record-status.js'
import { mapCarrierStatus } from './delivery-status.js'
import { publishStatusChanges, statusChanges } from '../live/status-events.js'
import { turnTransaction } from '../db/turn-transaction.js'

type SubmitDeps = Pick<Deps, 'db' | 'dbKind' | 'directRead' | 'directTransaction' | 'env' | 'clock' | 'gateway' | 'logger'> &
  Partial<Pick<Deps, 'events'>>

/** Backoff between submit attempts: 1 s, 2 s, 4 s ... capped at a minute (the deadline ends it). */
export const submitBackoffMs = (attempts: number) => Math.min(60_000, 1000 * 2 ** Math.max(0, attempts - 1))

export type SubmitOutcome = 'SENT' | 'FAILED' | 'RETRYING' | 'LOST'

/** A lease token: names the instance and is unique per claim. */
export const leaseToken = (owner: string, now: Date) => `${owner}:${now.getTime()}:${Math.random().toString(36).slice(2, 10)}`

/** What submitHeld reads of a message and its submission. */
export interface KnownMessage {
  mobile: string
  sender: string
  text: string
  encoding: string
  pages: number
  submission: { attempts: number }
}

/**
 * One submit attempt of a message whose SmsSubmission this caller holds (`token`). Records the
 * gateway id and SENT, or refunds a refusal, or schedules a retry of a transient failure; every
 * record is conditional on still holding the lease, so a caller that lost it changes nothing
 * (the new holder resubmits; the gateway recognises the id). A crash anywhere leaves the row
 * pending with its lease, taken over once the lease has passed.
 */
export async function submitHeld(
  deps: SubmitDeps,
  messageId: string,
  token: string,
  /** The message as its caller just wrote it (sendSms): spares reading it back (two statements). */
  written?: KnownMessage,
): Promise<SubmitOutcome> {
  const { db, gateway } = deps
  const message =
    written ??
    (await db.message.findUnique({
      where: { id: messageId },
      select: { mobile: true, sender: true, text: true, encoding: true, pages: true, submission: { select: { attempts: true } } },
    }))
  if (!message?.submission) return 'LOST'
  const held = { messageId, state: 'pending', leaseOwner: token }
  let accepted: Awaited<ReturnType<typeof gateway.submit>>
  try {
    accepted = await gateway.submit(
      {
        id: messageId,
        to: message.mobile,
        sender: message.sender,
        text: message.text,
        encoding: message.encoding as 'GSM_7' | 'UCS_2',
        pages: message.pages,
      },
      {
        db,
        dbKind: deps.dbKind,
        directRead: deps.directRead,
        directTransaction: deps.directTransaction,
        now: deps.clock.now(),
        fresh: written !== undefined,
      },
    )
  } catch (error) {
    const reason = (error as Error).message ?? String(error)
    if (error instanceof TransientGatewayError) {
      const attempts = message.submission.attempts + 1
      const { count } = await db.smsSubmission.updateMany({
        where: held,
        data: {
          attempts,
          nextAttemptAt: new Date(deps.clock.now().getTime() + submitBackoffMs(attempts)),
          leaseUntil: null,
          leaseOwner: null,
          lastError: reason,
        },
      })
      deps.logger.info({ messageId, attempts, error: reason }, 'gateway submit failed; retrying')
      return count ? 'RETRYING' : 'LOST'
    }
    deps.logger.warn({ err: error, messageId, gateway: gateway.name }, 'gateway refused a message')
    return (await refundSubmission(deps, messageId, { token, code: 'SUBMIT', reason })) ? 'FAILED' : 'LOST'
  }
  // Raw statements (SqlTx): the submission's close, then the message's SENT with its gateway id,
  // history and webhooks (one UPDATE of the message carries both); on PostgreSQL one statement.
  // In one transaction with the other records of this turn (turnTransaction): the SENT of the
  // messages whose answers one read of the SMSC's socket brought are one commit.
  const { outcome, changes } = await turnTransaction(deps.directTransaction, async (run) => {
    const events = statusChanges()
    const tx = { run, kind: deps.dbKind }
    const now = deps.clock.now()
    const close = Prisma.sql`
      UPDATE "SmsSubmission"
      SET "state" = 'submitted', "attempts" = "attempts" + 1, "finishedAt" = ${timeOf(tx, now)}, "leaseUntil" = NULL, "lastError" = NULL
      WHERE "messageId" = ${messageId} AND "state" = 'pending' AND "leaseOwner" = ${token}
      RETURNING "messageId"`
    // Ignored when the carrier's final report was applied first (resubmission after a crash); the gateway id is written either way.
    const sent = await applyStatusChangeAfter(
      tx,
      close,
      messageId,
      { status: 'SENT', mccmnc: accepted.mccmnc, gatewayMessageId: accepted.gatewayMessageId, at: now },
      events,
    )
    if (sent === null) return { outcome: 'LOST' as const, changes: events }
    if (accepted.finalReport) {
      const { status, errorCode } = accepted.finalReport
      await applyStatusChange(
        tx,
        messageId,
        { status: mapCarrierStatus(status), carrierStatus: status, carrierErrorCode: errorCode, at: now },
        events,
      )
    }
    return { outcome: 'SENT' as const, changes: events }
  })
  await publishStatusChanges(deps, changes)
  return outcome
}

/**
 * Gives the credits back and makes the message FAILED, exactly once: the pending -> refunded step
 * is a conditional UPDATE in the same transaction as the refund, so a second caller (another
 * instance, a retry after a crash) finds nothing to do. With `token`, only while holding the lease.
 * Returns false when someone else finished the submission first.
 */
export async function refundSubmission(
  deps: Pick<Deps, 'clock' | 'dbKind' | 'directTransaction'> & Partial<Pick<Deps, 'events' | 'logger'>>,
  messageId: string,
  { token, code, reason }: { token: string; code: string; reason: string },
): Promise<boolean> {
  const changes = statusChanges()
  const refunded = await deps.directTransaction(async (run) => {
    const tx = { run, kind: deps.dbKind }
    const now = deps.clock.now()
    const closed = await run(Prisma.sql`
      UPDATE "SmsSubmission" SET "state" = 'refunded', "finishedAt" = ${timeOf(tx, now)}, "leaseUntil" = NULL, "lastError" = ${reason}
      WHERE "messageId" = ${messageId} AND "state" = 'pending' AND "leaseOwner" = ${token}
      RETURNING "messageId"`)
    if (!closed.length) return false
    const [message] = await run(Prisma.sql`SELECT "accountId", "creditsDeducted" FROM "Message" WHERE "id" = ${messageId}`)
    if (!message) throw notFound('Message')
    await run(Prisma.sql`
      UPDATE "Account" SET "creditBalance" = "creditBalance" + ${moneyParam(bigOf(message.creditsDeducted))}
      WHERE "id" = ${message.accountId as string}`)
    await run(Prisma.sql`UPDATE "Message" SET "creditsDeducted" = 0, "updatedAt" = ${timeOf(tx, new Date())} WHERE "id" = ${messageId}`)
    await applyStatusChange(tx, messageId, { status: 'FAILED', carrierErrorCode: code, at: now }, changes)
    return true
  })
  await publishStatusChanges(deps, changes)
  return refunded
}

/**
 * Claims up to `limit` due submissions with a lease: one conditional UPDATE, so under concurrency
 * exactly one claimer wins each row (PostgreSQL re-checks the condition on the locked row; SQLite
 * serialises writers). A submission held by a dead process is due again once its lease has passed.
 */
export async function claimDueSubmissions(deps: Pick<Deps, 'db' | 'clock' | 'env'>, owner: string, limit: number) {
  const { db } = deps
  const now = deps.clock.now()
  const due = { state: 'pending', nextAttemptAt: { lte: now }, OR: [{ leaseUntil: null }, { leaseUntil: { lt: now } }] }
  const candidates = await db.smsSubmission.findMany({
    where: due,
    orderBy: { nextAttemptAt: 'asc' },
    take: limit,
    select: { messageId: true },
  })
  if (!candidates.length) return { token: '', claimed: [] }
  const token = leaseToken(owner, now)
  await db.smsSubmission.updateMany({
    where: { messageId: { in: candidates.map((c) => c.messageId) }, ...due },
    data: { leaseOwner: token, leaseUntil: new Date(now.getTime() + deps.env.WORKER_LEASE_MS) },
  })
  const claimed = await db.smsSubmission.findMany({ where: { leaseOwner: token }, select: { messageId: true, deadlineAt: true } })
  return { token, claimed }
}

export interface SweepResult {
  claimed: number
  sent: number
  failed: number
  retrying: number
  timedOut: number
}

/**
 * The outbox sweeper (one worker tick): submits what the in-process submit of sendSms left behind
 * (a crash, a transient gateway failure) and, past `deadlineAt`, refunds with SUBMIT_TIMEOUT.
 */
export async function sweepSubmissions(deps: SubmitDeps, owner: string, { limit = 200, concurrency = 8 } = {}): Promise<SweepResult> {
  const { token, claimed } = await claimDueSubmissions(deps, owner, limit)
  const result: SweepResult = { claimed: claimed.length, sent: 0, failed: 0, retrying: 0, timedOut: 0 }
  let next = 0
  const work = async () => {
    while (next < claimed.length) {
      const submission = claimed[next++]!
      try {
        if (submission.deadlineAt.getTime() <= deps.clock.now().getTime()) {
          if (await finishPastDeadline(deps, submission.messageId, token)) result.timedOut++
          continue
        }
        const outcome = await submitHeld(deps, submission.messageId, token)
        if (outcome === 'SENT') result.sent++
        else if (outcome === 'FAILED') result.failed++
        else if (outcome === 'RETRYING') result.retrying++
      } catch (error) {
        // The lease stays: the submission is due again when it has passed.
        deps.logger.error({ err: error, messageId: submission.messageId }, 'sms submission sweep failed')
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, claimed.length) }, work))
  return result
}

/**
 * Past the deadline. A message the carrier already reported on (its first submit was accepted,
 * the process died before recording it) was sent after all: no refund; the submission is closed
 * with the gateway id, which a resubmission of the same id answers without sending again.
 * Anything else is refunded and FAILED with SUBMIT_TIMEOUT.
 */
async function finishPastDeadline(deps: SubmitDeps, messageId: string, token: string): Promise<boolean> {
  const { db } = deps
  const message = await db.message.findUnique({
    where: { id: messageId },
    select: { carrierStatus: true, mobile: true, sender: true, text: true, encoding: true, pages: true },
  })
  if (message?.carrierStatus) {
    const accepted = await deps.gateway
      .submit(
        {
          id: messageId,
          to: message.mobile,
          sender: message.sender,
          text: message.text,
          encoding: message.encoding as 'GSM_7' | 'UCS_2',
          pages: message.pages,
        },
        { db, dbKind: deps.dbKind, directRead: deps.directRead, directTransaction: deps.directTransaction, now: deps.clock.now() },
      )
      .catch(() => null)
    await db.$transaction(async (tx) => {
      const { count } = await tx.smsSubmission.updateMany({
        where: { messageId, state: 'pending', leaseOwner: token },
        data: { state: 'submitted', finishedAt: deps.clock.now(), leaseUntil: null },
      })
      if (count && accepted) await tx.message.update({ where: { id: messageId }, data: { gatewayMessageId: accepted.gatewayMessageId } })
    })
    return false
  }
  return refundSubmission(deps, messageId, { token, code: 'SUBMIT_TIMEOUT', reason: 'not accepted by the gateway before the deadline' })
}
