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
 * A text fixed for the process's life, made on its first request and answered with its ETag (304
 * to a matching If-None-Match) and the given headers: `no-cache` (tools revalidate, and get it
 * again after an upgrade) and open to any origin, for both the OpenAPI document and the SDL.
 */
function cachedText(make: () => string, headersBesidesEtag: Record<string, string>) {
  // Made on the first request, not at start-up (printing the schema is a tenth of a second).
  let text: string | undefined
  let headers: Record<string, string> = {}
  return (request: Request): Response => {
    if (text === undefined) {
      text = make()
      headers = { ...headersBesidesEtag, ETag: `"${createHash('sha1').update(text).digest('base64url')}"` }
    }
    if (etagMatches(request.headers.get('if-none-match'), headers.ETag!)) return new Response(null, { status: 304, headers })
    return new Response(request.method === 'HEAD' ? null : text, { headers })
  }
}

export function createWebRoutes(routes: RestRoute[]) {
  // Both built on their first request, not at start-up (docs/operations.md, "Start-up").
  const openapi = cachedText(() => JSON.stringify(buildOpenApiDocument(routes, { version }), null, 2), {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-cache',
    'Access-Control-Allow-Origin': '*',
  })
  const sdl = cachedText(printedSchema, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Cache-Control': 'no-cache',
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Expose-Headers': 'ETag',
  })
  const home = homePage()
  const reference = apiReferencePage()

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
