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
    // Asynchronous writes: a request never waits for stdout. Flushed on shutdown (src/process/server.ts).
    pino.destination({ dest: 1, sync: false }),
  )
  ownLoggers.add(logger)
  return logger
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
