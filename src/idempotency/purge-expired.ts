import type { Deps } from '../deps.js'

const lastPurge = new WeakMap<object, number>()

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
  const last = lastPurge.get(db)
  if (last !== undefined && now >= last && now - last < minIntervalMs) return 0
  lastPurge.set(db, now)
  const { count } = await db.idempotencyRecord.deleteMany({ where: { expiresAt: { lte: new Date(now) } } })
  return count
}
