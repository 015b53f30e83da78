import ipaddr from 'ipaddr.js'

/**
 * Token bucket per key, in this process. With several instances each enforces its own share;
 * see docs/operations.md.
 *
 * At most `maxKeys` buckets are kept. The Map keeps insertion order and a touched bucket is
 * re-inserted, so the first entry is always the least recently used one and is what goes when the
 * map is full (1% of them at a time). A flood of new keys (random bearer tokens) therefore only pushes out idle buckets;
 * a busy key keeps its budget. A dropped bucket starts full again, which only forgives a key that
 * was idle longer than everything else.
 */
export function createRateLimiter({
  perSecond,
  burst,
  maxKeys = 100_000,
  now = () => Date.now(),
}: {
  perSecond: number
  burst: number
  maxKeys?: number
  now?: () => number
}) {
  const buckets = new Map<string, { tokens: number; at: number }>()
  return {
    /** 0 when allowed, else the seconds to wait. */
    take(key: string): number {
      if (perSecond <= 0) return 0
      const t = now()
      let bucket = buckets.get(key)
      if (bucket) {
        buckets.delete(key)
      } else {
        bucket = { tokens: burst, at: t }
        if (buckets.size >= maxKeys) {
          // The oldest 1% at once: deleted Map entries stay as holes at the front until V8 compacts
          // the table, so evicting one at a time would rescan them on every new key.
          let drop = Math.max(1, Math.floor(maxKeys / 100))
          for (const old of buckets.keys()) {
            buckets.delete(old)
            if (--drop === 0) break
          }
        }
      }
      buckets.set(key, bucket)
      bucket.tokens = Math.min(burst, bucket.tokens + ((t - bucket.at) / 1000) * perSecond)
      bucket.at = t
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1
        return 0
      }
      return Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond))
    },
    /**
     * The IETF RateLimit headers for `key` after its take (draft-ietf-httpapi-ratelimit-headers):
     * the policy's quota is the burst and its window the time an empty bucket takes to refill; `r`
     * is what is left, `t` the seconds until the bucket is full again. null when limiting is off.
     */
    headers(key: string, policy: string): Record<string, string> | null {
      if (perSecond <= 0) return null
      const bucket = buckets.get(key)
      const tokens = bucket ? Math.min(burst, bucket.tokens + ((now() - bucket.at) / 1000) * perSecond) : burst
      return {
        'RateLimit-Policy': `"${policy}";q=${burst};w=${Math.max(1, Math.ceil(burst / perSecond))}`,
        RateLimit: `"${policy}";r=${Math.floor(tokens)};t=${Math.ceil((burst - tokens) / perSecond)}`,
      }
    },
    get size() {
      return buckets.size
    },
  }
}

/**
 * The budget key of a client address: IPv4 (also IPv4-mapped IPv6) per address, IPv6 per /64,
 * since one subscriber usually holds a whole /64 and could otherwise rotate addresses at will.
 */
export function clientKey(address: string): string | null {
  if (!ipaddr.isValid(address)) return null
  const parsed = ipaddr.process(address)
  if (parsed.kind() === 'ipv4') return parsed.toString()
  return `${(parsed as ipaddr.IPv6).parts
    .slice(0, 4)
    .map((p) => p.toString(16))
    .join(':')}::/64`
}
