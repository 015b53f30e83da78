import { hash } from 'node:crypto'
import { Prisma } from '../generated/sqlite/client.js'
import { directTimestamp, type Db, type DirectRead } from '../db/client.js'
import type { DatabaseKind } from '../db/connection-url.js'
import type { EventBus } from '../events/event-bus.js'
import { RESYNC } from '../events/event-bus.js'
import { apiKeyPrefix, authenticateApiKey, unauthenticated, type AuthenticatedAccount } from './api-keys.js'
import { API_KEY_REVOKED, isApiKeyRevoked } from './api-key-revoked.js'
import { systemClock, type Clock } from '../core/clock.js'

export interface ApiKeyCache {
  /** authenticateApiKey, answered from memory for a key verified less than ttlMs ago. */
  authenticate(apiKey: string): Promise<AuthenticatedAccount>
  /** How many keys are remembered (for tests and metrics). */
  size(): number
  /** Resolves once the lastUsedAt writes already started have finished: close the database after it. */
  idle(): Promise<void>
}

interface Entry {
  account: AuthenticatedAccount
  prefix: string
  expiresAt: number
}

export interface ApiKeyCacheOptions {
  db: Db
  /**
   * The key's lookup and its lastUsedAt write without Prisma's runtime (Database.directRead and its
   * database's kind); without it both go through Prisma.
   */
  direct?: { read: DirectRead; kind: DatabaseKind }
  events: EventBus
  /** 0 turns the cache off: every request looks the key up. */
  ttlMs: number
  maxEntries?: number
  /**
   * Asked before every lookup: true when a revocation may have happened that the event bus does not
   * announce (SQLite: another process's). The cache is then emptied.
   */
  revocations?: () => boolean
  /** Monotonic milliseconds. */
  now?: () => number
  /** Wall time, for keys' expiry (expiresAt): a remembered key past it is refused at once. */
  clock?: Clock
}

/**
 * Verified keys per instance, keyed by the key's SHA-256 (the key itself is never held), least
 * recently used evicted first. Correctness rests on the event bus:
 * - entries are served and stored only while the bus is live (events from every instance arrive);
 * - a revocation (API_KEY_REVOKED) drops its key at once; RESYNC (the bus was deaf for a while)
 *   drops everything, and so does a revocation the bus cannot announce (`revocations`: another
 *   process's on SQLite, checked before every lookup);
 * - a lookup stores its answer only if no invalidation arrived while it ran, so a revocation that
 *   overtakes a slow lookup cannot be undone by it.
 * Failed lookups are never cached: a key created a moment ago works on its first request, and a
 * guessing client still pays a database round trip per guess (and the rate limit) for a 256-bit key.
 */
/** A key's lastUsedAt is written at most this often by one instance (the console shows it). */
export const LAST_USED_EVERY_MS = 60_000

export function createApiKeyCache({
  db,
  direct,
  events,
  ttlMs,
  maxEntries = 10_000,
  revocations,
  now = () => performance.now(),
  clock = systemClock,
}: ApiKeyCacheOptions): ApiKeyCache {
  const entries = new Map<string, Entry>()
  const byPrefix = new Map<string, string>()
  // When this instance last wrote a key's lastUsedAt (monotonic ms): at most once a minute per key.
  const touched = new Map<string, number>()
  const writes = new Set<Promise<void>>()
  const used = (account: AuthenticatedAccount) => {
    const at = now()
    const last = touched.get(account.keyId)
    if (last !== undefined && at - last < LAST_USED_EVERY_MS) return account
    if (touched.size >= maxEntries) touched.clear()
    touched.set(account.keyId, at)
    // Best effort and off the request's path: a failed write costs the key a stale "last used".
    // Sent in the check phase, once the request has sent its own statement: sent at once it took
    // the pool's one open connection (a quiet minute leaves one, the breaker's probe keeps it), and
    // the request's statement waited for a new one, 13 ms to connect and a fresh backend's plan
    // (docs/performance.md, "A request after a pause").
    const usedAt = new Date()
    const write = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => writeLastUsed(account.keyId, usedAt))
      .then(
        () => undefined,
        () => void touched.delete(account.keyId),
      )
      .finally(() => writes.delete(write))
    writes.add(write)
    return account
  }
  // One UPDATE outside a transaction: Prisma's updateMany sent BEGIN, UPDATE and COMMIT (three
  // round trips on PostgreSQL). On SQLite the direct write runs on Prisma's one connection, so a
  // transaction open there at that moment takes it in (and a rollback loses it: best effort).
  const writeLastUsed = async (keyId: string, usedAt: Date) => {
    const written =
      direct &&
      (await direct.read(Prisma.sql`UPDATE "ApiKey" SET "lastUsedAt" = ${directTimestamp(direct.kind, usedAt)} WHERE "id" = ${keyId}`, {
        prepared: true,
      }))
    if (!written) await db.apiKey.updateMany({ where: { id: keyId }, data: { lastUsedAt: usedAt } })
  }
  let invalidations = 0
  let subscribed = false

  const remove = (digest: string) => {
    const entry = entries.get(digest)
    if (!entry) return
    entries.delete(digest)
    byPrefix.delete(entry.prefix)
  }
  const flush = () => {
    invalidations++
    entries.clear()
    byPrefix.clear()
  }

  // Subscribing opens the listening connection, so it waits for the first request: the CLI never does.
  function subscribeOnce() {
    if (subscribed) return
    subscribed = true
    events.subscribe(API_KEY_REVOKED, (payload) => {
      invalidations++
      if (!isApiKeyRevoked(payload)) return flush()
      const digest = byPrefix.get(payload.prefix)
      if (digest) remove(digest)
    })
    events.subscribe(RESYNC, flush)
  }

  return {
    async authenticate(apiKey) {
      if (ttlMs <= 0) return used(await authenticateApiKey(db, apiKey, direct?.read, clock.now()))
      const prefix = apiKeyPrefix(apiKey)
      if (!prefix) throw unauthenticated()
      subscribeOnce()
      if (revocations?.()) flush()
      // One-shot: a Hash object, its Buffer and the Buffer's base64 cost 1.8 µs; this 0.3 (node 20.12+).
      const digest = hash('sha256', apiKey, 'base64')
      const cached = entries.get(digest)
      // A key's own expiry is checked on every use: an entry never outlives it.
      const keyExpired = (account: AuthenticatedAccount) => account.keyExpiresAt !== null && account.keyExpiresAt <= clock.now().getTime()
      if (cached && cached.expiresAt > now() && events.isLive() && !keyExpired(cached.account)) {
        // Map order is insertion order: re-inserting makes it the most recently used.
        entries.delete(digest)
        entries.set(digest, cached)
        return used(cached.account)
      }
      if (cached) remove(digest)
      const before = invalidations
      // The entry ages from before the lookup: its answer can be no older than ttlMs when it expires.
      const lookedUpAt = now()
      const account = await authenticateApiKey(db, apiKey, direct?.read, clock.now())
      if (before === invalidations && events.isLive()) {
        entries.set(digest, { account, prefix, expiresAt: lookedUpAt + ttlMs })
        byPrefix.set(prefix, digest)
        if (entries.size > maxEntries) remove(entries.keys().next().value!)
      }
      return used(account)
    },
    size: () => entries.size,
    idle: async () => {
      while (writes.size) await Promise.all(writes)
    },
  }
}
