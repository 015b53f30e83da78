import { httpStatusOf, type AppError } from '../core/errors.js'
import { errorResponse, json } from '../../rest-compat/router.js'

/**
 * A refusal of the idempotency layer itself, in the shape of the API asked: REST's
 * `{"error","code"}`, or a GraphQL result with the code in `errors[].extensions.code`. Both carry
 * the contract's HTTP status (400, 409, 413, 422), so a client can tell "retry later" (409) from
 * "fix the request" without reading the body.
 */
export function layerErrorResponse(error: AppError, api: 'rest' | 'graphql', requestId: string): Response {
  if (api === 'rest') return errorResponse(error, 'messaging', requestId)
  const headers: Record<string, string> = error.code === 'SERVICE_UNAVAILABLE' ? { 'Retry-After': '1' } : {}
  return json({ errors: [{ message: error.message, extensions: { code: error.code } }] }, httpStatusOf[error.code], headers)
}
