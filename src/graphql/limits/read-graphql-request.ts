import { GraphQLError } from 'graphql'
import type { GraphQLParams, Plugin } from 'graphql-yoga'
import { AppError, httpStatusOf } from '../../core/errors.js'
import { graphqlLimits } from './limits.js'
import { readBodyBytes } from '../../http/read-body.js'
import { AnswerResponse } from '../../http/answer-response.js'

/**
 * Bounds what /graphql reads before Yoga sees it: a POST body over `bodyLimitBytes` (by its
 * Content-Length, or while streaming when there is none) is PAYLOAD_TOO_LARGE; a GET query string
 * over the limit is BAD_REQUEST. Returns the request itself when its Content-Length is within the
 * limit (node's parser never delivers more than the declared length, and copying a Request costs a
 * twentieth of a small query's CPU), else a copy whose body was read into memory under the limit.
 */
export async function readGraphqlRequest(request: Request, url: URL, bodyLimitBytes: number): Promise<Request> {
  if (url.search.length > graphqlLimits.maxQueryStringLength) {
    throw new AppError('BAD_REQUEST', `The query string is longer than ${graphqlLimits.maxQueryStringLength} characters`)
  }
  if (!request.body) return request
  const declared = request.headers.get('content-length')
  if (declared !== null && /^\d{1,15}$/.test(declared) && Number(declared) <= bodyLimitBytes) return request
  const body = await readBodyBytes(request, bodyLimitBytes)
  return new Request(request.url, { method: request.method, headers: request.headers, body })
}

/** A refusal at the /graphql door, in the GraphQL response shape with the contract's status. */
export function graphqlRefusal(error: AppError): Response {
  return new AnswerResponse(JSON.stringify({ errors: [{ message: error.message, extensions: { code: error.code } }] }), {
    status: httpStatusOf[error.code],
    headers: { 'Content-Type': 'application/graphql-response+json; charset=utf-8' },
  })
}

/** A client's malformed request, answered 400 BAD_REQUEST by Yoga (never masked, never logged as a fault). */
function badParams(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } })
}

const PARAM_NAMES = ['query', 'operationName', 'variables', 'extensions'] as const

/**
 * The GraphQL parameters of a JSON body, without the top-level names GraphQL over HTTP does not
 * define. Clients add their own beside the four (Apollo Client 4's links spread its operation,
 * `operationType` included; others send `id` or `documentId`): they are ignored, as a query
 * string's other names always were, rather than refused with "Unexpected parameter" (a 400 that
 * graphql-sse retries for ever). A known parameter of the wrong shape is still a 400 (Yoga, onParams).
 */
function knownParams(params: unknown): unknown {
  if (Array.isArray(params)) return params.map(knownParams)
  if (params === null || typeof params !== 'object') return params
  const source = params as Record<string, unknown>
  const known: Record<string, unknown> = {}
  for (const name of PARAM_NAMES) if (Object.hasOwn(source, name)) known[name] = source[name]
  return known
}

/**
 * The GraphQL parameters of a query string or form body. Yoga's own reader JSON.parses
 * `variables`/`extensions` unguarded, so a typo there surfaced as a masked INTERNAL "Unexpected
 * error." logged with a stack; here each parameter is read once and a bad one is named.
 */
function paramsOf(search: URLSearchParams): Record<string, unknown> {
  const params: Record<string, unknown> = {}
  for (const name of PARAM_NAMES) {
    const values = search.getAll(name)
    if (values.length > 1) throw badParams(`The "${name}" parameter is given more than once`)
    const value = values[0]
    if (!value) continue
    if (name === 'query' || name === 'operationName') {
      params[name] = value
      continue
    }
    try {
      params[name] = JSON.parse(value)
    } catch {
      throw badParams(`The "${name}" parameter is not valid JSON`)
    }
  }
  return params
}

/** A form body as text; a client that hangs up meanwhile is Yoga's AbortError (logged at debug), not a fault. */
async function bodyText(request: Request): Promise<string> {
  try {
    return await request.text()
  } catch (error) {
    if (request.signal.aborted) throw new DOMException('The client closed the request before it was read', 'AbortError')
    throw error
  }
}

/** JSON bodies already read and parsed, by request: Yoga's parser answers them without the body. */
export const parsedBodies = new WeakMap<Request, unknown>()

const typeOf = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value)

/**
 * How /graphql reads its parameters: GET query strings and form bodies with the errors named
 * (paramsOf), JSON bodies with only the four names of GraphQL over HTTP (knownParams), another method a 405 with Allow, `operationName` checked to be a string, a missing
 * `query` a 400 (Yoga answers it 200 to `Accept: application/json`), and a body of no GraphQL
 * media type a 415 in the GraphQL error shape (Yoga's is an empty body). Yoga still checks the
 * rest (variables an object, ...).
 */
export function graphqlParamsPlugin(): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, endResponse }) {
      if (request.method !== 'GET' && request.method !== 'POST') {
        const refusal = graphqlRefusal(new AppError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on /graphql`))
        refusal.headers.set('Allow', 'GET, POST, OPTIONS')
        endResponse(refusal)
      } else if (request.method === 'GET') {
        setRequestParser((request) => paramsOf(new URL(request.url).searchParams))
      } else if (
        request.method === 'POST' &&
        /^application\/x-www-form-urlencoded\s*(;|,|$)/i.test(request.headers.get('content-type') ?? '')
      ) {
        setRequestParser(async (request) => paramsOf(new URLSearchParams(await bodyText(request))))
      } else if (request.method === 'POST' && !requestParser) {
        endResponse(
          graphqlRefusal(new AppError('UNSUPPORTED_MEDIA_TYPE', 'The body must be application/json (or application/graphql, or a form)')),
        )
      } else if (requestParser) {
        const parse = requestParser
        setRequestParser(async (request) => {
          // A JSON body the fast lane read already (src/graphql/fast-lane.ts) is not read again.
          const read = parsedBodies.get(request)
          return knownParams(read === undefined ? await parse(request) : read) as GraphQLParams | GraphQLParams[]
        })
      }
    },
    onParams({ params }) {
      if (params.query === undefined || params.query === null) throw badParams('The "query" parameter is required')
      const operationName = typeOf(params.operationName)
      if (!['string', 'null', 'undefined'].includes(operationName)) {
        throw badParams(`Expected "operationName" param to be a string, but given ${operationName}.`)
      }
    },
  }
}
