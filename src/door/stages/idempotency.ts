import type { Deps } from '../../deps.js'
import { withIdempotencyKey } from '../../idempotency/with-idempotency-key.js'
import type { Stage } from '../pipeline.js'

/** Idempotency-Key: replays, refusals and kept answers around the route (src/idempotency). */
export function idempotencyStage(deps: Deps): Stage {
  const options = { leaseMs: deps.env.WORKER_LEASE_MS }
  return function idempotency(door, next) {
    return withIdempotencyKey(deps, door, options, (request) => next(request === door.request ? door : { ...door, request }))
  }
}
