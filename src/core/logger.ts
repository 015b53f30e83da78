import pino, { type Logger } from 'pino'

/** Loggers made here: their format is known, so the access line of a replay can be written directly. */
const ownLoggers = new WeakSet<Logger>()

export function createLogger(level: string) {
  const logger = pino(
    {
      level,
      base: undefined,
      // Never log credentials, whatever a caller passes.
      redact: { paths: ['authorization', 'headers.authorization', 'req.headers.authorization', 'apiKey', 'secret'], censor: '[redacted]' },
    },
    linesPerTurn(pino.destination({ dest: 1, sync: true })),
  )
  ownLoggers.add(logger)
  return logger
}

/** What linesPerTurn needs of a destination (pino's SonicBoom). */
interface LineSink {
  write(chunk: string): boolean
  flush(cb?: (err?: Error) => void): void
  flushSync(): void
}

/** At most this many bytes per write: a pipe takes a write of up to PIPE_BUF (4,096 on Linux) whole. */
const ATOMIC_WRITE_BYTES = 4096

/** Batches holding lines not yet written, for the exit hook; a batch leaves the set when written. */
const unwritten = new Set<() => void>()
let exitHooked = false

/**
 * stdout in one write per event-loop turn. The lines logged during a turn are joined and written
 * synchronously in its check phase (setImmediate), before the next turn's I/O. Under load one turn
 * answers several requests: a write each, through an asynchronous destination (libuv's thread
 * pool), cost 4 of a cached answer's 19 µs (bench/now-playing.ts, docs/performance.md). Node writes
 * stdout to a pipe or file synchronously on Linux too (console.log does): a log reader that stops
 * reading holds the service up instead of letting its buffer grow without bound. A write is at
 * most ATOMIC_WRITE_BYTES and ends at a line's end, so a worker's lines never split another's in
 * a shared pipe. flush, flushSync and the process's exit write pending lines first.
 */
export function linesPerTurn<T extends LineSink>(destination: T): T {
  const write = destination.write.bind(destination)
  const flush = destination.flush.bind(destination)
  const flushSync = destination.flushSync.bind(destination)
  let pending = ''
  let pendingBytes = 0
  let scheduled = false
  const writeOut = () => {
    if (pendingBytes === 0) return
    const chunk = pending
    pending = ''
    pendingBytes = 0
    write(chunk)
  }
  const endTurn = () => {
    scheduled = false
    unwritten.delete(endTurn)
    writeOut()
  }
  destination.write = (line: string) => {
    const bytes = Buffer.byteLength(line)
    if (pendingBytes + bytes > ATOMIC_WRITE_BYTES) writeOut()
    pending += line
    pendingBytes += bytes
    if (!scheduled) {
      scheduled = true
      unwritten.add(endTurn)
      setImmediate(endTurn)
      if (!exitHooked) {
        exitHooked = true
        process.on('exit', () => {
          for (const turn of unwritten) turn()
        })
      }
    }
    return true
  }
  destination.flush = (cb?: (err?: Error) => void) => {
    endTurn()
    flush(cb)
  }
  destination.flushSync = () => {
    endTurn()
    flushSync()
  }
  return destination
}

export type ReplayLog = (requestId: string, method: string, path: string, status: number, ms: number) => void

/**
 * The access line of a microcache replay (src/process/http-listener.ts): `{ requestId, method, path,
 * status, ms, cached: true }` at info, 'request'. For a logger made by createLogger it is written
 * to the same destination in pino's exact format, without pino's generic serialisation (a fifth
 * of a replay's CPU, bench/now-playing.ts); the level is read once. requestId holds only
 * [\w.:-] and the method is a token node's parser accepted, so neither needs escaping.
 */
export function replayLog(logger: Logger): ReplayLog {
  if (!logger.isLevelEnabled('info')) return () => {}
  if (!ownLoggers.has(logger)) {
    return (requestId, method, path, status, ms) => logger.info({ requestId, method, path, status, ms, cached: true }, 'request')
  }
  const stream = (logger as unknown as Record<symbol, { write(line: string): void }>)[pino.symbols.streamSym]!
  return (requestId, method, path, status, ms) =>
    stream.write(
      `{"level":30,"time":${Date.now()},"requestId":"${requestId}","method":"${method}","path":${JSON.stringify(path)},"status":${status},"ms":${ms},"cached":true,"msg":"request"}\n`,
    )
}
