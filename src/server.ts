import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { loadEnvOrExit } from './env.js'
import { createLogger } from './logger.js'
import { applyMigrations } from './db/migrate.js'
import { openDatabase } from './db/client.js'
import { createApp } from './app.js'
import { createDeps } from './deps.js'
import { startWorker } from './worker.js'
import { createListener } from './http-listener.js'
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
  return openDatabase(env.DATABASE_URL, { onQueryEvent: metrics.observeQuery })
})().catch((error: unknown) => exitAtStart(error, describeStartupError(error, env.DATABASE_URL)))
const deps = createDeps(database, env, { logger })
const app = createApp({ deps, ready: database.ready, metrics })

const worker = env.WORKER_ENABLED ? startWorker(deps) : null
const server = createServer(createListener(app, deps))
server.once('error', (error) => exitAtStart(error, describeListenError(error, env.HOST, env.PORT)))
server.listen(env.PORT, env.HOST, () => {
  const { port } = server.address() as AddressInfo
  logger.info({ url: `http://${env.HOST}:${port}`, graphql: '/graphql', database: database.kind, worker: env.WORKER_ENABLED }, 'listening')
})

let stopping = false
async function shutdown(signal: string) {
  if (stopping) return
  stopping = true
  logger.info({ signal }, 'shutting down')
  worker?.stop()
  server.close()
  server.closeIdleConnections()
  const force = setTimeout(() => process.exit(1), 10_000)
  force.unref()
  await new Promise<void>((resolve) => server.once('close', () => resolve()))
  await database.close()
  logger.flush()
  process.exit(0)
}
process.on('SIGINT', () => void shutdown('SIGINT'))
process.on('SIGTERM', () => void shutdown('SIGTERM'))
