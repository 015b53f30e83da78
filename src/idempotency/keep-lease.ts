import type { Deps } from '../deps.js'
import type { Claim } from './claim-key.js'

/**
 * Renews the lease of a running claim while its request runs, so a slow request is not taken over
 * as if it had crashed. Returns the function that stops renewing.
 */
export function keepLease({ db, clock, logger }: Pick<Deps, 'db' | 'clock' | 'logger'>, claim: Claim, leaseMs: number): () => void {
  const timer = setInterval(
    () => {
      db.idempotencyRecord
        .updateMany({
          where: { accountId: claim.accountId, key: claim.key, createdAt: claim.createdAt, state: 'running' },
          data: { leaseUntil: new Date(clock.now().getTime() + leaseMs) },
        })
        .catch((error: unknown) => logger.warn({ err: error }, 'could not renew an Idempotency-Key lease'))
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  )
  timer.unref()
  return () => clearInterval(timer)
}
