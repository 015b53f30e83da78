import cluster from 'node:cluster'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Logger } from 'pino'
import type { Env } from '../core/env.js'
import { databaseTimeouts, openDatabase } from '../db/client.js'
import { createApp } from '../app.js'
import { createDeps } from '../deps.js'
import { startWorker } from './worker.js'
import { createDatabaseBreaker } from '../db/breaker.js'
import { createDrain, createListener, serverOptions } from './http-listener.js'
import { connectionsPerAddress, shareConnections } from './connection-share.js'
import { createMetrics } from '../metrics/create-metrics.js'
import { describeListenError, describeStartupError } from './startup-errors.js'
import { RUN_WORKER_LOOP } from './cluster.js'
import { largeBodyCollection } from './large-body-collection.js'
import type { Tracing } from '../core/tracing.js'
import { listeningBaseUrl, recordPublicBaseUrl } from '../db/public-base-url.js'
import type { Plugin } from 'graphql-yoga'

/**
 * One HTTP process: the whole service when WEB_CONCURRENCY is 1, or one worker of the cluster
 * (src/process/cluster.ts). Migrations have run already (src/process/server.ts). In a cluster the cron loop starts
 * only when the primary says so, in one worker; responses carry `X-Worker: <cluster worker id>`.
 */
export async function serveHttp(
  env: Env,
  logger: Logger,
  exitAtStart: (error: unknown, line: string | null) => never,
  tracing: Tracing | null = null,
) {
  const metrics = createMetrics()
  const database = await openDatabase(env.DATABASE_URL, {
    timeouts: databaseTimeouts(env),
    sqliteCacheMib: env.SQLITE_CACHE_MIB,
    onQueryEvent: metrics.observeQuery,
  }).catch((error: unknown) => exitAtStart(error, describeStartupError(error, env.DATABASE_URL)))
  // SMS_GATEWAY=smpp: this instance's own bind, started once the deps it reports through exist.
  // Loaded only then: the sandbox start does not parse the smpp package.
  const smppGateway =
    env.SMS_GATEWAY === 'smpp'
      ? await import('../sms/smpp/smpp-gateway.js').then(({ createSmppGateway, smppOptionsFromEnv }) =>
          createSmppGateway(smppOptionsFromEnv(env, logger)),
        )
      : undefined
  const deps = createDeps(database, env, { logger, gateway: smppGateway })
  smppGateway?.start(deps)
  // Readiness fails as soon as the drain starts, so the load balancer stops sending new work.
  const ready = () => (drain.draining ? Promise.resolve(false) : database.ready())
  const breaker = createDatabaseBreaker({
    probe: database.probe,
    logger,
    intervalMs: env.DB_PROBE_INTERVAL_MS,
    probeTimeoutMs: env.DB_PROBE_TIMEOUT_MS,
    // Requests already waiting on a frozen database answer 503 now, not at their statement timeout.
    onOpen: (why) => database.interrupt(why),
    onClose: () => database.resume(),
  })
  let app: ReturnType<typeof createApp>
  try {
    app = createApp({ deps, ready, metrics, breaker, plugins: tracing ? [tracing.graphqlPlugin as Plugin] : [] })
  } catch (error) {
    // A configuration the app refuses (a trusted documents manifest that does not verify): one line.
    exitAtStart(error, (error as Error).message)
  }

  const workerId = cluster.isWorker ? String(cluster.worker!.id) : undefined
  let worker: ReturnType<typeof startWorker> | null = null
  let stopping = false
  function runWorkerLoop() {
    worker = startWorker(deps)
    logger.info({ pid: process.pid, worker: workerId }, 'worker loop started')
  }
  if (!cluster.isWorker) {
    if (env.WORKER_ENABLED) runWorkerLoop()
  } else {
    process.on('message', (message) => {
      if (message === RUN_WORKER_LOOP && !worker && !stopping) runWorkerLoop()
    })
  }

  const server = createServer(serverOptions(env))
  server.maxConnections = env.HTTP_MAX_CONNECTIONS
  if (!env.TRUST_PROXY) shareConnections(server, connectionsPerAddress(env), logger)
  const drain = createDrain(server)
  // On SQLite, a full collection after each answer to a large body (src/process/large-body-collection.ts).
  const afterLargeBody = deps.dbKind === 'sqlite' ? largeBodyCollection() : undefined
  server.on('request', createListener(app, deps, metrics, { workerId, drain, afterLargeBody }))
  // GraphQL over WebSocket shares the port: upgrades of /graphql (src/graphql/websocket.ts).
  const sockets = app.attachWebSocket(server)
  server.once('error', (error) => exitAtStart(error, describeListenError(error, env.HOST, env.PORT)))
  server.listen(env.PORT, env.HOST, async () => {
    const { port } = server.address() as AddressInfo
    // Before "listening": the CLI's console:link reads it to print links this server answers. In a
    // cluster every worker answers at the same URL, so the first worker alone records it: with
    // each worker writing the row at start-up on PostgreSQL, the second answered no request in
    // test/cluster.test.ts (cause not found; recording once is all the CLI needs).
    if (!cluster.isWorker || cluster.worker!.id === 1)
      await recordPublicBaseUrl(deps.db, listeningBaseUrl(env, port)).catch((error: unknown) =>
        logger.warn({ err: error }, 'the public URL could not be recorded; console:link may print another port'),
      )
    logger.info(
      {
        url: `http://${env.HOST}:${port}`,
        graphql: '/graphql',
        database: database.kind,
        worker: cluster.isWorker ? workerId : env.WORKER_ENABLED,
      },
      'listening',
    )
  })

  async function shutdown(signal: string) {
    if (stopping) return
    stopping = true
    logger.info({ signal, graceMs: env.SHUTDOWN_GRACE_MS, worker: workerId }, 'shutting down')
    breaker.stop()
    const workerStopped = worker?.stop()
    // Subscription streams never end by themselves: end them now, clients reconnect elsewhere.
    app.closeStreams()
    // WebSocket clients get 1001 (going away) and reconnect elsewhere; their sockets then leave the drain.
    sockets.close(1001)
    let code = 0
    try {
      await drain.drain(env.SHUTDOWN_GRACE_MS)
    } catch (error) {
      logger.warn({ err: error }, 'shutdown grace exceeded; open connections were cut')
      code = 1
    }
    // Webhook POSTs in flight are recorded (they end within their timeout), else their lease lets
    // another instance send them again; the worker's current tick may still be writing, and the
    // pool's close waits for its queries.
    await Promise.race([workerStopped, new Promise((resolve) => setTimeout(resolve, 2000).unref())])
    // The SMSC hears an unbind rather than a dropped connection (it waits at most a second for the answer).
    await deps.gateway.stop?.()
    await Promise.race([deps.apiKeyCache.idle().then(() => database.close()), new Promise((resolve) => setTimeout(resolve, 2000).unref())])
    // The spans still buffered (the last requests') go out before the process ends.
    if (tracing)
      await Promise.race([tracing.shutdown().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 2000).unref())])
    logger.info({ code, worker: workerId }, 'stopped')
    logger.flush(() => process.exit(code))
  }
  process.on('SIGINT', () => void shutdown('SIGINT'))
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
}
