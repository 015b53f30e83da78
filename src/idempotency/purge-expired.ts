import type { Deps } from '../deps.js'
import { oncePerInterval } from '../core/once-per-interval.js'

const purgeDue = oncePerInterval()

/**
 * Deletes Idempotency-Key records past their 24 h. Cheap enough for every worker tick: it runs at
 * most once per `minIntervalMs` per database (one indexed DELETE on expiresAt) and returns how many
 * records went. Correctness does not depend on it: expired records are ignored and overwritten.
 */
export async function purgeExpiredIdempotencyRecords(
  { db, clock }: Pick<Deps, 'db' | 'clock'>,
  { minIntervalMs = 60_000 }: { minIntervalMs?: number } = {},
): Promise<number> {
  const now = clock.now().getTime()
  if (!purgeDue(db, now, minIntervalMs)) return 0
  const { count } = await db.idempotencyRecord.deleteMany({ where: { expiresAt: { lte: new Date(now) } } })
  return count
}
