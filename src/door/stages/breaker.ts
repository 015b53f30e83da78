import type { DatabaseBreaker } from '../../db/breaker.js'
import type { Door, Stage } from '../pipeline.js'

/** The database is known to be unreachable (src/db/breaker.ts): answer 503 now rather than wait for a statement timeout. */
export function breakerStage(breaker: Pick<DatabaseBreaker, 'open'> | undefined, unavailable: (door: Door) => Response): Stage {
  return function databaseBreaker(door, next) {
    if (breaker?.open) return Promise.resolve(unavailable(door))
    return next(door)
  }
}
