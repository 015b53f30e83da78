import { createHash, timingSafeEqual } from 'node:crypto'
import { bearerToken } from '../auth/api-keys.js'
import type { Deps } from '../deps.js'
import { AppError } from '../core/errors.js'
import { errorResponse } from '../../rest-compat/router.js'
import type { Metrics } from './create-metrics.js'
import { registerDatabaseGauges } from './database-gauges.js'
import { registerGatewayGauges } from './gateway-gauges.js'

const digest = (value: string) => createHash('sha256').update(value).digest()

/**
 * GET /metrics in the Prometheus text format. With METRICS_TOKEN set, scrapers must send it as a
 * Bearer token (compared in constant time); the route is absent when METRICS_ENABLED is false.
 */
export function metricsEndpoint(metrics: Metrics, deps: Pick<Deps, 'db' | 'clock' | 'logger' | 'env' | 'gateway'>) {
  registerDatabaseGauges(metrics, deps)
  registerGatewayGauges(metrics, deps)
  const expected = deps.env.METRICS_TOKEN === undefined ? null : digest(deps.env.METRICS_TOKEN)

  return async function scrape(request: Request, requestId: string): Promise<Response> {
    if (expected) {
      const token = bearerToken(request.headers.get('authorization'))
      if (!token || !timingSafeEqual(digest(token), expected)) {
        return errorResponse(new AppError('UNAUTHENTICATED', 'A valid metrics token is required'), 'messaging', requestId)
      }
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return errorResponse(new AppError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on /metrics`), 'messaging', requestId, {
        Allow: 'GET, HEAD',
      })
    }
    const body = await metrics.registry.metrics()
    return new Response(request.method === 'HEAD' ? null : body, { status: 200, headers: { 'Content-Type': metrics.registry.contentType } })
  }
}
