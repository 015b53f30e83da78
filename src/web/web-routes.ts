// The service's own pages: the home page, the OpenAPI document, the GraphQL SDL, the API reference and
// the icon. They answer GET and HEAD only; anything else falls through to the routes behind them.
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import type { RestRoute } from '../../rest-compat/route.js'
import { buildOpenApiDocument } from '../../rest-compat/openapi/build-document.js'
import { printedSchema } from '../graphql/print.js'
import { etagMatches } from '../http/microcache.js'
import { apiReferencePage } from './api-reference-page.js'
import { favicon } from './favicon.js'
import { homePage } from './home-page.js'
import { htmlResponse } from './html.js'
import { swaggerUiAsset } from './swagger-ui-assets.js'

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string }

/** Paths that only lead to the reference. */
const TO_REFERENCE = new Set(['/api', '/api/', '/docs', '/docs/'])

/** The printed schema: the same text as the repository's schema.graphql (docs/graphql.md "The SDL"). */
export const SDL_PATH = '/graphql/schema.graphql'

/**
 * A text fixed for the process's life, answered with its ETag (304 to a matching If-None-Match),
 * `no-cache` (tools revalidate, and get it again after an upgrade), and open to any origin.
 */
function cachedText(make: () => string, contentType: string) {
  // Made on the first request, not at start-up (printing the schema is a tenth of a second).
  let text: string | undefined
  let etag = ''
  return (request: Request): Response => {
    if (text === undefined) {
      text = make()
      etag = `"${createHash('sha1').update(text).digest('base64url')}"`
    }
    const headers = {
      'Content-Type': contentType,
      'Cache-Control': 'no-cache',
      ETag: etag,
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Expose-Headers': 'ETag',
    }
    if (etagMatches(request.headers.get('if-none-match'), etag)) return new Response(null, { status: 304, headers })
    return new Response(request.method === 'HEAD' ? null : text, { headers })
  }
}

export function createWebRoutes(routes: RestRoute[]) {
  // Built on its first request, not at start-up (docs/operations.md, "Start-up").
  let openapiText: string | undefined
  let openapiEtag = ''
  const sdl = cachedText(printedSchema, 'text/plain; charset=utf-8')
  const home = homePage()
  const reference = apiReferencePage()

  function openapi(request: Request): Response {
    if (openapiText === undefined) {
      openapiText = JSON.stringify(buildOpenApiDocument(routes, { version }), null, 2)
      openapiEtag = `"${createHash('sha1').update(openapiText).digest('base64url')}"`
    }
    const headers = {
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': 'no-cache',
      ETag: openapiEtag,
      'Access-Control-Allow-Origin': '*',
    }
    if (etagMatches(request.headers.get('if-none-match'), openapiEtag)) return new Response(null, { status: 304, headers })
    return new Response(openapiText, { headers })
  }

  /** The page for this request, or null when the path is not one of them. */
  return function handle(request: Request, url: URL): Response | null {
    if (request.method !== 'GET' && request.method !== 'HEAD') return null
    const path = url.pathname
    if (path === '/') return htmlResponse(home)
    if (path === '/api/openapi.json') return openapi(request)
    if (path === SDL_PATH) return sdl(request)
    if (path === '/api/docs' || path === '/api/docs/') return htmlResponse(reference)
    if (TO_REFERENCE.has(path)) return new Response(null, { status: 302, headers: { Location: '/api/docs' } })
    return favicon(request, path) ?? swaggerUiAsset(path)
  }
}
