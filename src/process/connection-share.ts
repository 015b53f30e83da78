import type { Server } from 'node:http'
import type { Logger } from 'pino'
import { clientKey } from '../http/rate-limit.js'
import type { Env } from '../core/env.js'

/** HTTP_MAX_CONNECTIONS_PER_ADDRESS, or by default an eighth of HTTP_MAX_CONNECTIONS (at least 1). */
export function connectionsPerAddress(env: Pick<Env, 'HTTP_MAX_CONNECTIONS' | 'HTTP_MAX_CONNECTIONS_PER_ADDRESS'>): number {
  return env.HTTP_MAX_CONNECTIONS_PER_ADDRESS ?? Math.max(1, Math.floor(env.HTTP_MAX_CONNECTIONS / 8))
}

/** A refused address is logged at most once in this long. */
const LOG_EVERY_MS = 60_000

/**
 * Each client address (an IPv6 /64, as the rate limits count it) holds at most `perAddress` of
 * the server's sockets, HTTP and WebSocket alike (an upgraded socket stays the one accepted here):
 * one client cannot take all HTTP_MAX_CONNECTIONS and lock everyone else out. A socket over the
 * share is dropped as it is accepted, as node drops one over `maxConnections`: nothing has been
 * read from it, and a written refusal could not be told from an answer to a request it pipelined.
 * Behind a trusted proxy every socket is the proxy's, reused for many clients: the share is not
 * applied there (the caller does not install it), and the proxy limits connections per client.
 */
export function shareConnections(server: Server, perAddress: number, logger: Pick<Logger, 'warn'>) {
  const open = new Map<string, number>()
  const logged = new Map<string, number>()
  server.on('connection', (socket) => {
    const key = socket.remoteAddress === undefined ? null : clientKey(socket.remoteAddress)
    if (key === null) return
    const held = open.get(key) ?? 0
    if (held >= perAddress) {
      socket.destroy()
      const now = Date.now()
      if ((logged.get(key) ?? 0) + LOG_EVERY_MS <= now) {
        if (logged.size > 10_000) logged.clear()
        logged.set(key, now)
        logger.warn({ address: key, perAddress }, 'connection refused: the address holds its share of connections')
      }
      return
    }
    open.set(key, held + 1)
    socket.once('close', () => {
      const left = open.get(key)! - 1
      if (left === 0) open.delete(key)
      else open.set(key, left)
    })
  })
  return {
    /** Sockets an address holds now (tests). */
    held: (key: string) => open.get(key) ?? 0,
  }
}
