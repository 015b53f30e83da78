import { json } from '../../../rest-compat/router.js'
import type { Stage } from '../pipeline.js'

/** Load balancers probe with a short timeout of their own; answer well within it. */
const READY_TIMEOUT_MS = 900

export interface OpenRoutes {
  /** Readiness: database reachable and migrations applied. */
  ready: () => Promise<boolean>
  /** The SMS gateway's connection, shown on /readyz but not required (src/sms/gateway.ts). */
  gateway?: () => Record<string, unknown> | null
  /** GET /metrics, when METRICS_ENABLED (it checks METRICS_TOKEN itself). */
  metrics: ((request: Request, requestId: string) => Promise<Response> | Response) | null
  /** The pages: /, /api/openapi.json, /api/docs (src/web/); null for any other path. */
  pages: (request: Request, url: URL) => Response | null | undefined
  isConsolePath: (path: string) => boolean
  /** The account console's pages and sign-in (src/console/), with the client's address. */
  console: (request: Request, url: URL, address: string | undefined) => Promise<Response>
}

/**
 * What needs neither credentials nor budget: health, readiness, metrics, the pages and the
 * account console (which has its own sign-in checks and limits). Everything else goes on.
 */
export function openRoutesStage(routes: OpenRoutes): Stage {
  return async function openRoutes(door, next) {
    const { request, url } = door
    const path = url.pathname
    if (path === '/healthz') return json({ status: 'ok' }, 200)
    if (path === '/metrics' && routes.metrics) return routes.metrics(request, door.requestId)
    if (path === '/readyz') {
      // A hung database must not hang the probe: not ready after READY_TIMEOUT_MS.
      const ok = await Promise.race([
        routes.ready().catch(() => false),
        new Promise<false>((r) => setTimeout(r, READY_TIMEOUT_MS, false).unref()),
      ])
      // The SMS gateway's connection is shown, not required: unbound, messages wait as PENDING (docs/sms.md).
      const gateway = routes.gateway?.()
      return json({ status: ok ? 'ready' : 'not ready', ...(gateway ? { smsGateway: gateway } : {}) }, ok ? 200 : 503)
    }
    const page = routes.pages(request, url)
    if (page) return page
    if (routes.isConsolePath(path)) return routes.console(request, url, door.address.address ?? undefined)
    return next(door)
  }
}
