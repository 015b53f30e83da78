import pino from 'pino'

export function createLogger(level: string) {
  return pino({
    level,
    base: undefined,
    // Never log credentials, whatever a caller passes.
    redact: { paths: ['*.authorization', '*.headers.authorization', 'apiKey', '*.apiKey', 'secret', '*.secret'], censor: '[redacted]' },
  })
}
