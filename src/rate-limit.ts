/**
 * Token bucket per key, in this process. With several instances each enforces its own share;
 * see docs/operations.md.
 */
export function createRateLimiter({ perSecond, burst, now = () => Date.now() }: { perSecond: number; burst: number; now?: () => number }) {
  const buckets = new Map<string, { tokens: number; at: number }>()
  return {
    /** 0 when allowed, else the seconds to wait. */
    take(key: string): number {
      if (perSecond <= 0) return 0
      const t = now()
      const bucket = buckets.get(key) ?? { tokens: burst, at: t }
      bucket.tokens = Math.min(burst, bucket.tokens + ((t - bucket.at) / 1000) * perSecond)
      bucket.at = t
      buckets.set(key, bucket)
      if (buckets.size > 100_000) buckets.clear()
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1
        return 0
      }
      return Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond))
    },
  }
}
