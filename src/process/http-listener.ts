import { randomBytes } from 'node:crypto'
// Imported: the global `performance` is a lazy getter node calls on every use (three a replay).
import { performance } from 'node:perf_hooks'
import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http'
import { createServerAdapter } from '@whatwg-node/server'
import type { App } from '../app.js'
import { systemClock } from '../core/clock.js'
import type { Deps } from '../deps.js'
import type { Env } from '../core/env.js'
import type { Metrics } from '../metrics/create-metrics.js'
import { rawHeader } from '../http/microcache.js'
import { replayLog, writeWithin } from '../core/logger.js'

/** A microcache entry the listener replays. */
type Hit = NonNullable<ReturnType<App['microcache']['hit']>>
/** Replays waiting for the turn's end (createListener): request, response, entry, arrival time. */
type Pending = (IncomingMessage | ServerResponse | Hit | number)[]

/** What app.fetch accepts from a client as its request id (src/app.ts). */
const CLIENT_REQUEST_ID = /^[\w.:-]{1,128}$/

/**
 * Request ids for replayed answers, cheaper than randomUUID: a random prefix per process (so
 * workers and restarts do not collide) and a counter, in the UUID's shape the logs already have.
 */
export function requestIdSource() {
  const hex = randomBytes(10).toString('hex')
  const prefix = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-`
  let counter = 0
  // The counter's 12 hex digits: the first 10 change once in 256 ids, the last 2 come from a table.
  let high = ''
  return () => {
    const low = counter % 256
    if (low === 0) high = prefix + (counter / 256).toString(16).padStart(10, '0')
    counter++
    return high + HEX_BYTES[low]
  }
}

/** '00' to 'ff'. */
const HEX_BYTES = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))

/**
 * The node:http listener: microcache hits are answered here, everything else goes to app.fetch.
 * A hit costs a header-list write, the access log line and a counter; nothing else is allocated.
 * The log level is read when the listener is made.
 *
 * The hits of one event-loop turn are written together, in the order they came, in that turn's
 * check phase (setImmediate), after node has read and parsed every request the turn brought. A
 * write to a loopback client that sleeps in epoll wakes it, and the wake-up is charged to the
 * writer: written one at a time between the parses, a response often found the client asleep; in
 * a run, the first wakes the client and the rest find it awake. Under 10 connections a replay
 * took a quarter less system time, as little as the fixed-body server's (docs/performance.md, "A
 * turn's replays written together"). A response waits at most for the turn's other parses; a
 * lone request is answered in the same turn as before.
 */
export function createListener(
  app: App,
  { clock, logger }: Pick<Deps, 'clock' | 'logger'>,
  metrics?: Pick<Metrics, 'observeReplay'>,
  {
    workerId,
    drain,
    afterLargeBody,
  }: {
    workerId?: string
    drain?: Drain
    /** Sees every request app.fetch answers, to collect the heap after large bodies (large-body-collection.ts). */
    afterLargeBody?: (req: IncomingMessage, res: ServerResponse) => void
  } = {},
) {
  const adapter = createServerAdapter(app.fetch)
  // In a cluster every answer names its worker (docs/operations.md "Several workers on one host").
  if (workerId) app.microcache.addHeaders(['X-Worker', workerId])
  const nextId = requestIdSource()
  const log = replayLog(logger)
  const within = writeWithin(logger)
  // The system clock is Date.now(); a test clock is asked (it may be pinned).
  const nowMs = clock === systemClock ? Date.now : () => clock.now().getTime()
  // The turn's hits, four slots each (request, response, entry, arrival time): one flat list,
  // swapped with a spare at each flush and reused, so a hit allocates nothing. A flush is due
  // exactly while the list holds hits: the first hit of a turn schedules it.
  let turn: Pending = []
  let spare: Pending = []
  const writeTurn = () => {
    // A response finished here may let node parse a pipelined request at once: it joins a new turn.
    const pending = turn
    turn = spare
    for (let i = 0; i < pending.length; i += 4) {
      const req = pending[i] as IncomingMessage
      const res = pending[i + 1] as ServerResponse
      const hit = pending[i + 2] as Hit
      const incoming = rawHeader(req, 'x-request-id')
      const requestId = incoming !== undefined && CLIENT_REQUEST_ID.test(incoming) ? incoming : nextId()
      // A replay is written whole here: the drain tracks it only once it has begun, or when its
      // bytes have not all reached the socket (Drain.written).
      if (drain?.draining) drain.track(res)
      app.microcache.replay(hit, req, res, requestId)
      drain?.written(res)
      metrics?.observeReplay()
      // The entry's path: the same string each time, which the access line compares with its last.
      // The time runs from the request's arrival: it includes the wait for the turn's end.
      log(requestId, req.method!, hit.path, res.statusCode, Math.round(performance.now() - (pending[i + 3] as number)))
    }
    pending.length = 0
    spare = pending
  }
  // The access lines are written as the replays end, in this same check phase: the log schedules
  // no turn end of its own for them.
  const flush = () => within(writeTurn)
  return (req: IncomingMessage, res: ServerResponse) => {
    if (app.microcache.enabled) {
      const started = performance.now()
      // Looked up on arrival: the entry of the second the request came in.
      const hit = app.microcache.hit(req, nowMs())
      if (hit) {
        if (turn.length === 0) setImmediate(flush)
        turn.push(req, res, hit, started)
        return
      }
    }
    drain?.track(res)
    afterLargeBody?.(req, res)
    if (workerId) res.setHeader('X-Worker', workerId)
    void adapter(req, res)
  }
}

/** Timeouts and limits of the node:http server (docs/operations.md "Shutdown and timeouts"). */
export function serverOptions(
  env: Pick<Env, 'HTTP_HEADERS_TIMEOUT_MS' | 'HTTP_REQUEST_TIMEOUT_MS' | 'HTTP_KEEP_ALIVE_TIMEOUT_MS'>,
): ServerOptions {
  return {
    // A client that trickles its request head (slowloris) is cut after this.
    headersTimeout: env.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeout: Math.max(env.HTTP_REQUEST_TIMEOUT_MS, env.HTTP_HEADERS_TIMEOUT_MS),
    keepAliveTimeout: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    // Node checks the two timeouts above only this often (default 30 s), so check often enough
    // for the cut to happen close to headersTimeout.
    connectionsCheckingInterval: Math.min(1000, Math.max(100, Math.floor(env.HTTP_HEADERS_TIMEOUT_MS / 4))),
  }
}

/**
 * No request has been running for this long: the drain may close the listener and the idle
 * keep-alive sockets. Requests a client already sent on such a socket arrive well within it.
 */
const DRAIN_QUIET_MS = 500

/** What the request listener tells the drain (createDrain). */
export interface Drain {
  readonly draining: boolean
  /**
   * A response about to be written: the drain waits for its close, and once draining it answers
   * with `Connection: close`. Called before anything of it is written.
   */
  track(res: ServerResponse): void
  /**
   * A response its handler has just written whole without tracking it (a microcache replay): the
   * drain waits for it only if some of its bytes are still queued (a slow reader, or a response
   * pipelined behind another); the rest are in the kernel's hands and need nothing more.
   */
  written(res: ServerResponse): void
  drain(graceMs: number): Promise<void>
}

/**
 * Graceful shutdown of one server. Once `drain()` is called, readiness fails (see `draining`),
 * every response carries `Connection: close`, and requests that arrive, on kept-alive sockets or
 * new ones, are still answered. The listener closes once nothing has run for DRAIN_QUIET_MS; the
 * promise resolves when every socket is gone, or rejects after `graceMs` (sockets are then cut).
 *
 * The request listener reports its responses (track, written): a replay written whole in the
 * listener is not tracked while the drain has not begun, which saves it a 'close' listener and
 * the server a second 'request' listener (docs/performance.md, "Replays the drain leaves alone").
 */
export function createDrain(server: Server): Drain {
  let draining = false
  // The running responses. Not a Set: a Set that a few requests at a time enter and leave
  // reallocates its table as it grows and shrinks, and those tables, held by a long-lived Set,
  // survived into the old generation: most of what a cached answer left there (a sampling heap
  // profile under bench/now-playing.ts load), and the major collections it caused. A response is
  // not marked with its index either: replays are not tracked, and a property on the others would
  // give node's response code two shapes of response to handle.
  const active: ServerResponse[] = []
  let lastActivity = 0
  // One function for every response: no closure per request. Removes by moving the last in. The
  // list holds only the responses running at that moment; it is searched from its end.
  function closed(this: ServerResponse) {
    const index = active.lastIndexOf(this)
    if (index >= 0) {
      const last = active.pop()!
      if (index < active.length) active[index] = last
    }
    lastActivity = performance.now()
  }
  // No time taken here: while it runs, it is in `active`; its close marks the activity.
  function track(res: ServerResponse) {
    active.push(res)
    if (draining) res.shouldKeepAlive = false
    res.on('close', closed)
  }
  return {
    get draining() {
      return draining
    },
    track,
    written(res: ServerResponse) {
      // While draining it was tracked before it was written.
      if (!draining && res.writableLength > 0) track(res)
    },
    drain(graceMs: number): Promise<void> {
      draining = true
      lastActivity = performance.now()
      // Requests already running answer with `Connection: close` too, unless their head is out.
      for (const res of active) if (!res.headersSent) res.shouldKeepAlive = false
      return new Promise<void>((resolve, reject) => {
        const deadline = setTimeout(() => {
          clearInterval(poll)
          server.closeAllConnections()
          reject(new Error(`requests still running after ${graceMs} ms`))
        }, graceMs)
        const poll = setInterval(() => {
          if (active.length > 0 || performance.now() - lastActivity < DRAIN_QUIET_MS) return
          clearInterval(poll)
          // Closes the listener and the idle keep-alive sockets; 'close' follows once all are gone.
          server.close(() => {
            clearTimeout(deadline)
            resolve()
          })
        }, 50)
      })
    },
  }
}
