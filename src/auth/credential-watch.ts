// Live connections (WebSockets, SSE streams) outlive the request that authenticated them. This
// watch ends them when their credential ends: a revoked API key, a console session signed out
// (one, or everywhere) or expired. The signals are the ones the key cache uses: the event bus
// (NOTIFY on PostgreSQL, so every instance hears it; in-process on SQLite), RESYNC after a gap,
// and on SQLite a probe of the database file for what another process committed.
import type { Db } from '../db/client.js'
import type { Clock } from '../core/clock.js'
import type { EventBus } from '../events/event-bus.js'
import { RESYNC } from '../events/event-bus.js'
import { API_KEY_REVOKED, isApiKeyRevoked } from './api-key-revoked.js'

/** Published after console sessions are signed out; every instance ends their live connections. */
export const CONSOLE_SESSIONS_ENDED = 'console.sessions-ended'

export interface ConsoleSessionsEnded {
  accountId: string
  /** null: every session of the account. */
  sessionId: string | null
}

export function isConsoleSessionsEnded(value: unknown): value is ConsoleSessionsEnded {
  const v = value as Partial<ConsoleSessionsEnded> | null
  return typeof v?.accountId === 'string' && (v.sessionId === null || typeof v.sessionId === 'string')
}

/** What a live connection authenticated with. */
export interface HeldCredential {
  accountId: string
  /** The API key's id, or null for a console session. */
  keyId: string | null
  sessionId: string | null
  /** A session's end: the connection ends then, even if nobody signs out. */
  expiresAt?: Date
}

interface Holder extends HeldCredential {
  end: () => void
  timer?: NodeJS.Timeout
}

export interface CredentialWatchOptions {
  db: Db
  events: EventBus
  clock: Clock
  /**
   * SQLite: true when another process committed since the last call (PRAGMA data_version); the
   * held credentials are then looked up again. PostgreSQL needs none (NOTIFY reaches every instance).
   */
  changes?: () => boolean
  /** How often `changes` is asked while anything is held. */
  pollMs?: number
}

/** setTimeout's largest delay (about 24.8 days); a later end is re-armed when it fires. */
const MAX_DELAY_MS = 2 ** 31 - 1

export function createCredentialWatch({ db, events, clock, changes, pollMs = 250 }: CredentialWatchOptions) {
  const holders = new Set<Holder>()
  let subscribed = false
  let poll: NodeJS.Timeout | undefined
  let checking = false

  const end = (holder: Holder) => {
    if (!holders.delete(holder)) return
    clearTimeout(holder.timer)
    if (holders.size === 0) stopPolling()
    holder.end()
  }
  const stopPolling = () => {
    clearInterval(poll)
    poll = undefined
  }

  /** Looks every held credential up again: after RESYNC, or another process's commit (SQLite). */
  async function recheck() {
    if (checking || holders.size === 0) return
    checking = true
    try {
      const held = [...holders]
      const keyIds = [...new Set(held.flatMap((h) => (h.keyId ? [h.keyId] : [])))]
      const sessionIds = [...new Set(held.flatMap((h) => (h.sessionId ? [h.sessionId] : [])))]
      const [revokedKeys, endedSessions] = await Promise.all([
        keyIds.length
          ? db.apiKey.findMany({ where: { id: { in: keyIds }, revokedAt: { not: null } }, select: { id: true } })
          : Promise.resolve([]),
        sessionIds.length
          ? db.consoleSession.findMany({
              where: { id: { in: sessionIds }, OR: [{ revokedAt: { not: null } }, { expiresAt: { lte: clock.now() } }] },
              select: { id: true },
            })
          : Promise.resolve([]),
      ])
      const keys = new Set(revokedKeys.map((k) => k.id))
      const sessions = new Set(endedSessions.map((s) => s.id))
      for (const holder of held) {
        if ((holder.keyId && keys.has(holder.keyId)) || (holder.sessionId && sessions.has(holder.sessionId))) end(holder)
      }
    } catch {
      // The database is away: the next change, RESYNC or per-operation check tries again.
    } finally {
      checking = false
    }
  }

  function subscribeOnce() {
    if (subscribed) return
    subscribed = true
    events.subscribe(API_KEY_REVOKED, (payload) => {
      if (!isApiKeyRevoked(payload)) return void recheck()
      for (const holder of holders) if (holder.keyId === payload.id) end(holder)
    })
    events.subscribe(CONSOLE_SESSIONS_ENDED, (payload) => {
      if (!isConsoleSessionsEnded(payload)) return void recheck()
      for (const holder of holders) {
        if (
          holder.sessionId &&
          holder.accountId === payload.accountId &&
          (payload.sessionId === null || payload.sessionId === holder.sessionId)
        )
          end(holder)
      }
    })
    events.subscribe(RESYNC, () => void recheck())
  }

  function arm(holder: Holder) {
    if (!holder.expiresAt) return
    const left = holder.expiresAt.getTime() - clock.now().getTime()
    if (left <= 0) return end(holder)
    holder.timer = setTimeout(() => (left > MAX_DELAY_MS ? arm(holder) : end(holder)), Math.min(left, MAX_DELAY_MS))
    holder.timer.unref()
  }

  return {
    /**
     * Calls `onEnd` once when the credential ends (on any instance); the returned function stops
     * watching (the connection closed by itself). An anonymous connection has nothing to hold.
     */
    hold(credential: HeldCredential, onEnd: () => void): () => void {
      subscribeOnce()
      const holder: Holder = { ...credential, end: onEnd }
      holders.add(holder)
      arm(holder)
      if (changes && !poll) {
        // The first call sets the baseline: what committed before it, the holder's own lookup saw
        // (or, in the moment between, the per-operation check of the socket refuses).
        changes()
        poll = setInterval(() => {
          // The database may be closed under a connection still held (shutdown, a test's end):
          // nothing is left to watch then, and a throw here would be an uncaught exception.
          let changed: boolean
          try {
            changed = changes!()
          } catch {
            stopPolling()
            return
          }
          if (changed) void recheck()
        }, pollMs)
        poll.unref()
      }
      return () => {
        if (!holders.delete(holder)) return
        clearTimeout(holder.timer)
        if (holders.size === 0) stopPolling()
      }
    },
    /** Credentials held now (tests, metrics). */
    get size() {
      return holders.size
    },
  }
}
