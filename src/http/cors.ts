import { AnswerResponse } from './answer-response.js'

/**
 * The CORS policy of /graphql (docs/security.md "CORS"). The public channel API keeps its own,
 * always `*` (rest-compat/router.ts), as the contract says.
 *
 * - Any origin may read with `Access-Control-Allow-Origin: *` and no credentials. A Bearer key in
 *   `Authorization` is not a credential in the CORS sense (those are cookies, HTTP authentication
 *   and client certificates): a page of any origin may send one, as browser integrations do, and
 *   the key itself is what authorises.
 * - Credentialed requests (a future console's cookie) are allowed only for the origins listed in
 *   CORS_ORIGINS: those get their origin echoed with `Access-Control-Allow-Credentials: true`.
 *   Since the answer then depends on `Origin`, every answer says `Vary: Origin` when any is listed.
 */

const METHODS = 'GET, POST, OPTIONS'
const ALLOWED_HEADERS = 'Authorization, Content-Type, Idempotency-Key, X-Request-Id'
const EXPOSED_HEADERS = 'X-Request-Id, Idempotency-Replayed, Retry-After'
/** Browsers cap it lower (Chromium: 2 h); the answer never changes while the process runs. */
const MAX_AGE_SECONDS = '86400'

export interface CorsPolicy {
  /** Adds the CORS headers for `request` to its answer (any status, preflight or not). */
  apply(request: Request, response: Response): void
  /** The answer to `OPTIONS /graphql`: 204 with Allow, the preflight headers and `apply`'s. */
  preflight(request: Request): Response
  /**
   * Whether a request may be honoured on an ambient credential (a cookie): it carries no `Origin`
   * (not a cross-origin browser request), or its origin is the service's own or a listed one.
   * Nothing uses cookies yet; the console that will must check this first.
   */
  acceptsCredentialsFrom(request: Request): boolean
}

export function createCorsPolicy({ origins, publicBaseUrl }: { origins: readonly string[]; publicBaseUrl: string }): CorsPolicy {
  const listed = new Set(origins)
  const own = new URL(publicBaseUrl).origin

  function originHeaders(request: Request): [string, string][] {
    const origin = request.headers.get('origin')
    if (origin !== null && listed.has(origin)) {
      return [
        ['Access-Control-Allow-Origin', origin],
        ['Access-Control-Allow-Credentials', 'true'],
      ]
    }
    return [['Access-Control-Allow-Origin', '*']]
  }

  function apply(request: Request, response: Response) {
    for (const [name, value] of originHeaders(request)) response.headers.set(name, value)
    response.headers.set('Access-Control-Expose-Headers', EXPOSED_HEADERS)
    if (listed.size) response.headers.append('Vary', 'Origin')
  }

  return {
    apply,
    preflight(request) {
      const response = new AnswerResponse(null, {
        status: 204,
        headers: {
          Allow: METHODS,
          'Access-Control-Allow-Methods': METHODS,
          'Access-Control-Allow-Headers': ALLOWED_HEADERS,
          'Access-Control-Max-Age': MAX_AGE_SECONDS,
        },
      })
      apply(request, response)
      return response
    },
    acceptsCredentialsFrom(request) {
      const origin = request.headers.get('origin')
      return origin === null || origin === own || listed.has(origin)
    },
  }
}
