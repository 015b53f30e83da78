import type { Deps } from '../deps.js'
import { oncePerInterval } from '../core/once-per-interval.js'

const purgeDue = oncePerInterval()

/**
 * Deletes audit entries older than AUDIT_RETENTION_DAYS: the one path that removes entries. Run by
 * the worker's tick, at most once per `minIntervalMs` per database (one indexed DELETE on `at`);
 * returns how many went.
 */
export async function purgeExpiredAuditEvents(
  { db, clock, env }: Pick<Deps, 'db' | 'clock' | 'env'>,
  { minIntervalMs = 3_600_000 }: { minIntervalMs?: number } = {},
): Promise<number> {
  const now = clock.now().getTime()
  if (!purgeDue(db, now, minIntervalMs)) return 0
  const before = new Date(now - env.AUDIT_RETENTION_DAYS * 86_400_000)
  const { count } = await db.auditEvent.deleteMany({ where: { at: { lt: before } } })
  return count
}
