// The error answers of both APIs (CONTRACT.md's error table) and which of them each route can give.
import type { RestRoute } from '../route.js'
import { array, object, oneOf, string, type JsonSchema } from './json-schema.js'

export const errorSchemas: Record<string, JsonSchema> = {
  MessagingError: object(
    {
      error: string('A human message. For 500 it is generic and names the request id.'),
      code: oneOf([
        'BAD_REQUEST',
        'UNAUTHENTICATED',
        'FORBIDDEN',
        'NOT_FOUND',
        'METHOD_NOT_ALLOWED',
        'CONFLICT',
        'PAYLOAD_TOO_LARGE',
        'UNSUPPORTED_MEDIA_TYPE',
        'VALIDATION_FAILED',
        'RATE_LIMITED',
        'IDEMPOTENCY_KEY_REUSED',
        'INTERNAL',
        'SERVICE_UNAVAILABLE',
      ]),
      details: array(
        object({ field: string('The legacy field name, e.g. contacts[3].mobile.'), message: string() }),
        'Validation errors only: one entry per bad field.',
      ),
    },
    { optional: ['details'] },
  ),
  ChannelError: object({ error: string() }),
}

interface ErrorDoc {
  description: string
  example: unknown
  /** Response headers that come with it (names from `components.headers`). */
  headers?: string[]
}

const messagingErrors: Record<number, ErrorDoc> = {
  400: {
    description: 'BAD_REQUEST: the body is not valid JSON, or not the expected JSON type.',
    example: { error: 'The body is not valid JSON', code: 'BAD_REQUEST' },
  },
  401: {
    description: 'UNAUTHENTICATED: the Authorization header is missing or malformed, or the key is unknown or revoked.',
    example: { error: 'A valid API key is required', code: 'UNAUTHENTICATED' },
    headers: ['WWW-Authenticate'],
  },
  403: {
    description: 'FORBIDDEN: the API key lacks the scope the route needs (its `security` entry names it).',
    example: {
      error: 'This API key lacks the scope "read"',
      code: 'FORBIDDEN',
      details: [{ field: 'scope', message: 'needs the scope read; the key has sms:send' }],
    },
  },
  404: {
    description: "NOT_FOUND: unknown path, or an unknown reference (another account's answers the same).",
    example: { error: 'Group not found', code: 'NOT_FOUND' },
  },
  405: {
    description: 'METHOD_NOT_ALLOWED: the path exists with other methods.',
    example: { error: 'PUT is not allowed on /contact/group/x', code: 'METHOD_NOT_ALLOWED' },
    headers: ['Allow'],
  },
  409: {
    description: 'CONFLICT: a rename or code change would collide, or a request with the same Idempotency-Key is still running.',
    example: { error: 'A group with that name exists', code: 'CONFLICT' },
  },
  413: {
    description: 'PAYLOAD_TOO_LARGE: the body is over BODY_LIMIT_BYTES (default 5 MiB).',
    example: { error: 'The body is larger than 5242880 bytes', code: 'PAYLOAD_TOO_LARGE' },
  },
  415: {
    description: 'UNSUPPORTED_MEDIA_TYPE: the body is not application/json.',
    example: { error: 'The body must be application/json', code: 'UNSUPPORTED_MEDIA_TYPE' },
  },
  422: {
    description: 'VALIDATION_FAILED (well-formed input that breaks a rule; `details` names each field) or IDEMPOTENCY_KEY_REUSED.',
    example: {
      error: 'mobile is not a valid mobile number',
      code: 'VALIDATION_FAILED',
      details: [{ field: 'mobile', message: 'mobile is not a valid mobile number' }],
    },
  },
  429: {
    description: 'RATE_LIMITED: too many requests for this API key.',
    example: { error: 'Too many requests for this API key', code: 'RATE_LIMITED' },
    headers: ['Retry-After'],
  },
  500: {
    description: 'INTERNAL: anything unexpected. The message is generic; the request id is in X-Request-Id.',
    example: { error: 'Internal server error (request id 6b1f…)', code: 'INTERNAL' },
  },
  503: {
    description:
      'SERVICE_UNAVAILABLE: the database is unreachable or timed out, concurrent writes to the same records kept colliding (a deadlock or serialization failure on every try), or the instance is shutting down. Nothing was written; send the same request again after Retry-After.',
    example: { error: 'The database is unavailable; try again shortly', code: 'SERVICE_UNAVAILABLE' },
    headers: ['Retry-After'],
  },
}

const channelErrors: Record<number, ErrorDoc> = {
  400: { description: 'A query or path parameter that cannot be read.', example: { error: 'limit must be a whole number from 1' } },
  404: { description: 'The channel or program does not exist.', example: { error: 'Channel not found' } },
  405: {
    description: 'Every channel path is GET (and HEAD, OPTIONS) only.',
    example: { error: 'POST is not allowed on /channels/x/status' },
    headers: ['Allow'],
  },
  500: { description: 'Anything unexpected; the request id is in X-Request-Id.', example: { error: 'Internal server error' } },
  503: {
    description: 'The database is unreachable or timed out, or the instance is shutting down.',
    example: { error: 'The database is unavailable; try again shortly' },
    headers: ['Retry-After'],
  },
}

/** The error statuses a route can answer: those of its API, those its body brings, and its own. */
export function errorStatusesOf(route: RestRoute): number[] {
  const own = route.openapi?.errors ?? []
  const common = route.api === 'messaging' ? [401, 403, 404, 405, 429, 500, 503] : [404, 405, 500, 503]
  const body = route.body ? [400, 413, 415, 422] : []
  // Any POST may carry an Idempotency-Key: a repeat while the first runs is a 409, with another body a 422.
  const idempotent = route.api === 'messaging' && route.method === 'POST' ? [409, 422] : []
  return [...new Set([...common, ...body, ...idempotent, ...own])].sort((a, b) => a - b)
}

/** The `components.responses` name of an error answer. */
export const errorResponseName = (api: RestRoute['api'], status: number) => `${api === 'messaging' ? 'Messaging' : 'Channel'}Error${status}`

/** Every error answer as a reusable response, for `components.responses`. */
export function errorResponses(): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [api, table, schema] of [
    ['messaging', messagingErrors, 'MessagingError'],
    ['channel', channelErrors, 'ChannelError'],
  ] as const) {
    for (const [status, doc] of Object.entries(table)) {
      out[errorResponseName(api, Number(status))] = {
        description: doc.description,
        headers: Object.fromEntries(['X-Request-Id', ...(doc.headers ?? [])].map((h) => [h, { $ref: `#/components/headers/${h}` }])),
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` }, example: doc.example } },
      }
    }
  }
  return out
}

export const responseHeaders = {
  'X-Request-Id': {
    description: 'The request id (the one sent in X-Request-Id, or a new uuid); it is logged with the request.',
    schema: { type: 'string' },
  },
  'WWW-Authenticate': { description: 'Always `Bearer`.', schema: { type: 'string' } },
  Allow: { description: 'The methods the path accepts.', schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'string' } },
  ETag: { description: 'Validator of the answer; send it back in If-None-Match for a 304.', schema: { type: 'string' } },
  Link: {
    description:
      'Paged lists (RFC 8288): `<url>; rel="first"`, `rel="prev"` (not on page 1), `rel="next"` (not on the last page), `rel="last"`, comma-separated. Absolute URLs on the public base URL, keeping the query parameters of the request with `page` set.',
    schema: { type: 'string' },
  },
  'X-Total-Count': { description: 'Paged lists: the number of items in the whole list (`meta.total`).', schema: { type: 'string' } },
  'Cache-Control': {
    description: 'Now playing: `public, max-age=<seconds until estimated_end_at, at least 1>`; 60 for a live broadcast or an unknown end.',
    schema: { type: 'string' },
  },
}
