import type { Logger } from 'pino'

/**
 * A circuit breaker for the database. A statement that cannot reach the database waits for its
 * timeout (DB_STATEMENT_TIMEOUT_MS plus a second on PostgreSQL): with a frozen server every request
 * would hang that long. So a probe (`SELECT 1`, bounded by `probeTimeoutMs`, DB_PROBE_TIMEOUT_MS)
 * runs every `intervalMs` (DB_PROBE_INTERVAL_MS) after the previous one ended; once a probe fails
 * (no answer in time, a refused connection) the breaker is open: `onOpen` fails the requests
 * already waiting on the database (Database.interrupt), and new requests are answered 503
 * SERVICE_UNAVAILABLE at once. The next probe that succeeds closes it again (`onClose`): no restart.
 * With the defaults (250 ms, 500 ms) a database that freezes right after a probe answered is
 * noticed within 0.75 s.
 */
export interface DatabaseBreaker {
  /** True while the database is known to be unreachable. */
  readonly open: boolean
  stop(): void
}

export interface BreakerOptions {
  probe: (timeoutMs: number) => Promise<unknown>
  logger: Pick<Logger, 'warn' | 'info'>
  intervalMs?: number
  probeTimeoutMs?: number
  /** The breaker opened (why): fail what waits on the database now. */
  onOpen?: (why: string) => void
  /** The breaker closed: the database may be used again. */
  onClose?: () => void
}

export function createDatabaseBreaker({
  probe,
  logger,
  intervalMs = 250,
  probeTimeoutMs = 500,
  onOpen,
  onClose,
}: BreakerOptions): DatabaseBreaker {
  let open = false
  let stopped = false
  let timer: NodeJS.Timeout | undefined

  const setOpen = (next: boolean, why: string) => {
    if (next === open) return
    open = next
    if (open) {
      logger.warn({ why }, 'database unreachable: answering 503 until a probe succeeds')
      onOpen?.(why)
    } else {
      onClose?.()
      logger.info({ why }, 'database reachable again')
    }
  }

  async function check() {
    let timeout: NodeJS.Timeout | undefined
    try {
      await Promise.race([
        probe(probeTimeoutMs),
        new Promise((_, reject) => {
          timeout = setTimeout(() => reject(new Error(`no answer within ${probeTimeoutMs} ms`)), probeTimeoutMs)
        }),
      ])
      if (!stopped) setOpen(false, 'probe answered')
    } catch (error) {
      if (!stopped) setOpen(true, `probe failed: ${(error as Error).message}`)
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
