import { randomUUID, createHash } from 'node:crypto'
import { createYoga, maskError as defaultMaskError } from 'graphql-yoga'
import { GraphQLError } from 'graphql'
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth'
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases'
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit'
import type { Deps } from './deps.js'
import { AppError, knownAppError } from './errors.js'
import { schema } from './graphql/schema.js'
import { createContext } from './graphql/context.js'
import { createRestRouter, errorResponse, json } from '../rest-compat/router.js'
import { restRoutes } from '../rest-compat/routes.js'
import { createRateLimiter } from './rate-limit.js'
import { bearerToken } from './auth/api-keys.js'
import { Microcache } from './microcache.js'
import { createMetrics, type Metrics } from './metrics/create-metrics.js'
import { graphqlMetricsPlugin } from './metrics/graphql-plugin.js'
import { metricsEndpoint } from './metrics/metrics-endpoint.js'

export interface AppOptions {
  deps: Deps
  /** Readiness: database reachable and migrations applied. */
  ready: () => Promise<boolean>
  /** The server passes its own, already fed by the Prisma client's query events. */
  metrics?: Metrics
}

export interface App {
  fetch(request: Request): Promise<Response>
  /** Public answers the HTTP listener may replay without calling fetch (see src/http-listener.ts). */
  microcache: Microcache
}

export function createApp({ deps, ready, metrics = createMetrics() }: AppOptions): App {
  const { env, logger } = deps
  const scrapeMetrics = metricsEndpoint(metrics, deps)
  const yoga = createYoga<{ requestId: string }>({
    schema,
    graphqlEndpoint: '/graphql',
    // GraphiQL answers browsers (Accept: text/html) at GET /graphql.
    graphiql: { title: 'Gateway GraphQL' },
    logging: false,
    landingPage: false,
    context: ({ request, requestId }) => createContext(deps, request, requestId),
    maskedErrors: {
      maskError(error, message, isDev) {
        const original = error instanceof GraphQLError ? error.originalError : error
        const known = knownAppError(error)
        if (known) {
          const g = error as GraphQLError
          return new GraphQLError(known.message, {
            nodes: g.nodes,
            path: g.path,
            extensions: { code: known.code, ...(known.details ? { details: known.details } : {}) },
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
    plugins: [
      maxDepthPlugin({ n: 12, flattenFragments: true }),
      maxAliasesPlugin({ n: 30 }),
      costLimitPlugin({ maxCost: 5000 }),
      graphqlMetricsPlugin(metrics),
    ],
  })

  const microcache = new Microcache(env.CHANNEL_CACHE_MS)
  const rest = createRestRouter({
    schema,
    routes: restRoutes,
    prefix: '/api',
    publicBaseUrl: env.PUBLIC_BASE_URL,
    bodyLimitBytes: env.BODY_LIMIT_BYTES,
    logger,
    microcache,
  })
  const limiter = createRateLimiter({ perSecond: env.RATE_LIMIT_PER_SECOND, burst: env.RATE_LIMIT_BURST })

  async function route(request: Request, url: URL, requestId: string): Promise<Response> {
    if (url.pathname === '/healthz') return json({ status: 'ok' }, 200)
    if (url.pathname === '/metrics' && env.METRICS_ENABLED) return scrapeMetrics(request, requestId)
    if (url.pathname === '/readyz') {
      const ok = await ready()
      return json({ status: ok ? 'ready' : 'not ready' }, ok ? 200 : 503)
    }
    const token = bearerToken(request.headers.get('authorization'))
    if (token) {
      // Keyed on a digest of the token, so unknown keys are limited before any database work.
      const wait = limiter.take(createHash('sha256').update(token).digest('base64'))
      if (wait > 0) {
        return errorResponse(new AppError('RATE_LIMITED', 'Too many requests for this API key'), 'messaging', requestId, {
          'Retry-After': String(wait),
        })
      }
    }
    if (url.pathname === '/graphql') {
      return yoga.fetch(request, { requestId })
    }
    const context = createContext(deps, request, requestId)
    const handled = await rest.handle(request, url, { context, requestId, now: deps.clock.now() })
    return handled ?? errorResponse(new AppError('NOT_FOUND', `No route for ${url.pathname}`), 'messaging', requestId)
  }

  return {
    microcache,
    async fetch(request) {
      const started = performance.now()
      const incoming = request.headers.get('x-request-id')
      const requestId = incoming && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : randomUUID()
      const url = new URL(request.url)
      let response: Response
      try {
        response = await route(request, url, requestId)
      } catch (error) {
        logger.error({ err: error, requestId }, 'unhandled error')
        response = errorResponse(new AppError('INTERNAL', 'Internal server error'), 'messaging', requestId)
      }
      response.headers.set('X-Request-Id', requestId)
      metrics.observeRequest(request.method, url.pathname, response.status, (performance.now() - started) / 1000)
      logger.info(
        { requestId, method: request.method, path: url.pathname, status: response.status, ms: Math.round(performance.now() - started) },
        'request',
      )
      return response
    },
  }
}
