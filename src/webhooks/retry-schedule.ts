/**
 * When the attempt after `failedAttempts` failures is due: the first attempt at once, then
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after each failure, with ±10 % jitter.
 * After the eighth failed attempt there is none (null): the delivery is marked failed.
 */
export const RETRY_DELAYS_MS = [0, 5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000]

export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length

export function nextAttemptAt(failedAttempts: number, now: Date, random: () => number = Math.random, retryAfterMs = 0): Date | null {
  if (failedAttempts >= MAX_ATTEMPTS) return null
  const base = RETRY_DELAYS_MS[failedAttempts]!
  const jittered = base * (0.9 + 0.2 * random())
  // A receiver's Retry-After is a floor, never a way to retry sooner than the schedule.
  return new Date(now.getTime() + Math.max(Math.round(jittered), retryAfterMs))
}

/** Retry-After as seconds or an HTTP date; milliseconds from now, 0 when absent or unreadable. Capped at 24 h. */
export function parseRetryAfter(value: string | undefined, now: Date): number {
  if (!value) return 0
  const ms = /^\d+$/.test(value.trim()) ? Number(value.trim()) * 1000 : Date.parse(value) - now.getTime()
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, 24 * 3_600_000) : 0
}
