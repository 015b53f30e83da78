import { timeOrderedId } from '../db/time-ordered-id.js'
import type { Deps } from '../deps.js'
import { Prisma } from '../generated/sqlite/client.js'
import { notFound, validationError } from '../core/errors.js'
import { textProblem } from '../messaging/input-rules.js'
import { isFinal, mapCarrierStatus, type DeliveryStatus } from './delivery-status.js'
import { deliveryReport } from './delivery-report.js'
import { publishStatusChanges, statusChanges } from '../live/status-events.js'
import type { StatusEvent } from '../live/topics.js'
import { currentTraceparent, tracingEnabled } from '../core/tracing.js'
import { newWebhookId } from '../webhooks/signature.js'
import { bodyFor, subscribes } from '../webhooks/event-types.js'
import { bigOf, boolOf, dateOf, flag, timeOf, type SqlTx } from './sql.js'

export interface StatusChange {
  status: DeliveryStatus
  carrierStatus?: string | null
  carrierErrorCode?: string | null
  mccmnc?: string | null
  /** The gateway's id of the message, written with the change (and also when the change is ignored). */
  gatewayMessageId?: string
  at: Date
}

/**
 * The message as applyStatusChange reads it on SQLite (one writer at a time, so no lock): the
 * report's fields, the submission's state, the account's endpoints. PostgreSQL reads and locks it
 * in the change's one statement (applyAtOnce).
 */
const currentOf = (messageId: string) => Prisma.sql`
  SELECT m."accountId", m."mobile", m."sender", m."status", m."broadcastAt", m."pages", m."costPerPage",
    m."creditsDeducted", m."mccmnc", m."done", m."doneAt", m."sandbox", s."state" AS "submissionState",
    a."timezone", e."id" AS "endpointId", e."eventTypes", e."payloadFormat"
  FROM "Message" m
  JOIN "Account" a ON a."id" = m."accountId"
  LEFT JOIN "SmsSubmission" s ON s."messageId" = m."id"
  LEFT JOIN "WebhookEndpoint" e ON e."accountId" = m."accountId" AND e."disabledAt" IS NULL
  WHERE m."id" = ${messageId}
  ORDER BY e."createdAt", e."id"`

/**
 * Applies one status change to a message, records it in the history and writes a delivery to the
 * outbox for each of the account's enabled endpoints subscribed to `message.status`: all in the
 * caller's transaction, in raw statements (SqlTx). On SQLite: one read of the message with its
 * account's endpoints, the message's UPDATE, the history row and the deliveries' one INSERT. On
 * PostgreSQL the same in one statement (applyAtOnce, which locks the message's row, so two changes
 * of one message apply one after the other) and the deliveries' INSERT.
 * Only real changes count: a final status is final (a late ENROUTE after DELIVRD, or an UNDELIV
 * after DELIVRD, is ignored), a repeat of the current status is ignored, and so is any carrier
 * report on a message whose credits were refunded. Each applied change makes one webhook
 * delivery, so a reporter could otherwise make any number of them from one paid message.
 * Returns false when ignored. An applied change is appended to `changes`, which the caller
 * publishes once its transaction has committed (src/live/status-events.ts).
 */
export async function applyStatusChange(tx: SqlTx, messageId: string, change: StatusChange, changes?: StatusEvent[]): Promise<boolean> {
  if (tx.kind === 'postgresql') return (await applyAtOnce(tx, messageId, change, changes))!
  const rows = await tx.run(currentOf(messageId))
  const current = rows[0]
  if (!current) throw notFound('Message')
  const ignored =
    boolOf(current.done) ||
    current.status === change.status ||
    // A carrier report for a message refunded as never submitted (it reached the carrier after all)
    // cannot undo the refund; the message stays FAILED so balance and report agree.
    (!!change.carrierStatus && current.submissionState === 'refunded')
  if (ignored) {
    if (change.gatewayMessageId !== undefined)
      await tx.run(Prisma.sql`
        UPDATE "Message" SET "gatewayMessageId" = ${change.gatewayMessageId}, "updatedAt" = ${timeOf(tx, new Date())}
        WHERE "id" = ${messageId}`)
    return false
  }
  await tx.run(Prisma.sql`UPDATE "Message" SET ${Prisma.join(setsOf(tx, change))} WHERE "id" = ${messageId}`)
  await tx.run(Prisma.sql`
    INSERT INTO "MessageStatusUpdate" ("id", "messageId", "status", "carrierStatus", "carrierErrorCode", "createdAt")
    VALUES (${timeOrderedId()}, ${messageId}, ${change.status}, ${change.carrierStatus ?? null}, ${change.carrierErrorCode ?? null}, ${timeOf(tx, change.at)})`)
  changes?.push({ accountId: current.accountId as string, messageId, status: change.status })
  await insertDeliveries(tx, messageId, change, current, rows)
  return true
}

/**
 * applyStatusChange once `guard` (a write answering rows, e.g. the close of the message's
 * submission while its caller holds the lease) has written something; null, and nothing applied,
 * when it wrote nothing. On PostgreSQL the guard is the first WITH query of the change's one
 * statement (it locks its rows before the message's, as when it ran first): one round trip.
 */
export async function applyStatusChangeAfter(
  tx: SqlTx,
  guard: Prisma.Sql,
  messageId: string,
  change: StatusChange,
  changes?: StatusEvent[],
): Promise<boolean | null> {
  if (tx.kind === 'postgresql') return applyAtOnce(tx, messageId, change, changes, guard)
  if (!(await tx.run(guard)).length) return null
  return applyStatusChange(tx, messageId, change, changes)
}

/** The message's columns a status change sets. */
function setsOf(tx: SqlTx, change: StatusChange) {
  const final = isFinal(change.status)
  const sets = [
    Prisma.sql`"status" = ${change.status}`,
    Prisma.sql`"done" = ${flag(final)}`,
    Prisma.sql`"doneAt" = ${final ? timeOf(tx, change.at) : null}`,
    // When the row changed (as Prisma's @updatedAt), not when the change happened at the carrier.
    Prisma.sql`"updatedAt" = ${timeOf(tx, new Date())}`,
  ]
  if (change.carrierStatus !== undefined) sets.push(Prisma.sql`"carrierStatus" = ${change.carrierStatus}`)
  if (change.carrierErrorCode !== undefined) sets.push(Prisma.sql`"carrierErrorCode" = ${change.carrierErrorCode}`)
  if (change.mccmnc) sets.push(Prisma.sql`"mccmnc" = ${change.mccmnc}`)
  if (change.gatewayMessageId !== undefined) sets.push(Prisma.sql`"gatewayMessageId" = ${change.gatewayMessageId}`)
  return sets
}

/**
 * PostgreSQL: applyStatusChange in one statement where it was four (docs/sms.md "Speed"): the
 * message's row locked (FOR UPDATE, a materialized WITH query, so two changes of one message
 * still apply one after the other and the decision is made on the row as the lock found it), the
 * same decision as on SQLite in SQL, the message's UPDATE (or, ignored, only its gateway id's),
 * the history row, and the account's endpoints read back with the changed row. Only the webhook
 * deliveries, whose bodies are made here from that row, are a second statement, and only when the
 * account has endpoints.
 */
async function applyAtOnce(
  tx: SqlTx,
  messageId: string | null,
  change: StatusChange,
  changes?: StatusEvent[],
  guard?: Prisma.Sql,
): Promise<boolean | null> {
  const { guarded, applies } = await changeAtOnce(tx, messageId === null ? null : Prisma.sql`${messageId}`, change, changes, guard)
  if (!guarded) return null
  if (applies === null) throw notFound('Message')
  return applies
}

/**
 * applyAtOnce's statement: the message is `message` (an id, or with a guard an expression of the
 * guard's rows; null: none). Answers whether the guard wrote anything (true without one), whether
 * the change applied (null: no message), and the guard's rows (as JSON).
 */
async function changeAtOnce(
  tx: SqlTx,
  message: Prisma.Sql | null,
  change: StatusChange,
  changes?: StatusEvent[],
  guard?: Prisma.Sql,
): Promise<{ guarded: boolean; applies: boolean | null; messageId: string | null; guardRows: Record<string, unknown>[] }> {
  const refundedCounts = change.carrierStatus ? Prisma.sql`c."submissionState" IS NOT DISTINCT FROM 'refunded'` : Prisma.sql`FALSE`
  const ignoredUpdate =
    change.gatewayMessageId !== undefined
      ? Prisma.sql`, "ignored" AS (
          UPDATE "Message" m SET "gatewayMessageId" = ${change.gatewayMessageId}, "updatedAt" = ${timeOf(tx, new Date())}
          FROM "decided" d WHERE m."id" = d."id" AND NOT d."applies"
          RETURNING m."id")`
      : Prisma.empty
  const rows = await tx.run(Prisma.sql`
    WITH ${guard ? Prisma.sql`"guard" AS (${guard}), ` : Prisma.empty}"current" AS MATERIALIZED (
      SELECT m."id", m."status", m."done", s."state" AS "submissionState"
      FROM "Message" m LEFT JOIN "SmsSubmission" s ON s."messageId" = m."id"
      WHERE m."id" = ${message ?? Prisma.sql`NULL`}${guard ? Prisma.sql` AND EXISTS (SELECT 1 FROM "guard")` : Prisma.empty}
      FOR UPDATE OF m
    ), "decided" AS MATERIALIZED (
      SELECT c."id", NOT (c."done" OR c."status" = ${change.status} OR ${refundedCounts}) AS "applies" FROM "current" c
    ), "changed" AS (
      UPDATE "Message" m SET ${Prisma.join(setsOf(tx, change))}
      FROM "decided" d WHERE m."id" = d."id" AND d."applies"
      RETURNING m."id", m."accountId", m."mobile", m."sender", m."broadcastAt", m."pages", m."costPerPage", m."creditsDeducted",
        m."mccmnc", m."sandbox"
    ), "history" AS (
      INSERT INTO "MessageStatusUpdate" ("id", "messageId", "status", "carrierStatus", "carrierErrorCode", "createdAt")
      SELECT ${timeOrderedId()}, "id", ${change.status}, ${change.carrierStatus ?? null}, ${change.carrierErrorCode ?? null},
        ${timeOf(tx, change.at)}
      FROM "changed"
      RETURNING "id"
    )${ignoredUpdate}
    SELECT ${guard ? Prisma.sql`EXISTS (SELECT 1 FROM "guard")` : Prisma.sql`TRUE`} AS "guarded",
      ${guard ? Prisma.sql`(SELECT json_agg(g)::text FROM "guard" g)` : Prisma.sql`NULL`} AS "guardRows",
      d."id" AS "decidedId", d."applies", c.*, a."timezone", e."id" AS "endpointId", e."eventTypes", e."payloadFormat"
    FROM (SELECT 1) AS "one"
    LEFT JOIN "decided" d ON TRUE
    LEFT JOIN "changed" c ON TRUE
    LEFT JOIN "Account" a ON a."id" = c."accountId"
    LEFT JOIN "WebhookEndpoint" e ON e."accountId" = c."accountId" AND e."disabledAt" IS NULL
    ORDER BY e."createdAt", e."id"`)
  const current = rows[0]!
  const guardRows = current.guardRows ? (JSON.parse(current.guardRows as string) as Record<string, unknown>[]) : []
  const guarded = boolOf(current.guarded)
  const applies = current.applies === null ? null : boolOf(current.applies)
  if (applies) {
    const messageId = current.id as string
    changes?.push({ accountId: current.accountId as string, messageId, status: change.status })
    await insertDeliveries(tx, messageId, change, current, rows)
  }
  return { guarded, applies, messageId: (current.decidedId as string | null) ?? null, guardRows }
}

/**
 * PostgreSQL: a receipt's part `UPDATE` (`parts`, answering "messageId", "part" and "parts") and,
 * when it found the part of a message of one part, that message's status change, in one
 * statement (the part's row locked before the message's, as when it ran first). Answers the parts
 * it found and the message whose change it made (applied or ignored), if any; the caller makes
 * the change of any other message of one part the `UPDATE` found.
 */
export async function applyReceiptAtOnce(
  tx: SqlTx,
  parts: Prisma.Sql,
  change: StatusChange,
  changes?: StatusEvent[],
): Promise<{ found: Record<string, unknown>[]; changed: string | null }> {
  const { guardRows, messageId } = await changeAtOnce(
    tx,
    Prisma.sql`(SELECT g."messageId" FROM "guard" g WHERE g."parts" = 1 ORDER BY g."messageId" LIMIT 1)`,
    change,
    changes,
    parts,
  )
  return { found: guardRows, changed: messageId }
}

/**
 * The webhook deliveries of an applied change: one per enabled endpoint (in `rows`) subscribed to
 * status updates, each in the body it asked for, from the message's report fields (`current`).
 */
async function insertDeliveries(
  tx: SqlTx,
  messageId: string,
  change: StatusChange,
  current: Record<string, unknown>,
  rows: Record<string, unknown>[],
) {
  const final = isFinal(change.status)
  const accountId = current.accountId as string
  const endpoints = rows.filter((e) => e.endpointId !== null && subscribes(e.eventTypes as string, 'message.status'))
  if (endpoints.length) {
    const report = deliveryReport(
      {
        id: messageId,
        mobile: current.mobile as string,
        sender: current.sender as string,
        status: change.status,
        broadcastAt: dateOf(current.broadcastAt)!,
        pages: Number(current.pages),
        costPerPage: bigOf(current.costPerPage),
        creditsDeducted: bigOf(current.creditsDeducted),
        mccmnc: change.mccmnc || (current.mccmnc as string),
        done: final,
        doneAt: final ? change.at : null,
        sandbox: boolOf(current.sandbox),
      },
      current.timezone as string,
    )
    // The request (or worker tick) that caused the update: each attempt's span links back to it.
    const traceparent = tracingEnabled ? currentTraceparent() : null
    const at = timeOf(tx, change.at)
    await tx.run(Prisma.sql`
      INSERT INTO "WebhookDelivery" ("id", "accountId", "endpointId", "eventType", "messageId", "body", "nextAttemptAt", "createdAt", "traceparent")
      VALUES ${Prisma.join(
        endpoints.map(
          (endpoint) =>
            Prisma.sql`(${newWebhookId()}, ${accountId}, ${endpoint.endpointId as string}, 'message.status', ${messageId},
              ${bodyFor(endpoint.payloadFormat as string, 'message.status', change.at, report)}, ${at}, ${at}, ${traceparent})`,
        ),
      )}`)
  }
}

export interface CarrierReport {
  /** Our message id, or the gateway's id with the gateway name. */
  messageId?: string
  gateway?: string | null
  gatewayMessageId?: string | null
  /** The carrier's raw status (SMPP stat or one of the documented codes). */
  status: string
  errorCode?: string | null
  mccmnc?: string | null
  at?: Date
}

/**
 * A carrier's report as the status change it makes. Text no database can store or compare (NUL,
 * lone surrogates) is refused (422) before any statement, and so is an unknown status.
 */
export function carrierChange(report: CarrierReport, now: Date): StatusChange {
  const details = (['messageId', 'gateway', 'gatewayMessageId', 'status', 'errorCode', 'mccmnc'] as const).flatMap((field) => {
    const problem = typeof report[field] === 'string' ? textProblem(report[field]) : null
    return problem ? [{ field, message: `${field} ${problem}` }] : []
  })
  if (details.length) throw validationError(details)
  return {
    status: mapCarrierStatus(report.status),
    carrierStatus: report.status.trim().toUpperCase(),
    carrierErrorCode: report.errorCode ?? null,
    mccmnc: report.mccmnc,
    at: report.at ?? now,
  }
}

type RecordDeps = Pick<Deps, 'clock' | 'dbKind' | 'directTransaction'> & Partial<Pick<Deps, 'events' | 'logger'>>

/** The connector entry point for status changes. `accountId` scopes the lookup when given. */
export async function recordCarrierStatus(deps: RecordDeps, report: CarrierReport, accountId?: string) {
  const change = carrierChange(report, deps.clock.now())
  const scope = accountId ? Prisma.sql` AND "accountId" = ${accountId}` : Prisma.empty
  const where = report.messageId
    ? Prisma.sql`"id" = ${report.messageId}`
    : Prisma.sql`"gateway" = ${report.gateway ?? ''} AND "gatewayMessageId" = ${report.gatewayMessageId ?? ''}`
  const changes = statusChanges()
  const result = await deps.directTransaction(async (run) => {
    const [message] = await run(Prisma.sql`SELECT "id" FROM "Message" WHERE ${where}${scope} LIMIT 1`)
    if (!message) throw notFound('Message')
    const messageId = message.id as string
    const applied = await applyStatusChange({ run, kind: deps.dbKind }, messageId, change, changes)
    return { messageId, status: change.status, applied }
  })
  await publishStatusChanges(deps, changes)
  return result
}

/** Applies a change to a message known by its id, in a transaction of its own; publishes it once committed. */
export async function recordStatusChange(deps: RecordDeps, messageId: string, change: StatusChange): Promise<boolean> {
  const changes = statusChanges()
  const applied = await deps.directTransaction((run) => applyStatusChange({ run, kind: deps.dbKind }, messageId, change, changes))
  await publishStatusChanges(deps, changes)
  return applied
}
