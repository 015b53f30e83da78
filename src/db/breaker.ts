import type { Logger } from 'pino'

/**
 * A circuit breaker for the database. A statement that cannot reach the database waits for its
 * timeout (DB_STATEMENT_TIMEOUT_MS plus a second on PostgreSQL): with a frozen server every request
 * would hang that long. So a probe (`SELECT 1`, bounded by `probeTimeoutMs`) runs every
 * `intervalMs`; once a probe fails (no answer within `probeTimeoutMs`, a refused connection) the
 * breaker is open and new requests are answered 503 SERVICE_UNAVAILABLE at once, instead of joining
 * the requests already waiting. The next probe that succeeds closes it again: no restart.
 */
export interface DatabaseBreaker {
  /** True while the database is known to be unreachable. */
  readonly open: boolean
  stop(): void
}

export interface BreakerOptions {
  probe: () => Promise<unknown>
  logger: Pick<Logger, 'warn' | 'info'>
  intervalMs?: number
  probeTimeoutMs?: number
}

export function createDatabaseBreaker({ probe, logger, intervalMs = 1000, probeTimeoutMs = 1000 }: BreakerOptions): DatabaseBreaker {
  let open = false
  let stopped = false
  let timer: NodeJS.Timeout | undefined

  const setOpen = (next: boolean, why: string) => {
    if (next === open) return
    open = next
    if (open) logger.warn({ why }, 'database unreachable: answering 503 until a probe succeeds')
    else logger.info({ why }, 'database reachable again')
  }

  async function check() {
    let timeout: NodeJS.Timeout | undefined
    try {
      await Promise.race([
        probe(),
        new Promise((_, reject) => {
          timeout = setTimeout(() => reject(new Error(`no answer within ${probeTimeoutMs} ms`)), probeTimeoutMs)
        }),
      ])
      setOpen(false, 'probe answered')
    } catch (error) {
      setOpen(true, `probe failed: ${(error as Error).message}`)
    } finally {
      clearTimeout(timeout)
      if (!stopped) {
        timer = setTimeout(() => void check(), intervalMs)
        timer.unref()
      }
    }
  }
  timer = setTimeout(() => void check(), intervalMs)
  timer.unref()

  return {
    get open() {
      return open
    },
    stop() {
      stopped = true
      clearTimeout(timer)
    },
  }
}
