import './heap-settings.js'
import './next-tick-shape.js'
import './http-shapes.js'
import cluster from 'node:cluster'
import { loadEnvOrExit } from '../core/env.js'
import { createLogger } from '../core/logger.js'
import { applyMigrations } from '../db/migrate.js'
import { describeStartupError } from './startup-errors.js'

const env = loadEnvOrExit()
const logger = createLogger(env.LOG_LEVEL)

/** Problems an operator can fix get one line naming the fix; anything else keeps its stack. */
function exitAtStart(error: unknown, line: string | null): never {
  console.error(line ?? error)
  process.exit(1)
}

const servesHttp = env.WEB_CONCURRENCY === 1 || cluster.isWorker
// Loading the HTTP modules (the app, the schema) overlaps the migration check's wait on the
// database. With tracing on they are loaded after it starts, so that node:http and Prisma are
// instrumented from the first request. A failed load is reported where it is awaited, after the
// migrations' own one line if they fail.
const serveHttpModule = servesHttp && !env.OTEL_EXPORTER_OTLP_ENDPOINT ? import('./serve-http.js') : null
serveHttpModule?.catch(() => {})

// Migrations run once per start: here in a single process, or in the primary before it forks.
if (cluster.isPrimary) {
  const applied = await applyMigrations(env.DATABASE_URL).catch((error: unknown) =>
    exitAtStart(error, describeStartupError(error, env.DATABASE_URL)),
  )
  if (applied.length) logger.info({ applied }, 'migrations applied')
}

if (!servesHttp) {
  // The primary only forks and supervises: no database, no app (src/process/cluster.ts).
  const { runPrimary } = await import('./cluster.js')
  runPrimary({
    workers: env.WEB_CONCURRENCY,
    graceMs: env.SHUTDOWN_GRACE_MS,
    workerLoop: env.WORKER_ENABLED,
    logger,
    exit: (code) => {
      logger.info({ code }, 'stopped')
      logger.flush(() => process.exit(code))
    },
  })
} else {
  // Before the app is built, so that node:http and Prisma are instrumented from the first request.
  const { startTracing } = await import('../core/tracing.js')
  const tracing = await startTracing(env)
  if (tracing) logger.info({ endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT, protocol: env.OTEL_EXPORTER_OTLP_PROTOCOL }, 'tracing on')
  const { serveHttp } = await (serveHttpModule ?? import('./serve-http.js'))
  await serveHttp(env, logger, exitAtStart, tracing)
}
