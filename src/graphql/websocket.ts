// GraphQL over WebSocket on /graphql (the graphql-ws library, `graphql-transport-ws` subprotocol),
// next to Server-Sent Events: the same schema, envelop plugins (document limits, metrics, tracing)
// and context as HTTP, the same per-key and per-address subscription caps, and the same event bus
// (so events cross instances on PostgreSQL). docs/graphql.md describes the protocol as served.
import { createHash, randomUUID } from 'node:crypto'
import type { IncomingMessage, Server } from 'node:http'
import { getOperationAST, GraphQLError, type ExecutionArgs } from 'graphql'
import { WebSocketServer, type WebSocket } from 'ws'
import { useServer } from 'graphql-ws/use/ws'
import type { YogaServerInstance } from 'graphql-yoga'
import type { Logger } from 'pino'
import type { Admission } from '../live/live-streams.js'
import type { ClientAddress } from '../door/client-address.js'
import type { Credentials } from '../door/credentials.js'
import type { Spent } from '../door/budget.js'

export interface WebSocketDeps {
  yoga: YogaServerInstance<Record<string, unknown>, Record<string, unknown>>
  logger: Logger
  /** The largest message accepted (BODY_LIMIT_BYTES); a bigger one closes the socket (1009). */
  maxPayload: number
  /** Ping every this many ms; a socket that has not answered the previous ping is cut. */
  keepAliveMs: number
  /** The client-address stage, as the HTTP door runs it (TRUST_PROXY, IPv6 per /64). */
  clientAddress(request: IncomingMessage): ClientAddress
  /**
   * The credentials stage: a Bearer key's (`authorization`), or a console session's (the cookie,
   * an Origin of the service's own, and the session's CSRF token from connection_init). Rejects
   * on a database fault.
   */
  credentials(request: IncomingMessage, authorization: string | null, csrfToken: string | null): Promise<Credentials>
  /** The credentials stage again, before each operation: the key or session may have ended since. */
  recheck(credentials: Credentials): Promise<Credentials>
  /** The budget stage: each operation (subscribe included) spends what an HTTP request spends. */
  spend(credentials: Credentials, address: ClientAddress): Spent
  /** The document of a subscribe payload (persisted documents, trusted-only mode); throws the protocol's errors. */
  resolveDocument(params: { query?: unknown; extensions?: unknown }): unknown
  /** The subscription caps shared with Server-Sent Events. */
  admit(key: string | null, address: string | null): Admission
  /** Calls `onEnd` when the credential ends, on any instance; the returned function stops watching. */
  hold(credentials: Credentials, onEnd: () => void): () => void
  /** WEBSOCKET_INIT_TIMEOUT_MS: a socket that has not sent connection_init by then is closed (4408). */
  initTimeoutMs: number
  /** WEBSOCKET_IDLE_TIMEOUT_MS: a socket with no operation running for this long is closed (1000). */
  idleMs: number
}

/** The close code for a socket whose credential was refused, or has ended (revoked, signed out, expired). */
export const CREDENTIAL_ENDED = 4403

/** What connection_init established: who the socket is, checked again before each operation. */
interface Connection {
  credentials: Credentials
  /** Counted against the caps: the Bearer key's digest, or the session. */
  capKey: string | null
  address: ClientAddress
  admissions: Map<string, () => void>
  /** Set when the credential ended: operations still arriving are refused without a lookup. */
  ended: boolean
  unhold: () => void
}

const connections = new WeakMap<object, Connection>()

const unauthenticated = () => new GraphQLError('The credential of this connection has ended', { extensions: { code: 'UNAUTHENTICATED' } })

export function attachGraphqlWebSocket(server: Server, deps: WebSocketDeps) {
  // Upgrades are taken here rather than by `new WebSocketServer({ server })`, which would re-emit
  // the HTTP server's errors (a port in use) as its own, and graphql-ws would log them.
  const wss = new WebSocketServer({ noServer: true, maxPayload: deps.maxPayload })
  server.on('upgrade', (request, socket, head) => {
    if (new URL(request.url ?? '/', 'http://upgrade').pathname !== '/graphql') {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n')
      return
    }
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request))
  })
  const alive = new WeakSet<WebSocket>()
  wss.on('connection', (socket) => {
    alive.add(socket)
    socket.on('pong', () => alive.add(socket))
  })
  const heartbeat = setInterval(() => {
    for (const socket of wss.clients) {
      if (!alive.has(socket)) {
        socket.terminate()
        continue
      }
      alive.delete(socket)
      socket.ping()
    }
  }, deps.keepAliveMs)
  heartbeat.unref()

  // A socket holds one of its address's connections (src/process/connection-share.ts): one that
  // runs nothing, never having subscribed or with every operation ended, gives it back after idleMs.
  const lastStarted = new WeakMap<WebSocket, number>()
  const running = new WeakMap<WebSocket, { subscriptions: Record<string, unknown> }>()
  wss.on('connection', (socket) => lastStarted.set(socket, Date.now()))
  const idleSweep = setInterval(
    () => {
      const now = Date.now()
      for (const socket of wss.clients) {
        if (Object.keys(running.get(socket)?.subscriptions ?? {}).length > 0) lastStarted.set(socket, now)
        else if (now - (lastStarted.get(socket) ?? now) >= deps.idleMs) socket.close(1000, 'idle: no operation running')
      }
    },
    Math.max(50, Math.min(1000, Math.floor(deps.idleMs / 4))),
  )
  idleSweep.unref()

  useServer(
    {
      connectionInitWaitTimeout: deps.initTimeoutMs,
      execute: (args) => (args.rootValue as { execute: (a: ExecutionArgs) => unknown }).execute(args) as never,
      subscribe: (args) => (args.rootValue as { subscribe: (a: ExecutionArgs) => unknown }).subscribe(args) as never,
      /** connection_init: `{ authorization: "Bearer <key>" }`, or the console's `{ csrfToken }` with its session cookie; nothing for public data. */
      async onConnect(ctx) {
        const payload = ctx.connectionParams ?? {}
        const authorization = typeof payload.authorization === 'string' ? payload.authorization : null
        const csrfToken = typeof payload.csrfToken === 'string' ? payload.csrfToken : null
        const address = deps.clientAddress(ctx.extra.request)
        let credentials: Credentials
        try {
          credentials = await deps.credentials(ctx.extra.request, authorization, csrfToken)
        } catch (error) {
          deps.logger.warn({ err: error }, 'websocket connection refused: authentication failed')
          return false
        }
        // An unknown or revoked key, a malformed header, or a session that is not one: refused outright (4403).
        if (authorization !== null && (!credentials.token || !credentials.account)) return false
        if (csrfToken !== null && authorization === null && !credentials.session) return false
        const connection: Connection = {
          credentials,
          capKey: credentials.session
            ? `session:${credentials.session.id}`
            : credentials.token
              ? createHash('sha256').update(credentials.token).digest('base64')
              : null,
          address,
          admissions: new Map(),
          ended: false,
          unhold: () => {},
        }
        const socket = ctx.extra.socket
        connection.unhold = deps.hold(credentials, () => {
          connection.ended = true
          socket.close(CREDENTIAL_ENDED, 'Forbidden: the credential has ended')
        })
        connections.set(ctx, connection)
        running.set(ctx.extra.socket, ctx)
        return true
      },
      async onSubscribe(ctx, id, payload) {
        lastStarted.set(ctx.extra.socket, Date.now())
        const connection = connections.get(ctx)!
        // The same locks as an HTTP request, per operation: credentials, then budget.
        if (connection.ended) return [unauthenticated()]
        if (connection.credentials.token || connection.credentials.session) {
          try {
            connection.credentials = await deps.recheck(connection.credentials)
          } catch {
            return [new GraphQLError('The database is unavailable; try again shortly', { extensions: { code: 'SERVICE_UNAVAILABLE' } })]
          }
          if (!connection.credentials.account) {
            // A database fault during the key's check is not the key's end.
            const fault = await connection.credentials.verified?.then(
              () => false,
              () => true,
            )
            if (fault)
              return [new GraphQLError('The database is unavailable; try again shortly', { extensions: { code: 'SERVICE_UNAVAILABLE' } })]
            return [unauthenticated()]
          }
        }
        const spent = deps.spend(connection.credentials, connection.address)
        if (spent.wait > 0)
          return [new GraphQLError(spent.message, { extensions: { code: 'RATE_LIMITED', retryAfterSeconds: spent.wait } })]
        const { token, verified, session } = connection.credentials
        const request = new Request('http://websocket/graphql', {
          method: 'POST',
          headers: token ? { authorization: `Bearer ${token}` } : {},
        })
        const { schema, execute, subscribe, contextFactory, parse, validate } = deps.yoga.getEnveloped({
          request,
          requestId: randomUUID(),
          verified,
          consoleSessionId: session?.id ?? null,
          address: connection.address.address,
          params: payload,
        })
        let document
        try {
          const resolved = deps.resolveDocument(payload)
          document = parse(typeof resolved === 'string' ? resolved : payload.query)
        } catch (error) {
          return [error instanceof GraphQLError ? error : new GraphQLError(String((error as Error).message))]
        }
        const errors = validate(schema, document)
        if (errors.length) return errors
        if (getOperationAST(document, payload.operationName)?.operation === 'subscription') {
          const admission = deps.admit(connection.capKey, connection.address.address)
          if (!admission.ok) return [new GraphQLError(admission.message, { extensions: { code: admission.code } })]
          connection.admissions.set(id, admission.release)
        }
        return {
          schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe },
        }
      },
      onComplete(ctx, id) {
        const connection = connections.get(ctx)
        connection?.admissions.get(id)?.()
        connection?.admissions.delete(id)
      },
      onClose(ctx) {
        const connection = connections.get(ctx)
        if (!connection) return
        connection.unhold()
        for (const release of connection.admissions.values()) release()
        connection.admissions.clear()
      },
    },
    wss,
  )

  return {
    /** Closes every socket with `code` (1001 going away on shutdown) and stops accepting new ones. */
    close(code = 1001, reason = 'server shutting down') {
      clearInterval(heartbeat)
      clearInterval(idleSweep)
      for (const socket of wss.clients) socket.close(code, reason)
      wss.close()
    },
    get size() {
      return wss.clients.size
    },
  }
}
