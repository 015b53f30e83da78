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
import { bearerToken, type AuthenticatedAccount } from './auth/api-keys.js'
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
import { sessionGate } from './console/sessions.js'
import { clientAddressOf, type ClientAddress } from './door/client-address.js'
import { createCredentialsStage, type Credentials } from './door/credentials.js'
import { createBudget } from './door/budget.js'
import { createCredentialWatch } from './auth/credential-watch.js'
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
      return createContext(deps, initial.request, given.requestId, given.verified, given.consoleSessionId)
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
  const budget = createBudget(env)
  const { credentials: credentialsOf } = createCredentialsStage(deps)
  // Live connections end with their credential, on every instance (src/auth/credential-watch.ts).
  const watch = createCredentialWatch({ db: deps.db, events: deps.events, clock: deps.clock, changes: deps.commitProbe })
  const hold = (credentials: Credentials, onEnd: () => void) => {
    const account = credentials.account
    if (!account) return () => {}
    const session = credentials.session
    return watch.hold(
      { accountId: account.id, keyId: session ? null : account.keyId, sessionId: session?.id ?? null, expiresAt: session?.expiresAt },
      onEnd,
    )
  }
  const live = createLiveStreams({
    perKey: env.SUBSCRIPTIONS_PER_KEY,
    perAddress: env.SUBSCRIPTIONS_PER_IP,
    keepAliveMs: env.SUBSCRIPTION_KEEPALIVE_MS,
  })
  const cors = createCorsPolicy({ origins: env.CORS_ORIGINS, publicBaseUrl: env.PUBLIC_BASE_URL })

  /** The client-address stage of an HTTP request: the node request's socket gives the peer. */
  const clientAddress = (request: Request, server?: ServerContext): ClientAddress =>
    clientAddressOf(
      env.TRUST_PROXY,
      request.headers.get('x-forwarded-for'),
      (server as { req?: { socket?: { remoteAddress?: string } } } | undefined)?.req?.socket?.remoteAddress,
    )

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
    if (isConsolePath(url.pathname)) return consolePages(request, url, clientAddress(request, server).address ?? undefined) // src/console/
    // The database is known to be unreachable: answer now rather than wait for a statement timeout.
    if (breaker?.open) return unavailable(url, requestId)
    if (url.pathname === '/graphql' && request.method === 'OPTIONS') return cors.preflight(request)
    const token = bearerToken(request.headers.get('authorization'))
    const address = clientAddress(request, server)
    // The account console's session (its cookie and CSRF token): looked up here, budgeted like a key.
    const sessionToken =
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
    // A key not verified lately is verified here (the lookup the request makes anyway; its answer
    // stays in the key cache). In-process callers (tests, tools) have no address: their key is left
    // to the context, and without one they are not limited.
    let credentials: Credentials
    try {
      credentials = await credentialsOf(token, sessionToken, address.key !== null)
    } catch (error) {
      if (databaseFault(error)) return unavailable(url, requestId)
      throw error
    }
    const spent = budget.spend(credentials, address.key)
    if (spent.wait > 0) return withHeaders(rateLimited(spent.message, spent.wait, url, requestId), spent.headers)
    const session = credentials.session
    return withHeaders(
      await dispatch(request, url, requestId, address, credentials, session ? `session:${session.id}` : token),
      spent.headers,
    )
  }

  async function dispatch(
    request: Request,
    url: URL,
    requestId: string,
    address: ClientAddress,
    credentials: Credentials,
    /** The Bearer token, or `session:<id>` for a console session: what live streams are counted by. */
    token: string | null,
  ): Promise<Response> {
    const { verified } = credentials
    const consoleSessionId = credentials.session?.id ?? null
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
        graphqlRequests.set(bounded, { requestId, verified, consoleSessionId })
        // Subscriptions (Server-Sent Events): counted per key and address while open (docs/live.md).
        if (!request.headers.get('accept')?.includes('text/event-stream')) {
          const answer = await yoga.fetch(bounded)
          // A GET with no credentials can only read public data: shared caches may keep its answer.
          return request.method === 'GET' && !token ? cacheablePublicAnswer(request, answer) : answer
        }
        const keyDigest = token ? createHash('sha256').update(token).digest('base64') : null
        const admission = live.admit(keyDigest, address.address)
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
        return live.track(response, admission.release, (close) => hold(credentials, close))
      }
      if (!watchingChannels && CHANNEL_PATH.test(url.pathname)) watchChannels()
      const context = createContext(deps, request, requestId, verified)
      const handled = await rest.handle(request, url, { context, requestId, now: deps.clock.now() })
      return handled ?? errorResponse(new AppError('NOT_FOUND', `No route for ${url.pathname}`), 'messaging', requestId)
    })
  }

  /**
   * The credentials stage of a WebSocket's connection_init: a Bearer key, or the console's session
   * (its cookie, an Origin of the service's own, and the session's CSRF token from the payload).
   */
  function upgradeCredentials(request: IncomingMessage, authorization: string | null, csrfToken: string | null) {
    const host = request.headers.host
    const sessionToken =
      authorization === null && csrfToken !== null
        ? consoleGate.tokenOf({
            cookieHeader: request.headers.cookie ?? null,
            csrfToken,
            origin: request.headers.origin ?? null,
            requestOrigins: [`http://${host}`, `https://${host}`],
            originRequired: true,
          })
        : null
    return credentialsOf(authorization === null ? null : bearerToken(authorization), sessionToken, true)
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
        clientAddress: (request) =>
          clientAddressOf(env.TRUST_PROXY, [request.headers['x-forwarded-for'] ?? []].flat().join(','), request.socket.remoteAddress),
        credentials: upgradeCredentials,
        recheck: (c) => credentialsOf(c.token, c.sessionToken, true),
        spend: (c, address) => budget.spend(c, address.key),
        resolveDocument,
        admit: (key, address) => live.admit(key, address),
        hold,
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
