import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import type { Logger } from 'pino'
import type { Db } from '../db/client.js'
import { AppError } from '../core/errors.js'
import { RESYNC, type EventBus } from './event-bus.js'
import { decodeEnvelope, encodeEnvelope } from './event-envelope.js'
import { createLocalDelivery } from './local-delivery.js'
import { reconnectDelayMs } from './reconnect-delay.js'

/**
 * pg, imported when the bus first connects: a SQLite start never parses it (docs/operations.md,
 * "Start-up"). Imported, not required: in the bundle of dist/ an import of pg is the bundle's own
 * copy, the one the database's pool uses, where a require would load node_modules/pg a second time.
 */
const loadPg = () => import('pg').then((module) => module.default)

export interface PostgresBusOptions {
  connectionString: string
  channel: string
  /** Publishes with pg_notify through the pool of the application's client. */
  db: Db
  logger: Logger
  /** Gives up on a connection attempt after this long (then retries with backoff). */
  connectTimeoutMs?: number
  /** How often the listening connection is checked; a check unanswered within it counts as a drop. */
  heartbeatMs?: number
}

export interface PostgresBus extends EventBus {
  /** The backend pid of the listening connection (null while disconnected), for operators and tests. */
  listenerPid(): number | null
}

/**
 * One dedicated connection per process LISTENs on the schema's channel; topics travel inside the
 * payload. The connection opens with the first subscriber (or ready()), so a process that only
 * publishes (the CLI) holds no extra connection. When it drops, it is reopened with backoff and
 * RESYNC is raised locally once it listens again: events sent in between are lost.
 */
export function createPostgresBus(options: PostgresBusOptions): PostgresBus {
  const { connectionString, channel, db, logger, connectTimeoutMs = 5000, heartbeatMs = 5000 } = options
  const local = createLocalDelivery(logger)
  const origin = randomUUID()
  let client: pg.Client | null = null
  let live = false
  let started = false
  let closed = false
  let everLive = false
  let failures = 0
  let retryTimer: NodeJS.Timeout | null = null
  let waiters: (() => void)[] = []
  let heartbeat: NodeJS.Timeout | null = null

  // A silently dead network path (no FIN, no RST) would leave us deaf without an error: a query
  // on the listening connection that does not come back within heartbeatMs counts as a drop.
  function checkAlive() {
    const current = client
    if (!current || !live) return
    const timer = setTimeout(() => lost(current, new Error(`event bus heartbeat unanswered for ${heartbeatMs} ms`)), heartbeatMs)
    current.query('SELECT 1').then(
      () => clearTimeout(timer),
      (error) => {
        clearTimeout(timer)
        lost(current, error as Error)
      },
    )
  }

  function receive(message: pg.Notification) {
    if (message.channel !== channel || message.payload === undefined) return
    const envelope = decodeEnvelope(message.payload)
    // Our own events were delivered locally when published.
    if (!envelope || envelope.origin === origin || envelope.topic === RESYNC) return
    local.deliver(envelope.topic, envelope.payload)
  }

  function lost(which: pg.Client, error?: Error) {
    if (which !== client) return
    client = null
    live = false
    which.removeAllListeners('notification')
    which.end().catch(() => undefined)
    if (closed) return
    const delay = reconnectDelayMs(failures++)
    logger.warn(
      { err: error, retryInMs: delay },
      'event bus connection lost; events from other instances are not received until it is back',
    )
    retryTimer = setTimeout(connect, delay)
    retryTimer.unref()
  }

  async function connect() {
    retryTimer = null
    if (closed) return
    const { Client } = await loadPg()
    if (closed) return
    const next = new Client({
      connectionString,
      application_name: 'gateway-event-bus',
      connectionTimeoutMillis: connectTimeoutMs,
      keepAlive: true,
    })
    client = next
    next.on('notification', receive)
    next.on('error', (error) => lost(next, error))
    next.on('end', () => lost(next))
    try {
      await next.connect()
      await next.query(`LISTEN "${channel}"`)
    } catch (error) {
      lost(next, error as Error)
      return
    }
    if (client !== next) return
    if (closed) {
      await next.end().catch(() => undefined)
      return
    }
    live = true
    failures = 0
    heartbeat ??= setInterval(checkAlive, heartbeatMs)
    heartbeat.unref()
    const resumed = everLive
    everLive = true
    if (resumed) {
      logger.info('event bus listening again; caches resync')
      local.deliver(RESYNC, { reason: 'reconnected' })
    }
    for (const resolve of waiters.splice(0)) resolve()
  }

  function start() {
    if (started || closed) return
    started = true
    void connect()
  }

  const publish = async (topic: string, payload: unknown) => {
    if (topic === RESYNC) throw new AppError('VALIDATION_FAILED', `"${RESYNC}" is raised by the bus itself`)
    if (closed) throw new Error('event bus closed')
    const text = encodeEnvelope({ origin, topic, payload })
    local.deliver(topic, decodeEnvelope(text)!.payload)
    await db.$executeRaw`SELECT pg_notify(${channel}, ${text})`
  }

  return {
    kind: 'postgresql',
    publish,
    notification(topic, payload) {
      if (topic === RESYNC) throw new AppError('VALIDATION_FAILED', `"${RESYNC}" is raised by the bus itself`)
      if (closed) throw new Error('event bus closed')
      const text = encodeEnvelope({ origin, topic, payload })
      return { channel, text, deliverLocally: () => local.deliver(topic, decodeEnvelope(text)!.payload) }
    },
    subscribe(topic, listener) {
      const unsubscribe = local.subscribe(topic, listener)
      start()
      return unsubscribe
    },
    isLive: () => live,
    ready() {
      start()
      if (live) return Promise.resolve()
      if (closed) return Promise.reject(new Error('event bus closed'))
      return new Promise<void>((resolve) => waiters.push(resolve))
    },
    eventTarget: local.eventTarget(publish),
    listenerPid: () => (live ? ((client as unknown as { processID: number | null })?.processID ?? null) : null),
    async close() {
      if (closed) return
      closed = true
      live = false
      if (retryTimer) clearTimeout(retryTimer)
      if (heartbeat) clearInterval(heartbeat)
      const last = client
      client = null
      waiters = []
      await last?.end().catch(() => undefined)
    },
  }
}
