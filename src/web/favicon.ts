// The service's icon: one small SVG (a speech bubble over a broadcast wave), linked from every page
// the service renders and also answered at /favicon.ico, which browsers ask for on their own.
import { createHash } from 'node:crypto'
import { etagMatches } from '../http/microcache.js'

const FAVICON_PATH = '/favicon.svg'

/** The `<link>` every page's head carries. */
export const FAVICON_LINK = `<link rel="icon" type="image/svg+xml" href="${FAVICON_PATH}" />`

const SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1d5fa8"/><path d="M7 9h18a2 2 0 0 1 2 2v9a2 2 0 0 1-2 2H14l-5 4v-4H7a2 2 0 0 1-2-2v-9a2 2 0 0 1 2-2z" fill="#fff"/><path d="M11 16a5 5 0 0 1 10 0M14 16a2 2 0 0 1 4 0" fill="none" stroke="#1d5fa8" stroke-width="1.8" stroke-linecap="round"/></svg>
`
const ETAG = `"${createHash('sha1').update(SVG).digest('base64url')}"`

/** The icon at /favicon.svg and /favicon.ico, null for any other path. */
export function favicon(request: Request, path: string): Response | null {
  if (path !== FAVICON_PATH && path !== '/favicon.ico') return null
  const headers = { 'Content-Type': 'image/svg+xml', 'Cache-Control': 'public, max-age=86400', ETag: ETAG }
  if (etagMatches(request.headers.get('if-none-match'), ETAG)) return new Response(null, { status: 304, headers })
  return new Response(request.method === 'HEAD' ? null : SVG, { headers })
}
