import { Response as FetchResponse } from '@whatwg-node/fetch'

/**
 * The Response class of the service's own answers (REST, errors, CORS preflights, idempotent
 * replays, cached channel answers): @whatwg-node/fetch's. Given a string body and a header
 * object, it keeps both, and the node adapter (@whatwg-node/server, src/process/http-listener.ts)
 * writes them with one writeHead and one write. Node's own Response (undici) wraps every body in
 * a ReadableStream that the adapter then reads back chunk by chunk: a fifth of a REST page's CPU
 * (docs/performance.md, "Answers the adapter writes directly"). Both are WHATWG Responses to
 * the code that reads them (status, headers, text(), json()).
 *
 * Header names of a plain-object init are lower-cased here: that class keeps the object as given
 * and lists its names as spelled, where a Headers object lists them lower-cased (the idempotency
 * layer and the tests compare names), and node then sends them as they were before.
 */
export const AnswerResponse: typeof globalThis.Response = class AnswerResponse extends FetchResponse {
  constructor(body?: BodyInit | null, init?: ResponseInit) {
    const headers = init?.headers
    super(
      body,
      headers && Object.getPrototypeOf(headers) === Object.prototype
        ? { ...init, headers: lowerCased(headers as Record<string, string>) }
        : init,
    )
  }
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  const lower: Record<string, string> = {}
  for (const name in headers) lower[name.toLowerCase()] = headers[name]!
  return lower
}
