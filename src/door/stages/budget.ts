import type { createBudget } from '../budget.js'
import { withHeaders, type Door, type Stage } from '../pipeline.js'

/**
 * Spends one token of the caller's budget (src/door/budget.ts: the account's, or the address's);
 * out of budget, the refusal with Retry-After. Either way the RateLimit headers say what is left.
 */
export function budgetStage(
  budget: ReturnType<typeof createBudget>,
  rateLimited: (door: Door, message: string, wait: number) => Response,
): Stage {
  return async function spend(door, next) {
    const spent = budget.spend(door.credentials, door.address.key)
    if (spent.wait > 0) return withHeaders(rateLimited(door, spent.message, spent.wait), spent.headers)
    return withHeaders(await next(door), spent.headers)
  }
}
