import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { AppError } from '../../core/errors.js'
import type { Metrics } from '../../metrics/create-metrics.js'
import { errorResponse } from '../../../rest-compat/router.js'
import type { Stage } from '../pipeline.js'

/**
 * The outermost stage: the request id (a sane X-Request-Id is kept, else a new one), the answer to
 * anything a later stage throws, and the request's metric and log line.
 */
export function observeStage({ logger, metrics }: { logger: Logger; metrics: Pick<Metrics, 'observeRequest'> }): Stage {
  return async function observe(door, next) {
    const started = performance.now()
    const { request, url } = door
    const incoming = request.headers.get('x-request-id')
    const requestId = incoming && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : randomUUID()
    door.requestId = requestId
    let response: Response
    try {
      response = await next(door)
    } catch (error) {
      // A client that hangs up mid-request (its body stream aborts) is not a fault of ours:
      // logged at info, and counted as the client's 400, not as a 500.
      if (request.signal.aborted) {
        logger.info({ requestId, reason: String(error) }, 'client went away')
        response = errorResponse(new AppError('BAD_REQUEST', 'The client closed the request before it was read'), 'messaging', requestId)
      } else {
        logger.error({ err: error, requestId }, 'unhandled error')
        response = errorResponse(new AppError('INTERNAL', 'Internal server error'), 'messaging', requestId)
      }
    }
    response.headers.set('X-Request-Id', requestId)
    metrics.observeRequest(request.method, url.pathname, response.status, (performance.now() - started) / 1000)
    logger.info(
      { requestId, method: request.method, path: url.pathname, status: response.status, ms: Math.round(performance.now() - started) },
      'request',
    )
    return response
  }
}
