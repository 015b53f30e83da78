import { randomUUID } from 'node:crypto'
import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http'
import { createServerAdapter } from '@whatwg-node/server'
import type { App } from './app.js'
import type { Deps } from './deps.js'
import type { Env } from './env.js'

/** The node:http listener: microcache hits are answered here, everything else goes to app.fetch. */
export function createListener(app: App, { clock, logger }: Pick<Deps, 'clock' | 'logger'>) {
  const adapter = createServerAdapter(app.fetch)
  return (req: IncomingMessage, res: ServerResponse) => {
    if (app.microcache.enabled) {
      const started = performance.now()
      const requestId = randomUUID()
      if (app.microcache.replay(req, res, clock.now(), requestId)) {
        logger.info({ requestId, method: req.method, path: req.url, status: res.statusCode, ms: Math.round(performance.now() - started), cached: true }, 'request')
        return
      }
    }
    void adapter(req, res)
  }
}

/** Timeouts and limits of the node:http server (docs/operations.md "Shutdown and timeouts"). */
export function serverOptions(env: Pick<Env, 'HTTP_HEADERS_TIMEOUT_MS' | 'HTTP_REQUEST_TIMEOUT_MS' | 'HTTP_KEEP_ALIVE_TIMEOUT_MS'>): ServerOptions {
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

/**
 * Graceful shutdown of one server. Once `drain()` is called, readiness fails (see `draining`),
 * every response carries `Connection: close`, and requests that arrive, on kept-alive sockets or
 * new ones, are still answered. The listener closes once nothing has run for DRAIN_QUIET_MS; the
 * promise resolves when every socket is gone, or rejects after `graceMs` (sockets are then cut).
 */
export function createDrain(server: Server) {
  let draining = false
  const active = new Set<ServerResponse>()
  let lastActivity = 0
  // First listener: the response must know before the handler (or a microcache replay) writes.
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    active.add(res)
    lastActivity = performance.now()
    if (draining) res.shouldKeepAlive = false
    res.once('close', () => {
      active.delete(res)
      lastActivity = performance.now()
    })
  })
  return {
    get draining() {
      return draining
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
          if (active.size > 0 || performance.now() - lastActivity < DRAIN_QUIET_MS) return
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
