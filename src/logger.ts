import pino from 'pino'

export function createLogger(level: string) {
  return pino(
    {
      level,
      base: undefined,
      // Never log credentials, whatever a caller passes.
      redact: { paths: ['authorization', 'headers.authorization', 'req.headers.authorization', 'apiKey', 'secret'], censor: '[redacted]' },
    },
    // Asynchronous writes: a request never waits for stdout. Flushed on shutdown (src/server.ts).
    pino.destination({ dest: 1, sync: false }),
  )
}
