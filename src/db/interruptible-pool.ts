import pg from 'pg'
import { DatabaseConnectionError } from '../core/database-faults.js'

/**
 * What a request waiting on a frozen PostgreSQL gets once the circuit breaker (src/db/breaker.ts)
 * has opened: without it, a statement already sent waits for its `query_timeout`
 * (DB_STATEMENT_TIMEOUT_MS plus a second) and a wait for a connection for DB_CONNECT_TIMEOUT_MS,
 * so only the requests that arrived after the probe failed were answered 503 at once.
 */
export interface PoolInterrupt {
  /**
   * Fails every wait on the pool now and every checkout until `resume`: the sockets of its
   * connections are cut (their pending statements fail as lost connections, and the pool drops
   * them), waits for a connection are rejected, and new checkouts are refused without a wait.
   * A statement the frozen server had already received may still run when it wakes (as after any
   * client-side timeout); a transaction whose COMMIT it had not received rolls back.
   */
  interrupt(reason: string): void
  /** Checkouts go to the server again (the breaker's probe answered). */
  resume(): void
}

type Checkout = (error: Error | undefined, client?: pg.PoolClient, release?: (error?: Error | boolean) => void) => void

interface PoolInternals {
  _clients: { connection?: { stream?: { destroy(): void } } }[]
  _pendingQueue: unknown[]
}

/** `pool`, its `connect` (which `pool.query` and Prisma's adapter both go through) made interruptible. */
export function makeInterruptible(pool: pg.Pool): PoolInterrupt {
  let refusal: Error | null = null
  const waiting = new Set<(error: Error) => void>()
  const connect = pool.connect.bind(pool) as (callback: Checkout) => void

  function checkout(callback: Checkout) {
    if (refusal) {
      const error = refusal
      process.nextTick(() => callback(error))
      return
    }
    let settled = false
    const fail = (error: Error) => {
      if (settled) return
      settled = true
      waiting.delete(fail)
      callback(error)
    }
    waiting.add(fail)
    connect((error, client, release) => {
      waiting.delete(fail)
      if (settled) {
        // The waiter was answered already: a connection that arrives after all goes back to the pool.
        release?.()
        return
      }
      settled = true
      callback(error, client, release)
    })
  }

  ;(pool as unknown as { connect: unknown }).connect = (callback?: Checkout) => {
    if (callback) return checkout(callback)
    return new Promise<pg.PoolClient>((resolve, reject) => checkout((error, client) => (error ? reject(error) : resolve(client!))))
  }

  return {
    interrupt(reason) {
      refusal = new DatabaseConnectionError(`database unreachable: ${reason}`)
      for (const fail of waiting) fail(refusal)
      const internals = pool as unknown as PoolInternals
      // Every queued checkout was one of `waiting`, answered now: none may open a connection
      // into the frozen server later (pg-pool's own timer for each ends without effect).
      internals._pendingQueue.length = 0
      for (const client of internals._clients) client.connection?.stream?.destroy()
    },
    resume() {
      refusal = null
    },
  }
}

/**
 * The breaker's probe on PostgreSQL: `SELECT 1` on a connection of its own, outside the pool, so
 * that a busy pool (every connection in use, requests queued) is not mistaken for a frozen server,
 * and an interrupted pool does not keep the probe failing. Any failure drops the connection; the
 * next probe opens a new one, bounded by the same timeout.
 */
export function probeConnection(config: pg.ClientConfig): { probe(timeoutMs: number): Promise<void>; close(): Promise<void> } {
  let client: pg.Client | null = null
  let connected: Promise<void> | null = null
  const drop = (which: pg.Client) => {
    if (client !== which) return
    client = null
    connected = null
    ;(which as unknown as PoolInternals['_clients'][number]).connection?.stream?.destroy()
  }
  return {
    async probe(timeoutMs) {
      if (!client) {
        const fresh = new pg.Client({ ...config, connectionTimeoutMillis: timeoutMs })
        fresh.on('error', () => drop(fresh))
        client = fresh
        connected = fresh.connect().then(() => undefined)
      }
      const current = client
      let timer: NodeJS.Timeout | undefined
      try {
        await Promise.race([
          connected!.then(() => current.query('SELECT 1')),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
          }),
        ])
      } catch (error) {
        drop(current)
        throw error
      } finally {
        clearTimeout(timer)
      }
    },
    async close() {
      const current = client
      client = null
      connected = null
      await current?.end().catch(() => undefined)
    },
  }
}
