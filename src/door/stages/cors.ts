import type { createCorsPolicy } from '../../http/cors.js'
import type { Stage } from '../pipeline.js'

/**
 * CORS for /graphql (src/http/cors.ts): answers the preflight, and puts the policy's headers on
 * every other answer, refusals included (a browser can read its 429 or 503). The REST routes keep
 * their own (the channel API's `*`).
 */
export function corsStage(cors: ReturnType<typeof createCorsPolicy>): Stage {
  return async function corsHeaders(door, next) {
    if (door.url.pathname !== '/graphql') return next(door)
    if (door.request.method === 'OPTIONS') return cors.preflight(door.request)
    const response = await next(door)
    cors.apply(door.request, response)
    return response
  }
}
