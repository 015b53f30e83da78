import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { loadEnvOrExit } from './env.js'
import { createLogger } from './logger.js'
import { applyMigrations } from './db/migrate.js'
import { databaseTimeouts, openDatabase } from './db/client.js'
import { createApp } from './app.js'
import { createDeps } from './deps.js'
import { startWorker } from './worker.js'
import { createDrain, createListener, serverOptions } from './http-listener.js'
import { createMetrics } from './metrics/create-metrics.js'
import { describeListenError, describeStartupError } from './startup-errors.js'

const env = loadEnvOrExit()
const logger = createLogger(env.LOG_LEVEL)

const metrics = createMetrics()

/** Problems an operator can fix get one line naming the fix; anything else keeps its stack. */
function exitAtStart(error: unknown, line: string | null): never {
  console.error(line ?? error)
  process.exit(1)
}

const database = await (async () => {
  const applied = await applyMigrations(env.DATABASE_URL)
  if (applied.length) logger.info({ applied }, 'migrations applied')
  return openDatabase(env.DATABASE_URL, { timeouts: databaseTimeouts(env), onQueryEvent: metrics.observeQuery })
})().catch((error: unknown) => exitAtStart(error, describeStartupError(error, env.DATABASE_URL)))
const deps = createDeps(database, env, { logger })
// Readiness fails as soon as the drain starts, so the load balancer stops sending new work.
const ready = () => (drain.draining ? Promise.resolve(false) : database.ready())
const app = createApp({ deps, ready, metrics })

const worker = env.WORKER_ENABLED ? startWorker(deps) : null
const server = createServer(serverOptions(env), createListener(app, deps))
server.maxConnections = env.HTTP_MAX_CONNECTIONS
const drain = createDrain(server)
server.once('error', (error) => exitAtStart(error, describeListenError(error, env.HOST, env.PORT)))
server.listen(env.PORT, env.HOST, () => {
  const { port } = server.address() as AddressInfo
  logger.info({ url: `http://${env.HOST}:${port}`, graphql: '/graphql', database: database.kind, worker: env.WORKER_ENABLED }, 'listening')
})

let stopping = false
async function shutdown(signal: string) {
  if (stopping) return
  stopping = true
  logger.info({ signal, graceMs: env.SHUTDOWN_GRACE_MS }, 'shutting down')
  worker?.stop()
  // Subscription streams never end by themselves: end them now, clients reconnect elsewhere.
  app.closeStreams()
  let code = 0
  try {
    await drain.drain(env.SHUTDOWN_GRACE_MS)
  } catch (error) {
    logger.warn({ err: error }, 'shutdown grace exceeded; open connections were cut')
    code = 1
  }
  // The worker's current tick may still be writing; the pool's close waits for its queries.
  await Promise.race([database.close(), new Promise((resolve) => setTimeout(resolve, 2000).unref())])
  logger.info({ code }, 'stopped')
  logger.flush(() => process.exit(code))
}
process.on('SIGINT', () => void shutdown('SIGINT'))
process.on('SIGTERM', () => void shutdown('SIGTERM'))
