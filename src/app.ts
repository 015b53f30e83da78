import { createHash } from 'node:crypto'
import { createYoga, maskError as defaultMaskError, type Plugin } from 'graphql-yoga'
import { GraphQLError } from 'graphql'
import type { Deps } from './deps.js'
import { AppError, knownAppError } from './core/errors.js'
import { schema } from './graphql/schema.js'
import { createContext } from './graphql/context.js'
import { graphqlLimitsPlugin } from './graphql/limits/graphql-limits-plugin.js'
import { graphqlParamsPlugin, graphqlRefusal, parsedBodies, readGraphqlRequest } from './graphql/limits/read-graphql-request.js'
import { createRestRouter, errorResponse } from '../rest-compat/router.js'
import { restRoutes } from '../rest-compat/routes.js'
import { bearerToken, type AuthenticatedAccount } from './auth/api-keys.js'
import { etagMatches, Microcache } from './http/microcache.js'
import { createWebRoutes } from './web/web-routes.js'
import { graphiqlOptions, renderBundledGraphiQL } from './web/graphiql.js'
import { createMetrics, type Metrics } from './metrics/create-metrics.js'
import { createOperationObserver, graphqlMetricsPlugin, operationNamesOf } from './metrics/graphql-plugin.js'
import { metricsEndpoint } from './metrics/metrics-endpoint.js'
import { createLiveStreams } from './live/live-streams.js'
import { TOPIC } from './live/topics.js'
import type { DatabaseBreaker } from './db/breaker.js'
import { RESYNC } from './events/event-bus.js'
import { createCorsPolicy } from './http/cors.js'
import { createConsoleRoutes, isConsolePath } from './console/console-routes.js'
import { attachGraphqlWebSocket } from './graphql/websocket.js'
import { compiledExecutionPlugin } from './graphql/plugins/compiled-execution.js'
import { createFastLane } from './graphql/fast-lane.js'
import { createDocumentResolver, loadTrustedDocuments, persistedDocumentsPlugin } from './graphql/plugins/persisted-documents.js'
import { CONSOLE_DOCUMENTS } from './console/documents.js'
import type { IncomingMessage, Server } from 'node:http'
import { sessionGate } from './console/sessions.js'
import { clientAddressOf } from './door/client-address.js'
import { createCredentialsStage, type Credentials } from './door/credentials.js'
import { createBudget } from './door/budget.js'
import { NO_ADDRESS, NO_CREDENTIALS, pipeline, type Door } from './door/pipeline.js'
import { observeStage } from './door/stages/observe.js'
import { clientAddressStage } from './door/stages/client-address.js'
import { openRoutesStage } from './door/stages/open-routes.js'
import { corsStage } from './door/stages/cors.js'
import { breakerStage } from './door/stages/breaker.js'
import { credentialsStage } from './door/stages/credentials.js'
import { budgetStage } from './door/stages/budget.js'
import { idempotencyStage } from './door/stages/idempotency.js'
import { createCredentialWatch } from './auth/credential-watch.js'
import { documentText } from './graphql/typed-documents.js'
import { AnswerResponse } from './http/answer-response.js'

const CHANNEL_PATH = /^\/api\/(channels|programs)(\/|\.|$)/
/** A JSON body, the only kind the fast lane of /graphql reads (src/graphql/fast-lane.ts). */
const JSON_BODY = /^application\/json\s*(;|$)/i

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
  /** The client's address as the door saw it, for the audit log (src/audit/). */
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
  const observeOperation = createOperationObserver(metrics, { known: operationNamesOf(restRoutes.map((r) => r.document)) })
  // Queries Yoga answered compiled are answered again without it (src/graphql/fast-lane.ts); not
  // with tracing's plugin (or any other added), whose spans come from Yoga's hooks.
  const fastLane = env.GRAPHQL_COMPILED_EXECUTION && plugins.length === 0 ? createFastLane(observeOperation, metrics.graphqlFastLane) : null
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
      graphqlMetricsPlugin(metrics, {}, observeOperation),
      ...plugins,
      // Last, so that no other plugin's executor wraps what it sets.
      ...(env.GRAPHQL_COMPILED_EXECUTION ? [compiledExecutionPlugin({ onAnswer: fastLane?.compiledAnswer })] : []),
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
  const credentialsOfStage = createCredentialsStage(deps)
  const credentialsOf = credentialsOfStage.credentials
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

  /**
   * The end of the door: /graphql (Yoga; Server-Sent Events counted by the subscription caps) and
   * the REST routes. The stages before it have found the client, its credentials and its budget.
   */
  async function route(door: Door): Promise<Response> {
    const { request, url, requestId, credentials } = door
    const { verified, session } = credentials
    // What live streams are counted by: the Bearer token, or `session:<id>` for a console session.
    const token = session ? `session:${session.id}` : credentials.token
    const consoleSessionId = session?.id ?? null
    if (url.pathname === '/graphql') {
      let bounded: Request
      try {
        bounded = await readGraphqlRequest(request, url, env.BODY_LIMIT_BYTES)
      } catch (error) {
        if (error instanceof AppError) return graphqlRefusal(error)
        throw error
      }
      graphqlRequests.set(bounded, { requestId, verified, consoleSessionId, address: door.address.address })
      // Subscriptions (Server-Sent Events): counted per key and address while open (docs/live.md).
      if (!request.headers.get('accept')?.includes('text/event-stream')) {
        if (fastLane && request.method === 'POST' && JSON_BODY.test(request.headers.get('content-type') ?? '')) {
          let text: string
          try {
            text = await bounded.text()
          } catch {
            // A client that hung up: Yoga answers it as it always did.
            return yoga.fetch(bounded)
          }
          let params: unknown
          try {
            params = JSON.parse(text)
          } catch {
            // Yoga words the refusal of a body that is not JSON: it reads the text again.
            const again = new Request(bounded.url, { method: 'POST', headers: bounded.headers, body: text })
            graphqlRequests.set(again, graphqlRequests.get(bounded)!)
            return yoga.fetch(again)
          }
          if (params !== null && typeof params === 'object' && !Array.isArray(params)) {
            const fast = await fastLane.answer(bounded, params as Record<string, unknown>, () =>
              createContext(deps, bounded, requestId, verified, consoleSessionId, door.address.address),
            )
            if (fast) return fast
          }
          parsedBodies.set(bounded, params)
          const answer = await yoga.fetch(bounded)
          if (params !== null && typeof params === 'object' && typeof (params as { query?: unknown }).query === 'string')
            fastLane.learn(bounded, params as { query: string; operationName?: string | null }, answer)
          return answer
        }
        const answer = await yoga.fetch(bounded)
        // A GET with no credentials can only read public data: shared caches may keep its answer.
        return request.method === 'GET' && !token ? cacheablePublicAnswer(request, answer) : answer
      }
      const keyDigest = token ? createHash('sha256').update(token).digest('base64') : null
      const admission = live.admit(keyDigest, door.address.address)
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
    const context = createContext(deps, request, requestId, verified, null, door.address.address)
    const handled = await rest.handle(request, url, { context, requestId, now: deps.clock.now() })
    return handled ?? errorResponse(new AppError('NOT_FOUND', `No route for ${url.pathname}`), 'messaging', requestId)
  }

  const unavailableAt = (door: Door) => unavailable(door.url, door.requestId)
  /**
   * The door, in order (STYLE.md 13; docs/architecture.md "The door"). The WebSocket door runs the
   * same client-address, credentials and budget stages per operation (src/graphql/websocket.ts).
   */
  const handle = pipeline(
    [
      observeStage({ logger, metrics }),
      clientAddressStage(env.TRUST_PROXY),
      openRoutesStage({
        ready,
        gateway: () => {
          const health = deps.gateway.health?.()
          return health ? { name: deps.gateway.name, ...health } : null
        },
        metrics: env.METRICS_ENABLED ? scrapeMetrics : null,
        pages: web,
        isConsolePath,
        console: consolePages,
      }),
      corsStage(cors),
      breakerStage(breaker, unavailableAt),
      credentialsStage(credentialsOfStage, consoleGate, unavailableAt),
      budgetStage(budget, (door, message, wait) => rateLimited(message, wait, door.url, door.requestId)),
      idempotencyStage(deps),
    ],
    route,
  )

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
        initTimeoutMs: env.WEBSOCKET_INIT_TIMEOUT_MS,
        idleMs: env.WEBSOCKET_IDLE_TIMEOUT_MS,
      }),
    fetch(request, server) {
      return handle({ request, url: new URL(request.url), server, requestId: '', address: NO_ADDRESS, credentials: NO_CREDENTIALS })
    },
  }
}
