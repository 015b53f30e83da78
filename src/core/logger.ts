import { writeSync } from 'node:fs'
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
    // Bytes to SonicBoom: given a string, it measures it twice and copies it into a new Buffer after
    // every write (releaseWritingBuf): over a quarter of an access line's cost (docs/performance.md).
    linesPerTurn(pino.destination({ dest: 1, sync: true, contentMode: 'buffer' }) as unknown as LineSink),
  )
  ownLoggers.add(logger)
  return logger
}

/** What linesPerTurn needs of a destination (pino's SonicBoom in buffer mode); it then takes lines as strings. */
interface LineSink {
  write(chunk: Buffer | string): boolean
  flush(cb?: (err?: Error) => void): void
  flushSync(): void
  /** The file descriptor it writes to synchronously, if any (SonicBoom's, once open): linesPerTurn writes there itself. */
  fd?: number
}

/**
 * Where linesPerTurn keeps, on its destination, the function that writes lines in the caller's own
 * end of turn (writeWithin): a symbol, so pino and SonicBoom never see it.
 */
const WITHIN = Symbol('linesWithin')

/** At most this many bytes per write: a pipe takes a write of up to PIPE_BUF (4,096 on Linux) whole. */
const ATOMIC_WRITE_BYTES = 4096

/** Batches holding lines not yet written, for the exit hook; a batch leaves the set when written. */
const unwritten = new Set<() => void>()
let exitHooked = false

/**
 * stdout in one write per event-loop turn. The lines logged during a turn are encoded into one
 * buffer, kept and reused, and written synchronously in the turn's check phase (setImmediate),
 * before the next turn's I/O. Under load one turn answers several requests: a write each, through
 * an asynchronous destination (libuv's thread pool), cost 4 of a cached answer's 19 µs
 * (bench/now-playing.ts, docs/performance.md). Node writes stdout to a pipe or file synchronously
 * on Linux too (console.log does): a log reader that stops reading holds the service up instead of
 * letting its buffer grow without bound. A write is at most ATOMIC_WRITE_BYTES and ends at a line's
 * end, so a worker's lines never split another's in a shared pipe; a longer line is written alone.
 * The destination writes synchronously and keeps nothing it was given, so the buffer is reused;
 * given its file descriptor, the buffer is written there directly (writeOut).
 * flush, flushSync and the process's exit write pending lines first.
 *
 * A caller that runs in the check phase itself (the listener's replays of a turn) wraps its work in
 * writeWithin: the lines it logs then schedule nothing and are written as it returns, one
 * setImmediate a turn fewer.
 */
export function linesPerTurn<T extends LineSink>(destination: T): T {
  const write = destination.write.bind(destination)
  const flush = destination.flush.bind(destination)
  const flushSync = destination.flushSync.bind(destination)
  const pending = Buffer.allocUnsafe(ATOMIC_WRITE_BYTES)
  let used = 0
  let scheduled = false
  // Inside writeWithin: the caller writes the lines as it returns.
  let within = false
  // Written with fs.writeSync on the destination's descriptor: through SonicBoom a write costs as
  // much again as the lines' encoding (two arrays, a view and an object per write, and a nextTick
  // for its 'drain'). What it cannot write at once (EAGAIN: a non-blocking pipe is full) goes to
  // the destination, which waits until it can; after any other error the destination takes every
  // write and reports the error its way.
  let direct = true
  const writeOut = () => {
    if (used === 0) return
    const bytes = used
    used = 0
    const fd = destination.fd
    let done = 0
    if (direct && typeof fd === 'number' && fd >= 0) {
      try {
        while (done < bytes) done += writeSync(fd, pending, done, bytes - done)
        return
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') direct = false
      }
    }
    write(pending.subarray(done, bytes))
  }
  const endTurn = () => {
    scheduled = false
    unwritten.delete(endTurn)
    writeOut()
  }
  destination.write = (line: Buffer | string) => {
    const text = String(line)
    // A UTF-16 unit takes at most 3 bytes: measure only a line that may not fit.
    if (text.length * 3 > ATOMIC_WRITE_BYTES - used) {
      const bytes = Buffer.byteLength(text)
      if (bytes > ATOMIC_WRITE_BYTES - used) writeOut()
      if (bytes > ATOMIC_WRITE_BYTES) return write(Buffer.from(text))
    }
    used += pending.write(text, used)
    if (!scheduled && !within) {
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
  ;(destination as unknown as Record<symbol, Within>)[WITHIN] = (body) => {
    within = true
    try {
      body()
    } finally {
      within = false
      // Lines an earlier write of the turn holds are written with them; its endTurn then finds none.
      endTurn()
    }
  }
  return destination
}

/** Runs `body` and then writes the lines it logged, at once (linesPerTurn). */
export type Within = (body: () => void) => void

/**
 * For a logger made by createLogger, what linesPerTurn's destination offers: the lines logged in
 * `body` are written when it returns instead of at the turn's end. For any other logger, `body`
 * alone (its lines go where that logger sends them).
 */
export function writeWithin(logger: Logger): Within {
  const stream = ownStream(logger)
  return (stream && withinOf(stream)) || ((body) => body())
}

/** The destination of a logger made by createLogger (linesPerTurn's), else undefined. */
function ownStream(logger: Logger): { write(line: string): void } | undefined {
  return ownLoggers.has(logger) ? (logger as unknown as Record<symbol, { write(line: string): void }>)[pino.symbols.streamSym] : undefined
}

/** A destination's writeWithin if linesPerTurn made it, else undefined. */
export function withinOf(destination: object): Within | undefined {
  return (destination as Record<symbol, Within | undefined>)[WITHIN]
}

/** '000' to '999': the last three digits of a time in milliseconds. */
const MILLISECOND_DIGITS = Array.from({ length: 1000 }, (_, ms) => String(ms).padStart(3, '0'))

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
  const stream = ownStream(logger)
  if (!stream) {
    return (requestId, method, path, status, ms) => logger.info({ requestId, method, path, status, ms, cached: true }, 'request')
  }
  // Replays come in runs of the same path, method, status and ms: the line's end after the request
  // id is kept for the last of them, and the time's digits for the last second (its milliseconds
  // from a table), so a line is five pieces, with no number turned into text.
  let lastPath = ''
  let lastMethod = ''
  let lastStatus = 0
  let lastMs = -1
  let tail = ''
  let lastSecond = -1
  let secondDigits = ''
  return (requestId, method, path, status, ms) => {
    if (path !== lastPath || method !== lastMethod || status !== lastStatus || ms !== lastMs) {
      lastPath = path
      lastMethod = method
      lastStatus = status
      lastMs = ms
      tail = `","method":"${method}","path":${JSON.stringify(path)},"status":${status},"ms":${ms},"cached":true,"msg":"request"}\n`
    }
    const now = Date.now()
    const second = Math.floor(now / 1000)
    if (second !== lastSecond) {
      lastSecond = second
      secondDigits = String(second)
    }
    stream.write(`{"level":30,"time":${secondDigits}${MILLISECOND_DIGITS[now - second * 1000]},"requestId":"${requestId}${tail}`)
  }
}
