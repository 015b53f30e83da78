import type { Deps } from '../../deps.js'
import { CARRIER_STATUS_MAP, isFinal, type DeliveryStatus } from '../delivery-status.js'
import { recordCarrierStatus } from '../record-status.js'
import { otherSpellings, type SmppReceipt } from './receipt.js'
import { oncePerInterval } from '../../core/once-per-interval.js'

type ReceiptDeps = Pick<Deps, 'db' | 'clock' | 'logger'> & Partial<Pick<Deps, 'events'>>

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

/**
 * Applies one delivery receipt. The part is found by the SMSC's message id on any instance (the id
 * is in the database, not in a bind's memory). A receipt whose part is not recorded yet (it came
 * before the submit_sm_resp was recorded, or to another instance) is kept as pending and matched
 * when the part is recorded, or by the worker's sweep. Returns whether it matched a part.
 */
export async function applyReceipt(deps: ReceiptDeps, receipt: SmppReceipt): Promise<boolean> {
  const { db } = deps
  let parts = await db.smppPart.findMany({ where: { smscMessageId: receipt.smscMessageId }, select: { messageId: true, part: true } })
  // The same number in the other base (a hex submit_sm_resp id, a decimal receipt id, or the reverse).
  const others = parts.length ? [] : otherSpellings(receipt.smscMessageId)
  if (others.length) {
    parts = await db.smppPart.findMany({ where: { smscMessageId: { in: others } }, select: { messageId: true, part: true } })
  }
  if (!parts.length) {
    await db.smppPendingReceipt.create({
      data: {
        smscMessageId: receipt.smscMessageId,
        carrierStatus: receipt.stat,
        errorCode: receipt.errorCode,
        doneAt: receipt.doneAt,
        receivedAt: deps.clock.now(),
      },
    })
    // The answer may have been recorded since the lookup above, and its own look for pending
    // receipts (matchPendingReceipts after recording) may have run before this row existed: look
    // again now that it does. Of the two, the later one sees the other's committed write.
    const recorded = await db.smppPart.findFirst({
      where: { smscMessageId: { in: [receipt.smscMessageId, ...otherSpellings(receipt.smscMessageId)] } },
      select: { messageId: true },
    })
    return recorded ? (await matchPendingReceipts(deps, [receipt.smscMessageId])) > 0 : false
  }
  for (const part of parts) {
    await db.smppPart.update({
      where: { messageId_part: part },
      data: { carrierStatus: receipt.stat, errorCode: receipt.errorCode, doneAt: receipt.doneAt ?? deps.clock.now() },
    })
    await reportMessage(deps, part.messageId, receipt)
  }
  return true
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
  const parts = await deps.db.smppPart.findMany({ where: { messageId }, orderBy: { part: 'asc' } })
  const total = parts[0]?.parts ?? 1
  const finals = parts.filter((p) => p.carrierStatus && isFinal(statusOf(p.carrierStatus)))
  if (finals.length < total || parts.length < total) {
    if (isFinal(statusOf(receipt.stat))) return
    await recordCarrierStatus(deps, { messageId, status: receipt.stat, errorCode: receipt.errorCode, at: receipt.doneAt ?? undefined })
    return
  }
  const failed = finals.find((p) => statusOf(p.carrierStatus!) !== 'DELIVRD')
  const deciding = failed ?? finals.reduce((a, b) => ((a.doneAt?.getTime() ?? 0) >= (b.doneAt?.getTime() ?? 0) ? a : b))
  const raw = deciding.carrierStatus!
  await recordCarrierStatus(deps, {
    messageId,
    status: CARRIER_STATUS_MAP[raw] ? raw : 'UNKNOWN',
    errorCode: deciding.errorCode,
    at: deciding.doneAt ?? undefined,
  })
}

/** Receipts kept as pending whose parts are now recorded: applied, then removed. */
export async function matchPendingReceipts(deps: ReceiptDeps, smscMessageIds?: string[]): Promise<number> {
  const { db } = deps
  const pending = await db.smppPendingReceipt.findMany({
    where: smscMessageIds
      ? { smscMessageId: { in: smscMessageIds.flatMap((id) => [id, ...otherSpellings(id)]) } }
      : { receivedAt: { gte: new Date(deps.clock.now().getTime() - PENDING_MATCH_MS) } },
    orderBy: { receivedAt: 'asc' },
    take: 500,
  })
  if (!pending.length) return 0
  const spellings = new Map(pending.map((p) => [p.smscMessageId, [p.smscMessageId, ...otherSpellings(p.smscMessageId)]]))
  const known = await db.smppPart.findMany({
    where: { smscMessageId: { in: [...new Set([...spellings.values()].flat())] } },
    select: { smscMessageId: true },
  })
  const recorded = new Set(known.map((k) => k.smscMessageId))
  let matched = 0
  for (const receipt of pending) {
    if (!spellings.get(receipt.smscMessageId)!.some((id) => recorded.has(id))) continue
    // Whoever removes the row applies it: two instances sweeping at once apply it once.
    const { count } = await db.smppPendingReceipt.deleteMany({ where: { id: receipt.id } })
    if (!count) continue
    await applyReceipt(deps, {
      smscMessageId: receipt.smscMessageId,
      stat: receipt.carrierStatus,
      errorCode: receipt.errorCode,
      doneAt: receipt.doneAt,
    })
    matched++
  }
  return matched
}
