import { AppError, httpStatusOf } from '../../errors.js'
import { graphqlLimits } from './limits.js'
import { readBodyBytes } from '../../http/read-body.js'

/**
 * Bounds what /graphql reads before Yoga sees it: a POST body over `bodyLimitBytes` (by its
 * Content-Length, or while streaming when there is none) is PAYLOAD_TOO_LARGE; a GET query string
 * over the limit is BAD_REQUEST. Returns the request itself when its Content-Length is within the
 * limit (node's parser never delivers more than the declared length, and copying a Request costs a
 * twentieth of a small query's CPU), else a copy whose body was read into memory under the limit.
 */
export async function readGraphqlRequest(request: Request, url: URL, bodyLimitBytes: number): Promise<Request> {
  if (url.search.length > graphqlLimits.maxQueryStringLength) {
    throw new AppError('BAD_REQUEST', `The query string is longer than ${graphqlLimits.maxQueryStringLength} characters`)
  }
  if (!request.body) return request
  const declared = request.headers.get('content-length')
  if (declared !== null && /^\d{1,15}$/.test(declared) && Number(declared) <= bodyLimitBytes) return request
  const body = await readBodyBytes(request, bodyLimitBytes)
  return new Request(request.url, { method: request.method, headers: request.headers, body })
}

/** A refusal at the /graphql door, in the GraphQL response shape with the contract's status. */
export function graphqlRefusal(error: AppError): Response {
  return new Response(JSON.stringify({ errors: [{ message: error.message, extensions: { code: error.code } }] }), {
    status: httpStatusOf[error.code],
    headers: { 'Content-Type': 'application/graphql-response+json; charset=utf-8' },
  })
}
