import { createHash } from 'node:crypto'

/**
 * What makes two requests "the same": method, path with query string, and the body bytes as sent.
 * Bytes, not parsed JSON: a client retrying replays the same bytes, and comparing bytes cannot
 * mistake two different requests for one.
 */
export function requestFingerprint(method: string, pathAndQuery: string, body: Uint8Array): string {
  // Method and path cannot contain a newline, so the separators keep the parts apart.
  return createHash('sha256').update(`${method.toUpperCase()}\n${pathAndQuery}\n`).update(body).digest('hex')
}
