import { randomUUID, createHash } from 'node:crypto'
import { createYoga, maskError as defaultMaskError, type Plugin } from 'graphql-yoga'
import { GraphQLError } from 'graphql'
import type { Deps } from './deps.js'
import { AppError, databaseFault, knownAppError } from './core/errors.js'
import { schema } from './graphql/schema.js'
import { createContext } from './graphql/context.js'
import { graphqlLimitsPlugin } from './graphql/limits/graphql-limits-plugin.js'
import { graphqlParamsPlugin, graphqlRefusal, readGraphqlRequest } from './graphql/limits/read-graphql-request.js'
import { createRestRouter, errorResponse, json } from '../rest-compat/router.js'
import { restRoutes } from '../rest-compat/routes.js'
import { clientKey, createRateLimiter } from './http/rate-limit.js'
import { apiKeyPrefix, bearerToken, type AuthenticatedAccount } from './auth/api-keys.js'
import { etagMatches, Microcache } from './http/microcache.js'
import { withIdempotencyKey } from './idempotency/with-idempotency-key.js'
import { createWebRoutes } from './web/web-routes.js'
import { graphiqlOptions, renderBundledGraphiQL } from './web/graphiql.js'
import { createMetrics, type Metrics } from './metrics/create-metrics.js'
import { graphqlMetricsPlugin, operationNamesOf } from './metrics/graphql-plugin.js'
import { metricsEndpoint } from './metrics/metrics-endpoint.js'
import { createLiveStreams } from './live/live-streams.js'
import { TOPIC } from './live/topics.js'
import type { DatabaseBreaker } from './db/breaker.js'
import { RESYNC } from './events/event-bus.js'
import { createCorsPolicy } from './http/cors.js'
import { createConsoleRoutes, isConsolePath } from './console/console-routes.js'
import { attachGraphqlWebSocket } from './graphql/websocket.js'
import { compiledExecutionPlugin } from './graphql/plugins/compiled-execution.js'
import { createDocumentResolver, loadTrustedDocuments, persistedDocumentsPlugin } from './graphql/plugins/persisted-documents.js'
import { CONSOLE_DOCUMENTS } from './console/documents.js'
import type { IncomingMessage, Server } from 'node:http'
import { consoleSessionOf, sessionGate, type ConsoleSession } from './console/sessions.js'
import { documentText } from './graphql/typed-documents.js'
import { AnswerResponse } from './http/answer-response.js'

const CHANNEL_PATH = /^\/api\/(channels|programs)(\/|\.|$)/

/** Load balancers probe with a short timeout of their own; answer well within it. */
const READY_TIMEOUT_MS = 900

export interface AppOptions {
  deps: Deps
  /** Readiness: database reachable and migrations applied. */
  ready: () => Promise<boolean>
  /** The server passes its own, already fed by the Prisma client's query events. */
  metrics?: Metrics
  /** The database's circuit breaker (src/db/breaker.ts): while open, requests get 503 at once. */
  breaker?: Pick<DatabaseBreaker, 'open'>
  /** More envelop plugins for /graphql: the tracing one when traces are on (src/core/tracing.ts). */
  plugins?: Plugin[]
}

/**
 * What @whatwg-node/server hands app.fetch next to the request: on node:http, `{ req, res }`; the
 * node request's socket gives the peer address. Typed loosely so any adapter context fits.
 */
export type ServerContext = unknown

interface GraphqlExtras {
  requestId: string
  verified?: Promise<AuthenticatedAccount | null>
  consoleSessionId?: string | null
  address?: string | null
}

export interface App {
  fetch(request: Request, server?: ServerContext): Promise<Response>
  /** Public answers the HTTP listener may replay without calling fetch (see src/process/http-listener.ts). */
  microcache: Microcache
  /** Ends every open subscription stream (shutdown: the drain would otherwise wait for them). */
  closeStreams(): void
  /** Serves GraphQL over WebSocket (graphql-ws) on the server's /graphql (src/graphql/websocket.ts). */
  attachWebSocket(server: Server): { close(code?: number): void }
}

export function createApp({ deps, ready, metrics = createMetrics(), breaker, plugins = [] }: AppOptions): App {
  const { env, logger } = deps
  const scrapeMetrics = metricsEndpoint(metrics, deps)
  // Persisted documents: the REST routes' and the console's are trusted by construction (docs/graphql.md).
  const resolveDocument = createDocumentResolver(
    loadTrustedDocuments(
      env.GRAPHQL_TRUSTED_DOCUMENTS,
      [...restRoutes.map((r) => documentText(r.document)), ...Object.values(CONSOLE_DOCUMENTS)],
      env.GRAPHQL_TRUSTED_DOCUMENTS_FILE,
    ),
  )
  /**
   * What an HTTP /graphql request carries into Yoga besides itself. Handed to Yoga as a server
   * context, it would be copied property by property, descriptors and all (@whatwg-node/server's
   * isolateObject: about 3% of a GraphQL page's CPU); a request handed over alone costs nothing.
   */
  const graphqlRequests = new WeakMap<Request, GraphqlExtras>()
  const yoga = createYoga<Partial<GraphqlExtras>>({
    schema,
    graphqlEndpoint: '/graphql',
    // GraphiQL answers browsers (Accept: text/html) at GET /graphql, bundled: no CDN (src/web/graphiql.ts).
    graphiql: graphiqlOptions,
    renderGraphiQL: renderBundledGraphiQL,
    logging: false,
    landingPage: false,
    // Yoga's default echoes any Origin with Allow-Credentials; app.fetch applies src/http/cors.ts instead.
    cors: false,
    // The door in front of Yoga bounds every body already (readGraphqlRequest, BODY_LIMIT_BYTES);
    // Yoga's own limit would pipe each body through a TransformStream into another Request.
    maxRequestBodySize: false,
    // HTTP requests bring their request id, key and session through `graphqlRequests` (below);
    // the WebSocket server passes them in the initial context (src/graphql/websocket.ts).
    context: (initial) => {
      const given = initial.requestId === undefined ? graphqlRequests.get(initial.request) : initial
      if (!given?.requestId) throw new Error('a /graphql request reached Yoga without its request id')
      return createContext(deps, initial.request, given.requestId, given.verified, given.consoleSessionId, given.address)
    },
    maskedErrors: {
      maskError(error, message, isDev) {
        const original = error instanceof GraphQLError ? error.originalError : error
        const known = knownAppError(error)
        if (known) {
          const g = error as GraphQLError
          return new GraphQLError(known.message, {
            nodes: g.nodes,
            path: g.path,
            extensions: {
              code: known.code,
              ...(known.details ? { details: known.details } : {}),
              // Yoga answers with the highest http.status of the errors and drops `http` from the body.
              ...(known.code === 'SERVICE_UNAVAILABLE' ? { http: { status: 503, headers: { 'Retry-After': '1' } } } : {}),
            },
          })
        }
        if (original && !(original instanceof GraphQLError)) logger.error({ err: original }, 'unexpected error in GraphQL')
        const masked = defaultMaskError(error, message, isDev)
        if (masked instanceof GraphQLError && masked.message === message) {
          return new GraphQLError(message, { nodes: masked.nodes, path: masked.path, extensions: { code: 'INTERNAL' } })
        }
        return masked
      },
    },
    // Size, tokens, nesting, depth, aliases and list-aware cost: src/graphql/limits/.
    // Malformed parameters are the client's 400, never a masked fault (graphqlParamsPlugin).
    // Operation names become metric labels only when they are the operator's (docs/operations.md "Metrics").
    plugins: [
      persistedDocumentsPlugin(resolveDocument),
      graphqlParamsPlugin(),
      graphqlLimitsPlugin(),
      graphqlMetricsPlugin(metrics, { known: operationNamesOf(restRoutes.map((r) => documentText(r.document))) }),
      ...plugins,
      // Last, so that no other plugin's executor wraps what it sets.
      ...(env.GRAPHQL_COMPILED_EXECUTION ? [compiledExecutionPlugin()] : []),
    ],
  })

  const microcache = new Microcache(env.CHANNEL_CACHE_MS)
  // The program guides are kept for a minute: an operator's change (from any instance, through the
  // event bus) drops them at once. Subscribed on the first channel request, so an app that never
  // serves one (the CLI's, most tests') opens no listening connection for it.
  let watchingChannels = false
  const watchChannels = () => {
    watchingChannels = true
    deps.events.subscribe(TOPIC.channelChanged, () => microcache.dropLongLived())
    deps.events.subscribe(RESYNC, () => microcache.dropLongLived())
  }
  const rest = createRestRouter({
    schema,
    routes: restRoutes,
    prefix: '/api',
    publicBaseUrl: env.PUBLIC_BASE_URL,
    bodyLimitBytes: env.BODY_LIMIT_BYTES,
    logger,
    microcache,
  })
  const web = createWebRoutes(restRoutes)
  const consolePages = createConsoleRoutes(deps)
  const consoleGate = sessionGate(env.PUBLIC_BASE_URL)
  const limiter = createRateLimiter({ perSecond: env.RATE_LIMIT_PER_SECOND, burst: env.RATE_LIMIT_BURST })
  const live = createLiveStreams({
    perKey: env.SUBSCRIPTIONS_PER_KEY,
    perAddress: env.SUBSCRIPTIONS_PER_IP,
    keepAliveMs: env.SUBSCRIPTION_KEEPALIVE_MS,
  })
  const cors = createCorsPolicy({ origins: env.CORS_ORIGINS, publicBaseUrl: env.PUBLIC_BASE_URL })
  const anonymousLimiter = createRateLimiter({ perSecond: env.RATE_LIMIT_ANONYMOUS_PER_SECOND, burst: env.RATE_LIMIT_ANONYMOUS_BURST })

  /** The client's address: the peer of the socket, or behind a trusted proxy the hop it saw last. */
  function addressOf(forwardedFor: string | null | undefined, peer: string | undefined): string | undefined {
    if (env.TRUST_PROXY) {
      const last = forwardedFor?.split(',').at(-1)?.trim()
      if (last) return last
    }
    return peer
  }
  const clientAddress = (request: Request, server?: ServerContext) =>
    addressOf(
      request.headers.get('x-forwarded-for'),
      (server as { req?: { socket?: { remoteAddress?: string } } } | undefined)?.req?.socket?.remoteAddress,
    )

  /**
   * The account of `token` when it is a live API key, else null; malformed tokens need no lookup.
   * The request's context reuses the answer (so the key is looked up once, also with the key cache
   * off). A database fault rejects: it is not the token's fault, and the request answers it (503).
   */
  function verifyKey(token: string): Promise<AuthenticatedAccount | null> {
    if (!apiKeyPrefix(token)) return Promise.resolve(null)
    return deps.apiKeyCache.authenticate(token).catch((error) => {
      if (error instanceof AppError && error.code === 'UNAUTHENTICATED') return null
      throw error
    })
  }

  /**
   * An anonymous GET query's answer, without errors, is public (account fields would have failed):
   * `Cache-Control: public` for the channel answers' lifetime, and an ETag a repeat may send back
   * (If-None-Match: 304). A persisted query by hash makes such URLs short and stable.
   */
  async function cacheablePublicAnswer(request: Request, answer: Response): Promise<Response> {
    if (answer.status !== 200 || !answer.headers.get('content-type')?.includes('json')) return answer
    const text = await answer.text()
    const headers = new Headers(answer.headers)
    if (text.includes('"errors"')) return new AnswerResponse(text, { status: answer.status, headers })
    const etag = `"${createHash('sha1').update(text).digest('base64url')}"`
    headers.set('ETag', etag)
    headers.set('Cache-Control', `public, max-age=${Math.max(1, Math.round(env.CHANNEL_CACHE_MS / 1000))}`)
    if (etagMatches(request.headers.get('if-none-match'), etag)) return new AnswerResponse(null, { status: 304, headers })
    return new AnswerResponse(text, { status: 200, headers })
  }

  function withHeaders(response: Response, headers: Record<string, string> | null): Response {
    if (headers) for (const [name, value] of Object.entries(headers)) response.headers.set(name, value)
    return response
  }

  function unavailable(url: URL, requestId: string): Response {
    const error = new AppError('SERVICE_UNAVAILABLE', 'The database is unavailable; try again shortly')
    if (url.pathname === '/graphql') {
      const refusal = graphqlRefusal(error)
      refusal.headers.set('Retry-After', '1')
      return refusal
    }
    return errorResponse(error, CHANNEL_PATH.test(url.pathname) ? 'channel' : 'messaging', requestId, { 'Retry-After': '1' })
  }

  function rateLimited(message: string, wait: number, url: URL, requestId: string) {
    // The public channel API keeps its own error shape (and CORS), as the REST router does.
    const api = /^\/api\/(channels|programs)(\/|$)/.test(url.pathname) ? 'channel' : 'messaging'
    return errorResponse(new AppError('RATE_LIMITED', message), api, requestId, { 'Retry-After': String(wait) })
  }

  async function route(request: Request, url: URL, requestId: string, server?: ServerContext): Promise<Response> {
    if (url.pathname === '/healthz') return json({ status: 'ok' }, 200)
    if (url.pathname === '/metrics' && env.METRICS_ENABLED) return scrapeMetrics(request, requestId)
    if (url.pathname === '/readyz') {
      // A hung database must not hang the probe: not ready after READY_TIMEOUT_MS.
      const ok = await Promise.race([ready().catch(() => false), new Promise<false>((r) => setTimeout(r, READY_TIMEOUT_MS, false).unref())])
      return json({ status: ok ? 'ready' : 'not ready' }, ok ? 200 : 503)
    }
    const page = web(request, url) // /, /api/openapi.json, /api/docs (src/web/)
    if (page) return page
    if (isConsolePath(url.pathname)) return consolePages(request, url, clientAddress(request, server)) // src/console/
    // The database is known to be unreachable: answer now rather than wait for a statement timeout.
    if (breaker?.open) return unavailable(url, requestId)
    if (url.pathname === '/graphql' && request.method === 'OPTIONS') return cors.preflight(request)
    const token = bearerToken(request.headers.get('authorization'))
    // A real key (and the carrier connector's token) has a budget of its own. Anything else spends its client address's budget: no
    // token, and a token that is not a key (malformed, unknown, revoked), so random tokens cannot
    // each bring a fresh budget. A key not verified lately is verified here (the lookup the request
    // makes anyway; its answer stays in the key cache). In-process callers (tests, tools) pass no
    // server context and have no address: without a key they are not limited.
    const address = clientAddress(request, server)
    const addressKey = address && clientKey(address)
    // The account console's session (its cookie and CSRF token): looked up here, budgeted like a key.
    const sessionCookie =
      !token && url.pathname === '/graphql'
        ? consoleGate.tokenOf({
            cookieHeader: request.headers.get('cookie'),
            csrfToken: request.headers.get('x-csrf-token'),
            origin: request.headers.get('origin'),
            requestOrigins: [url.origin],
            originRequired: false,
            fetchSite: request.headers.get('sec-fetch-site'),
          })
        : null
    let session: ConsoleSession | null = null
    if (sessionCookie) {
      try {
        session = await consoleSessionOf(deps, sessionCookie)
      } catch (error) {
        if (databaseFault(error)) return unavailable(url, requestId)
        throw error
      }
    }
    const verified = session
      ? Promise.resolve(session.account)
      : token && addressKey && token !== env.CARRIER_CONNECTOR_TOKEN
        ? verifyKey(token)
        : undefined
    // A database fault during the check: treat it as a key; the request itself will answer 503.
    const account = verified && (await verified.catch(() => undefined))
    const realKey = token ? (verified ? account !== null : true) : false
    let limitHeaders: Record<string, string> | null = null
    if (session) {
      const bucket = `session:${session.id}`
      const wait = limiter.take(bucket)
      limitHeaders = limiter.headers(bucket, 'key')
      if (wait > 0) return withHeaders(rateLimited('Too many requests for this console session', wait, url, requestId), limitHeaders)
    } else if (!realKey) {
      const wait = addressKey ? anonymousLimiter.take(addressKey) : 0
      limitHeaders = addressKey ? anonymousLimiter.headers(addressKey, 'address') : null
      if (wait > 0) return withHeaders(rateLimited('Too many requests from this address', wait, url, requestId), limitHeaders)
    } else {
      // Keyed on the key's id; on a digest of the token when it was not looked up (the carrier
      // connector's token, or a database fault during the check).
      const bucket = account ? `key:${account.keyId}` : createHash('sha256').update(token!).digest('base64')
      const wait = limiter.take(bucket)
      limitHeaders = limiter.headers(bucket, 'key')
      if (wait > 0) return withHeaders(rateLimited('Too many requests for this API key', wait, url, requestId), limitHeaders)
    }
    return withHeaders(
      await dispatch(request, url, requestId, server, session ? `session:${session.id}` : token, verified, session?.id ?? null),
      limitHeaders,
    )
  }

  async function dispatch(
    request: Request,
    url: URL,
    requestId: string,
    server: ServerContext | undefined,
    /** The Bearer token, or `session:<id>` for a console session: what live streams are counted by. */
    token: string | null,
    verified: Promise<AuthenticatedAccount | null> | undefined,
    consoleSessionId: string | null,
  ): Promise<Response> {
    // Idempotency-Key: replays, refusals and kept answers around both dispatches (src/idempotency).
    return withIdempotencyKey(deps, { request, url, requestId }, { leaseMs: env.WORKER_LEASE_MS }, async (request) => {
      if (url.pathname === '/graphql') {
        let bounded: Request
        try {
          bounded = await readGraphqlRequest(request, url, env.BODY_LIMIT_BYTES)
        } catch (error) {
          if (error instanceof AppError) return graphqlRefusal(error)
          throw error
        }
        graphqlRequests.set(bounded, { requestId, verified, consoleSessionId, address: clientAddress(request, server) ?? null })
        // Subscriptions (Server-Sent Events): counted per key and address while open (docs/live.md).
        if (!request.headers.get('accept')?.includes('text/event-stream')) {
          const answer = await yoga.fetch(bounded)
          // A GET with no credentials can only read public data: shared caches may keep its answer.
          return request.method === 'GET' && !token ? cacheablePublicAnswer(request, answer) : answer
        }
        const keyDigest = token ? createHash('sha256').update(token).digest('base64') : null
        const admission = live.admit(keyDigest, clientAddress(request, server) ?? null)
        if (!admission.ok) {
          // The contract's 429 and 503 carry Retry-After; a slot frees whenever a stream closes.
          const refusal = graphqlRefusal(new AppError(admission.code, admission.message))
          refusal.headers.set('Retry-After', '1')
          return refusal
        }
        let response: Response
        try {
          response = await yoga.fetch(bounded)
        } catch (error) {
          admission.release()
          throw error
        }
        if (!response.headers.get('content-type')?.includes('text/event-stream')) {
          admission.release()
          return response
        }
        return live.track(response, admission.release)
      }
      if (!watchingChannels && CHANNEL_PATH.test(url.pathname)) watchChannels()
      const context = createContext(deps, request, requestId, verified, null, clientAddress(request, server) ?? null)
      const handled = await rest.handle(request, url, { context, requestId, now: deps.clock.now() })
      return handled ?? errorResponse(new AppError('NOT_FOUND', `No route for ${url.pathname}`), 'messaging', requestId)
    })
  }

  /** The console session of a WebSocket upgrade: its cookie, an Origin of the service's own, and the session's CSRF token from connection_init. */
  async function upgradeSession(request: IncomingMessage, csrfToken: string | null): Promise<ConsoleSession | null> {
    const host = request.headers.host
    const token = consoleGate.tokenOf({
      cookieHeader: request.headers.cookie ?? null,
      csrfToken,
      origin: request.headers.origin ?? null,
      requestOrigins: [`http://${host}`, `https://${host}`],
      originRequired: true,
    })
    return token ? consoleSessionOf(deps, token) : null
  }

  return {
    microcache,
    closeStreams: () => live.closeAll(),
    attachWebSocket: (server) =>
      attachGraphqlWebSocket(server, {
        yoga: yoga as never,
        logger,
        maxPayload: env.BODY_LIMIT_BYTES,
        keepAliveMs: env.SUBSCRIPTION_KEEPALIVE_MS,
        verifyKey,
        resolveDocument,
        consoleSession: upgradeSession,
        admit: (key, address) => live.admit(key, address),
        clientAddress: (request) => addressOf([request.headers['x-forwarded-for'] ?? []].flat().join(','), request.socket.remoteAddress),
      }),
    async fetch(request, server) {
      const started = performance.now()
      const incoming = request.headers.get('x-request-id')
      const requestId = incoming && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : randomUUID()
      const url = new URL(request.url)
      let response: Response
      try {
        response = await route(request, url, requestId, server)
      } catch (error) {
        // A client that hangs up mid-request (its body stream aborts) is not a fault of ours:
        // logged at info, and counted as the client's 400, not as a 500.
        if (request.signal.aborted) {
          logger.info({ requestId, reason: String(error) }, 'client went away')
          response = errorResponse(new AppError('BAD_REQUEST', 'The client closed the request before it was read'), 'messaging', requestId)
        } else {
          logger.error({ err: error, requestId }, 'unhandled error')
          response = errorResponse(new AppError('INTERNAL', 'Internal server error'), 'messaging', requestId)
        }
      }
      response.headers.set('X-Request-Id', requestId)
      if (url.pathname === '/graphql' && request.method !== 'OPTIONS') cors.apply(request, response)
      metrics.observeRequest(request.method, url.pathname, response.status, (performance.now() - started) / 1000)
      logger.info(
        { requestId, method: request.method, path: url.pathname, status: response.status, ms: Math.round(performance.now() - started) },
        'request',
      )
      return response
    },
  }
}
