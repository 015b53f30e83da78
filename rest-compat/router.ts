import { createHash } from 'node:crypto'
import { execute, getOperationAST, validate, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql'
import { AppError, httpStatusOf, knownAppError, type ErrorDetail } from '../src/core/errors.js'
import type { Context } from '../src/graphql/context.js'
import type { Logger } from 'pino'
import type { Found, RestRoute, RouteInput } from './route.js'
import { etagMatches, type CachedResponse, type Microcache } from '../src/http/microcache.js'
import { readBodyBytes } from '../src/http/read-body.js'
import { isStorableText } from '../src/messaging/input-rules.js'
import { inSpan, tracingEnabled } from '../src/core/tracing.js'
import { AnswerResponse } from '../src/http/answer-response.js'
import { pagingHeaders } from './paging-headers.js'
import { loadJit, loadedJit } from '../src/graphql/jit.js'

interface CompiledRoute {
  route: RestRoute
  pattern: RegExp
  paramNames: string[]
  document: DocumentNode
  /** The document compiled once to a function (graphql-jit): same results as `execute`, without re-walking the document per request. */
  run: (variables: Record<string, unknown>, context: Context) => Promise<ExecutionResult> | ExecutionResult
  /** Static paths win over parameterised ones (/contact/groups before /contact/:id). */
  specificity: number
}

export interface RestRouterOptions {
  schema: GraphQLSchema
  routes: RestRoute[]
  /** Mount point: every route path is relative to it. */
  prefix: string
  publicBaseUrl: string
  bodyLimitBytes: number
  logger: Logger
  /** Where `microcache` routes keep their answers. */
  microcache: Microcache
}

export interface RestRequestContext {
  context: Context
  requestId: string
  now: Date
}

export function createRestRouter(options: RestRouterOptions) {
  const compiled: CompiledRoute[] = options.routes
    .map((route) => {
      const document = route.document
      const paramNames: string[] = []
      const source = route.path
        .split('/')
        .map((segment) => {
          if (!segment.startsWith(':')) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
          paramNames.push(segment.slice(1))
          return '([^/]+)'
        })
        .join('/')
      const specificity = route.path.split('/').filter((s) => s && !s.startsWith(':')).length * 10 - paramNames.length
      return {
        route,
        pattern: new RegExp(`^${source}/?$`),
        paramNames,
        document,
        run: compileOnFirstUse(options.schema, route),
        specificity,
      }
    })
    .sort((a, b) => b.specificity - a.specificity)

  /** Routes whose pattern fits the path; `params` is null when a segment cannot name anything (see decodeParam). */
  function match(path: string) {
    const hits: { c: CompiledRoute; params: Record<string, string> | null }[] = []
    for (const c of compiled) {
      const m = c.pattern.exec(path)
      if (!m) continue
      let params: Record<string, string> | null = {}
      for (const [i, name] of c.paramNames.entries()) {
        const value = decodeParam(m[i + 1]!)
        if (value === null) params = null
        else if (params) params[name] = value
      }
      hits.push({ c, params })
    }
    return hits
  }

  const micro = options.microcache
  /** Microcached answers being computed, by key and second. */
  const inflight = new Map<string, Promise<CachedResponse>>()

  /** A shaped answer with its ETag (JSON unless `headers` name another Content-Type), or 304. */
  function respond(status: number, text: string, etag: string, headers: Record<string, string>, request: Request, head: boolean): Response {
    if (etagMatches(request.headers.get('if-none-match'), etag)) {
      return new AnswerResponse(null, { status: 304, headers: { ...headers, ETag: etag } })
    }
    return new AnswerResponse(head ? null : text, {
      status,
      headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers, ETag: etag },
    })
  }

  return {
    /** Handles a request under the prefix; null when the path is not ours. */
    async handle(request: Request, url: URL, rc: RestRequestContext): Promise<Response | null> {
      if (url.pathname !== options.prefix && !url.pathname.startsWith(options.prefix + '/')) return null
      const path = url.pathname.slice(options.prefix.length) || '/'
      const hits = match(path)
      const method = request.method.toUpperCase()
      const hit = hits.find((h) => h.c.route.method === method || (method === 'HEAD' && h.c.route.method === 'GET'))
      const api = hits[0]?.c.route.api ?? (/^\/(channels|programs)([/.]|$)/.test(path) ? 'channel' : 'messaging')
      try {
        if (method === 'OPTIONS' && hits.length)
          return preflight(
            hits.map((h) => h.c.route.method),
            api,
          )
        if (!hits.length) throw new AppError('NOT_FOUND', `No route for ${path}`)
        if (!hit) {
          const allow = [...new Set(hits.map((h) => h.c.route.method))].join(', ')
          return errorResponse(new AppError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}`), api, rc.requestId, {
            Allow: allow,
          })
        }
        const { route } = hit.c
        const microKey = route.microcache && micro.enabled ? micro.key(cacheKeyOf(route, url), rc.now, route.microcacheSeconds) : null
        const cached = microKey ? micro.get(microKey) : undefined
        if (cached) return respond(cached.status, cached.body, cached.etag, cached.headers, request, method === 'HEAD')
        // Requests for an answer being computed wait for it instead of computing it again.
        const pendingKey = microKey && `${microKey.path}|${microKey.second}`
        const pending = pendingKey ? inflight.get(pendingKey) : undefined
        if (pending) {
          const shared = await pending.catch(() => undefined)
          if (shared) return respond(shared.status, shared.body, shared.etag, shared.headers, request, method === 'HEAD')
        }
        if (route.api === 'messaging') await rc.context.account()
        // A reference that is not valid percent-encoding, or holds NUL, is no one's: 404 like any unknown one.
        if (!hit.params) throw new AppError('NOT_FOUND', `No resource at ${path}`)
        const input: RouteInput = {
          params: hit.params,
          query: url.searchParams,
          body: route.body ? await readJsonBody(request, options.bodyLimitBytes) : undefined,
        }
        const compute = async () => {
          const variables = route.variables(input)
          // What the body holds is in the variables now: let it go (an add-contacts body is 10,000
          // objects, which would otherwise live until the answer). toLegacy never sees a body.
          input.body = undefined
          const result = await hit.c.run(variables, rc.context)
          if (result.errors?.length) throw toAppError(result.errors[0]!, options.logger, rc.requestId)
          const data = found(result.data, route)
          const body = route.toLegacy(data, { input, publicBaseUrl: options.publicBaseUrl, now: rc.now, request })
          const headers = {
            ...corsHeaders(route.api),
            ...(route.contentType ? { 'Content-Type': route.contentType } : {}),
            ...route.headers?.(data),
            ...(route.paging
              ? pagingHeaders(route.paging(data), {
                  publicBaseUrl: options.publicBaseUrl,
                  url,
                  kept: route.microcache ? Object.keys(route.openapi?.query ?? {}) : undefined,
                })
              : {}),
          }
          return { body, headers, text: route.contentType ? String(body) : JSON.stringify(body) }
        }
        if (!route.etag) {
          const { body, headers, text } = await compute()
          if (!route.contentType) return json(body, 200, headers, method === 'HEAD')
          return new AnswerResponse(method === 'HEAD' ? null : text, { status: 200, headers })
        }
        const answer = compute().then(({ text, headers }) => {
          const entry = { status: 200, body: text, etag: `"${createHash('sha1').update(text).digest('base64url')}"`, headers }
          if (microKey) micro.set(microKey, entry)
          return entry
        })
        if (pendingKey) {
          inflight.set(pendingKey, answer)
          void answer.catch(() => undefined).finally(() => inflight.delete(pendingKey))
        }
        const { body: text, etag, headers } = await answer
        return respond(200, text, etag, headers, request, method === 'HEAD')
      } catch (error) {
        // A client that hung up while its body was read is not a fault of ours (nor logged as one).
        let appError: AppError
        if (error instanceof AppError) appError = error
        else if (request.signal.aborted) appError = new AppError('BAD_REQUEST', 'The client closed the request before it was read')
        else appError = toAppError(error, options.logger, rc.requestId)
        const rename = hit?.c.route.legacyField
        if (rename && appError.details) {
          return errorResponse(
            new AppError(
              appError.code,
              appError.message,
              appError.details.map((d) => ({ ...d, field: rename(d.field) })),
            ),
            api,
            rc.requestId,
          )
        }
        return errorResponse(appError, api, rc.requestId)
      }
    },
  }
}

/**
 * The microcache key: the path and, in the order the route documents them, only the query
 * parameters it reads (its first value each, as the route reads them); an empty value is absent.
 * Other parameters do not change the answer, so they do not make another entry.
 */
/** The operation's data with every root field present (route.ts `Found`): a null root without an error is a fault. */
function found(data: ExecutionResult['data'], route: RestRoute): Found<unknown> {
  for (const field in data) {
    if (data[field] == null) throw new Error(`REST route ${route.method} ${route.path}: ${field} is null without an error`)
  }
  return data as Found<unknown>
}

function cacheKeyOf(route: RestRoute, url: URL): string {
  const names = Object.keys(route.openapi?.query ?? {})
  const kept = names.flatMap((name) => {
    const value = url.searchParams.get(name)
    return value ? [`${encodeURIComponent(name)}=${encodeURIComponent(value)}`] : []
  })
  return kept.length ? `${url.pathname}?${kept.join('&')}` : url.pathname
}

/** A route's document as a function of its variables; graphql-js's `execute` where graphql-jit cannot compile it. */
/**
 * A route's document is validated and compiled by graphql-jit when the route is first asked, not
 * when the app is built: doing it for every route took about half a second of the start-up
 * (docs/operations.md, "Start-up"), for routes an instance may never serve. Every route's document
 * is validated against the schema by the tests (test/typed-documents.test.ts) and typed by gql.tada.
 * Until graphql-jit has loaded (src/graphql/jit.ts) a route runs on graphql-js, so no request
 * waits for the import, and its statements go out when they always did.
 */
function compileOnFirstUse(schema: GraphQLSchema, route: RestRoute): CompiledRoute['run'] {
  let run: CompiledRoute['run'] | undefined
  let interpreted: CompiledRoute['run'] | undefined
  return (variables, context) => {
    if (run) return run(variables, context)
    if (!interpreted) {
      const errors = validate(schema, route.document)
      if (errors.length) throw new Error(`REST route ${route.method} ${route.path}: ${errors.map((e) => e.message).join('; ')}`)
      interpreted = compileDocument(undefined, schema, route.document)
    }
    const jit = loadedJit()
    if (!jit) {
      loadJit().catch(() => undefined)
      return interpreted(variables, context)
    }
    run = compileDocument(jit, schema, route.document)
    return run(variables, context)
  }
}

/** The route's document as graphql-jit's function, or graphql-js's execute when `jit` is not given or cannot compile it. */
function compileDocument(
  jit: Awaited<ReturnType<typeof loadJit>> | undefined,
  schema: GraphQLSchema,
  document: DocumentNode,
): CompiledRoute['run'] {
  const compiled = jit?.compileQuery(schema, document)
  const run: CompiledRoute['run'] =
    jit && compiled && jit.isCompiledQuery(compiled)
      ? (variables, context) => compiled.query(undefined, context, variables)
      : (variableValues, contextValue) => execute({ schema, document, variableValues, contextValue })
  const operation = getOperationAST(document)
  const name = operation?.name?.value
  const type = operation?.operation ?? 'query'
  // With tracing on, the route's operation is a span of the request's trace, its SQL spans inside.
  return (variables, context) =>
    tracingEnabled
      ? inSpan(
          name ? `${type} ${name}` : type,
          { attributes: { 'graphql.operation.type': type, ...(name ? { 'graphql.operation.name': name } : {}) } },
          async () => run(variables, context),
        )
      : run(variables, context)
}

/**
 * A path segment decoded, or null when it is malformed percent-encoding (decodeURIComponent
 * throws) or decodes to text no stored key can hold (NUL; lone surrogates cannot come out of UTF-8).
 */
function decodeParam(raw: string): string | null {
  try {
    const value = decodeURIComponent(raw)
    return isStorableText(value) ? value : null
  } catch {
    return null
  }
}

function toAppError(error: unknown, logger: Logger, requestId: string): AppError {
  const known = knownAppError(error)
  if (known) return known
  const original = (error as { originalError?: unknown }).originalError
  // A GraphQL error with no original error is a variable coercion failure: the route passed
  // something its checks did not catch. It is still the client's input.
  if (error && typeof error === 'object' && 'locations' in error && !original) {
    return new AppError('VALIDATION_FAILED', String((error as { message?: unknown }).message))
  }
  logger.error({ err: original ?? error, requestId }, 'unexpected error in REST route')
  return new AppError('INTERNAL', 'Internal server error')
}

async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  // An oversize body is a 413 whatever its type (readBodyBytes refuses it by Content-Length).
  if (Number(request.headers.get('content-length') ?? '0') > limit) await readBodyBytes(request, limit)
  const type = request.headers.get('content-type') ?? ''
  if (!/^application\/(.+\+)?json\s*(;|$)/i.test(type)) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'The body must be application/json')
  }
  const text = Buffer.from(await readBodyBytes(request, limit)).toString('utf8')
  try {
    return JSON.parse(text)
  } catch {
    throw new AppError('BAD_REQUEST', 'The body is not valid JSON')
  }
}

function corsHeaders(api: RestRoute['api']): Record<string, string> {
  return api === 'channel'
    ? { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': 'ETag, X-Request-Id, Link, X-Total-Count' }
    : {}
}

function preflight(methods: string[], api: RestRoute['api']): Response {
  const allow = [...new Set([...methods, 'OPTIONS'])].join(', ')
  if (api !== 'channel') return new AnswerResponse(null, { status: 204, headers: { Allow: allow } })
  return new AnswerResponse(null, {
    status: 204,
    headers: {
      Allow: allow,
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Allow-Methods': allow,
      'Access-Control-Allow-Headers': 'Content-Type, If-None-Match',
      'Access-Control-Max-Age': '86400',
    },
  })
}

export function errorResponse(error: AppError, api: RestRoute['api'], requestId: string, headers: Record<string, string> = {}): Response {
  const status = httpStatusOf[error.code]
  const extra: Record<string, string> = { ...headers, ...corsHeaders(api) }
  if (error.code === 'UNAUTHENTICATED') extra['WWW-Authenticate'] = 'Bearer'
  if (error.code === 'SERVICE_UNAVAILABLE') extra['Retry-After'] ??= '1'
  const body =
    api === 'channel'
      ? { error: error.message }
      : {
          error: error.code === 'INTERNAL' ? `Internal server error (request id ${requestId})` : error.message,
          code: error.code,
          ...(error.details?.length ? { details: error.details satisfies ErrorDetail[] } : {}),
        }
  return json(body, status, extra)
}

export function json(body: unknown, status: number, headers: Record<string, string> = {}, headOnly = false): Response {
  return new AnswerResponse(headOnly ? null : JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers },
  })
}
