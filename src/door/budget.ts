import { createHash } from 'node:crypto'
import type { Env } from '../core/env.js'
import { createRateLimiter } from '../http/rate-limit.js'
import type { Credentials } from './credentials.js'

export interface Spent {
  /** 0: go ahead; else the seconds to wait (Retry-After). */
  wait: number
  /** The RateLimit headers of the bucket spent from; null when limiting is off or nothing was counted. */
  headers: Record<string, string> | null
  /** The refusal's message, when `wait` > 0. */
  message: string
}

const FREE: Spent = { wait: 0, headers: null, message: '' }

/**
 * The budget stage, shared by the HTTP and WebSocket doors: each request, and each operation a
 * socket sends (subscribe included), spends one token.
 * - An account's budget belongs to the account: all its keys and console sessions spend the same
 *   bucket, so more keys bring no more requests.
 * - Anything without a live credential spends its client address's budget (IPv6 per /64): no token,
 *   and a token that is no key (malformed, unknown, revoked), so random tokens bring no fresh budget.
 * - A token that was not looked up (the carrier connector's, or a database fault during the check)
 *   spends a bucket of its own, keyed on its digest.
 * In-process callers (no address) without a credential are not limited.
 */
export function createBudget(
  env: Pick<Env, 'RATE_LIMIT_PER_SECOND' | 'RATE_LIMIT_BURST' | 'RATE_LIMIT_ANONYMOUS_PER_SECOND' | 'RATE_LIMIT_ANONYMOUS_BURST'>,
) {
  const limiter = createRateLimiter({ perSecond: env.RATE_LIMIT_PER_SECOND, burst: env.RATE_LIMIT_BURST })
  const anonymousLimiter = createRateLimiter({ perSecond: env.RATE_LIMIT_ANONYMOUS_PER_SECOND, burst: env.RATE_LIMIT_ANONYMOUS_BURST })

  function spend(credentials: Credentials, addressKey: string | null): Spent {
    const { token, session, account } = credentials
    const realKey = token ? (credentials.verified ? account !== null : true) : false
    if (session || realKey) {
      const bucket = account ? `account:${account.id}` : createHash('sha256').update(token!).digest('base64')
      const wait = limiter.take(bucket)
      const message = session ? 'Too many requests for this console session' : 'Too many requests for this API key'
      return { wait, headers: limiter.headers(bucket, 'key'), message }
    }
    if (!addressKey) return FREE
    return {
      wait: anonymousLimiter.take(addressKey),
      headers: anonymousLimiter.headers(addressKey, 'address'),
      message: 'Too many requests from this address',
    }
  }

  return { spend }
}
