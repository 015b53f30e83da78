import { restRoutes } from '../../rest-compat/routes.js'

const REST_PREFIX = '/api'
const FIXED = new Set(['/graphql', '/healthz', '/readyz', '/metrics'])

/** The REST table's paths as patterns, the most specific first (as the router orders them). */
const patterns = restRoutes
  .map((route) => {
    const source = route.path
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/')
    const params = route.path.split('/').filter((s) => s.startsWith(':')).length
    const specificity = route.path.split('/').filter((s) => s && !s.startsWith(':')).length * 10 - params
    return { method: route.method, template: REST_PREFIX + route.path, pattern: new RegExp(`^${source}/?$`), specificity }
  })
  .sort((a, b) => b.specificity - a.specificity)

/**
 * The label for a request path: a REST route's pattern (`/api/contact/:id`), one of the fixed
 * endpoints, or `other`. Raw paths carry ids, so labelling by them would grow the series without bound.
 */
export function routeTemplate(method: string, pathname: string): string {
  if (FIXED.has(pathname)) return pathname
  if (!pathname.startsWith(`${REST_PREFIX}/`)) return 'other'
  const path = pathname.slice(REST_PREFIX.length)
  let first: string | undefined
  for (const p of patterns) {
    if (!p.pattern.test(path)) continue
    if (p.method === method || (method === 'HEAD' && p.method === 'GET')) return p.template
    first ??= p.template
  }
  return first ?? 'other'
}
