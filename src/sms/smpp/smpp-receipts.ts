import type { Deps } from '../../deps.js'
import { CARRIER_STATUS_MAP, isFinal, type DeliveryStatus } from '../delivery-status.js'
import { randomUUID } from 'node:crypto'
import { Prisma } from '../../generated/sqlite/client.js'
import { applyReceiptAtOnce, applyStatusChange, carrierChange, recordStatusChange, type CarrierReport } from '../record-status.js'
import { publishStatusChanges, statusChanges } from '../../live/status-events.js'
import { dateOf, statementOf, timeOf, type SqlTx } from '../sql.js'
import { otherSpellings, type SmppReceipt } from './receipt.js'
import { oncePerInterval } from '../../core/once-per-interval.js'
import { turnTransaction } from '../../db/turn-transaction.js'

type ReceiptDeps = Pick<Deps, 'db' | 'dbKind' | 'directRead' | 'directTransaction' | 'clock' | 'logger'> & Partial<Pick<Deps, 'events'>>

/** A stat this service does not know counts as UNKNOWN (final) rather than being refused. */
const statusOf = (stat: string): DeliveryStatus => CARRIER_STATUS_MAP[stat] ?? 'UNKNOWN'

/** How long a receipt that matched no part is looked for again by the sweep. */
const PENDING_MATCH_MS = 10 * 60_000

/**
 * How long a receipt that matched no part is kept at all (docs/sms.md "Delivery receipts"). A
 * submit_sm's answer is recorded within SMPP_RESPONSE_TIMEOUT_MS or never, so a receipt still
 * unmatched after a day never will be; the rest of the week is for the operator to look at it.
 */
export const PENDING_RECEIPT_RETENTION_MS = 7 * 86_400_000

const purgeDue = oncePerInterval()

/**
 * Deletes pending receipts older than PENDING_RECEIPT_RETENTION_MS. Run by the worker's tick with
 * the other purges, at most once per `minIntervalMs` per database (one DELETE on the `receivedAt`
 * index); returns how many went.
 */
export async function purgeUnmatchedReceipts(
  { db, clock }: Pick<Deps, 'db' | 'clock'>,
  { minIntervalMs = 3_600_000 }: { minIntervalMs?: number } = {},
): Promise<number> {
  const now = clock.now().getTime()
  if (!purgeDue(db, now, minIntervalMs)) return 0
  const { count } = await db.smppPendingReceipt.deleteMany({ where: { receivedAt: { lt: new Date(now - PENDING_RECEIPT_RETENTION_MS) } } })
  return count
}

/** The part's UPDATE for a receipt, by the SMSC's ids given, answering the parts it changed. */
const partsUpdate = (tx: Pick<SqlTx, 'kind'>, ids: string[], receipt: SmppReceipt, doneAt: Date) => Prisma.sql`
  UPDATE "SmppPart" SET "carrierStatus" = ${receipt.stat}, "errorCode" = ${receipt.errorCode}, "doneAt" = ${timeOf(tx, doneAt)}
  WHERE "smscMessageId" IN (${Prisma.join(ids)})
  RETURNING "messageId", "part", "parts"`
const updateParts = (tx: SqlTx, ids: string[], receipt: SmppReceipt, doneAt: Date) => tx.run(partsUpdate(tx, ids, receipt, doneAt))

/**
 * Applies one delivery receipt. The part is found by the SMSC's message id on any instance (the id
 * is in the database, not in a bind's memory). A receipt whose part is not recorded yet (it came
 * before the submit_sm_resp was recorded, or to another instance) is kept as pending and matched
 * when the part is recorded, or by the worker's sweep. Returns whether it matched a part.
 *
 * One transaction of raw statements (src/sms/sql.ts), shared with the other records of the turn
 * (src/db/turn-transaction.ts): the part's UPDATE (by the id as given, else by its other
 * spellings) and, for a message of one part, the message's status change. A message
 * of several parts takes its status in a second transaction, once this part's is committed
 * (`reportMessage`).
 */
export async function applyReceipt(deps: ReceiptDeps, receipt: SmppReceipt): Promise<boolean> {
  const now = deps.clock.now()
  const partDoneAt = receipt.doneAt ?? now
  // Refused before any statement (the SMSC delivers it again), as recordCarrierStatus refuses it.
  const single = carrierChange(singlePartReport(receipt, partDoneAt), now)
  // With the other records of this turn (the receipts of one read of the socket, the SENT of messages) in one transaction.
  const { parts, changes } = await turnTransaction(deps.directTransaction, async (run) => {
    const tx = { run, kind: deps.dbKind }
    const events = statusChanges()
    // On PostgreSQL the part's UPDATE and its message's change (of a message of one part) are one statement.
    const first =
      tx.kind === 'postgresql'
        ? await applyReceiptAtOnce(tx, partsUpdate(tx, [receipt.smscMessageId], receipt, partDoneAt), single, events)
        : { found: await updateParts(tx, [receipt.smscMessageId], receipt, partDoneAt), changed: null }
    let found = first.found
    // The same number in the other base (a hex submit_sm_resp id, a decimal receipt id, or the reverse).
    const others = found.length ? [] : otherSpellings(receipt.smscMessageId)
    if (others.length) found = await updateParts(tx, others, receipt, partDoneAt)
    for (const part of found)
      if (Number(part.parts) === 1 && part.messageId !== first.changed)
        await applyStatusChange(tx, part.messageId as string, single, events)
    return { parts: found, changes: events }
  })
  await publishStatusChanges(deps, changes)
  if (!parts.length) return keepPending(deps, receipt)
  for (const part of parts) if (Number(part.parts) !== 1) await reportMessage(deps, part.messageId as string, receipt)
  return true
}

/**
 * The report a receipt makes for a message of one part (what `reportMessage` decides from that
 * part alone): its stat, or UNKNOWN for a stat this service does not know; a final one at the
 * part's done date.
 */
function singlePartReport(receipt: SmppReceipt, partDoneAt: Date): CarrierReport {
  if (!isFinal(statusOf(receipt.stat))) return { status: receipt.stat, errorCode: receipt.errorCode, at: receipt.doneAt ?? undefined }
  return { status: CARRIER_STATUS_MAP[receipt.stat] ? receipt.stat : 'UNKNOWN', errorCode: receipt.errorCode, at: partDoneAt }
}

/** A receipt that matched no part: kept as pending, and matched at once if its part was recorded meanwhile. */
async function keepPending(deps: ReceiptDeps, receipt: SmppReceipt): Promise<boolean> {
  const tx = { kind: deps.dbKind }
  await statementOf(
    deps,
    Prisma.sql`
      INSERT INTO "SmppPendingReceipt" ("id", "smscMessageId", "carrierStatus", "errorCode", "doneAt", "receivedAt")
      VALUES (${randomUUID()}, ${receipt.smscMessageId}, ${receipt.stat}, ${receipt.errorCode},
        ${receipt.doneAt ? timeOf(tx, receipt.doneAt) : null}, ${timeOf(tx, deps.clock.now())})
      RETURNING "id"`,
  )
  // The answer may have been recorded since the lookup above, and its own look for pending
  // receipts (matchPendingReceipts after recording) may have run before this row existed: look
  // again now that it does. Of the two, the later one sees the other's committed write.
  const recorded = await statementOf(
    deps,
    Prisma.sql`SELECT "messageId" FROM "SmppPart" WHERE "smscMessageId" IN (${Prisma.join([receipt.smscMessageId, ...otherSpellings(receipt.smscMessageId)])}) LIMIT 1`,
  )
  return recorded.length ? (await matchPendingReceipts(deps, [receipt.smscMessageId])) > 0 : false
}

/**
 * The message's status from its parts' (read after this part's update committed, so of two
 * receipts for two parts on two instances at least the later reader sees both). Until every part
 * has a final stat only a non-final one (ACCEPTD, ENROUTE) is passed on, as SENT. Once every part
 * has one: DELIVRD when all were delivered, else the status, error code and done date of the first
 * part (in part order) that was not delivered. The done date of a delivered message is its last
 * part's.
 */
async function reportMessage(deps: ReceiptDeps, messageId: string, receipt: SmppReceipt) {
  const parts = (
    await statementOf(
      deps,
      Prisma.sql`SELECT "parts", "carrierStatus", "errorCode", "doneAt" FROM "SmppPart" WHERE "messageId" = ${messageId} ORDER BY "part"`,
    )
  ).map((p) => ({
    parts: Number(p.parts),
    carrierStatus: p.carrierStatus as string | null,
    errorCode: p.errorCode as string | null,
    doneAt: dateOf(p.doneAt),
  }))
  const total = parts[0]?.parts ?? 1
  const finals = parts.filter((p) => p.carrierStatus && isFinal(statusOf(p.carrierStatus)))
  const now = deps.clock.now()
  if (finals.length < total || parts.length < total) {
    if (isFinal(statusOf(receipt.stat))) return
    await recordStatusChange(
      deps,
      messageId,
      carrierChange({ status: receipt.stat, errorCode: receipt.errorCode, at: receipt.doneAt ?? undefined }, now),
    )
    return
  }
  const failed = finals.find((p) => statusOf(p.carrierStatus!) !== 'DELIVRD')
  const deciding = failed ?? finals.reduce((a, b) => ((a.doneAt?.getTime() ?? 0) >= (b.doneAt?.getTime() ?? 0) ? a : b))
  const raw = deciding.carrierStatus!
  await recordStatusChange(
    deps,
    messageId,
    carrierChange(
      { status: CARRIER_STATUS_MAP[raw] ? raw : 'UNKNOWN', errorCode: deciding.errorCode, at: deciding.doneAt ?? undefined },
      now,
    ),
  )
}

/**
 * Whether any receipt is pending at all, on any instance: one statement of constant text, where the
 * look by ids (`matchPendingReceipts`) binds every id's other spellings. Usually none is (a receipt
 * that comes right behind its answer waits for the answer's record), and then the answers of a turn
 * need no look by ids.
 */
export async function anyPendingReceipt(deps: Pick<ReceiptDeps, 'db' | 'directRead'>): Promise<boolean> {
  return (await statementOf(deps, Prisma.sql`SELECT 1 AS "pending" FROM "SmppPendingReceipt" LIMIT 1`)).length > 0
}

/** Receipts kept as pending whose parts are now recorded: applied, then removed. */
export async function matchPendingReceipts(deps: ReceiptDeps, smscMessageIds?: string[]): Promise<number> {
  const tx = { kind: deps.dbKind }
  const pending = await statementOf(
    deps,
    Prisma.sql`
      SELECT "id", "smscMessageId", "carrierStatus", "errorCode", "doneAt" FROM "SmppPendingReceipt"
      WHERE ${
        smscMessageIds
          ? Prisma.sql`"smscMessageId" IN (${Prisma.join(smscMessageIds.flatMap((id) => [id, ...otherSpellings(id)]))})`
          : Prisma.sql`"receivedAt" >= ${timeOf(tx, new Date(deps.clock.now().getTime() - PENDING_MATCH_MS))}`
      }
      ORDER BY "receivedAt" LIMIT 500`,
  )
  if (!pending.length) return 0
  const spellings = new Map(
    pending.map((p) => [p.smscMessageId as string, [p.smscMessageId as string, ...otherSpellings(p.smscMessageId as string)]]),
  )
  const known = await statementOf(
    deps,
    Prisma.sql`SELECT "smscMessageId" FROM "SmppPart" WHERE "smscMessageId" IN (${Prisma.join([...new Set([...spellings.values()].flat())])})`,
  )
  const recorded = new Set(known.map((k) => k.smscMessageId as string))
  let matched = 0
  for (const receipt of pending) {
    if (!spellings.get(receipt.smscMessageId as string)!.some((id) => recorded.has(id))) continue
    // Whoever removes the row applies it: two instances sweeping at once apply it once.
    const removed = await statementOf(
      deps,
      Prisma.sql`DELETE FROM "SmppPendingReceipt" WHERE "id" = ${receipt.id as string} RETURNING "id"`,
    )
    if (!removed.length) continue
    await applyReceipt(deps, {
      smscMessageId: receipt.smscMessageId as string,
      stat: receipt.carrierStatus as string,
      errorCode: receipt.errorCode as string | null,
      doneAt: dateOf(receipt.doneAt),
    })
    matched++
  }
  return matched
}
