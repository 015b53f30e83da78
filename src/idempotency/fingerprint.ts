import { createHash } from 'node:crypto'

/**
 * What makes two requests "the same": method, path with query string, and the body bytes as sent.
 * Bytes, not parsed JSON: a client retrying replays the same bytes, and comparing bytes cannot
 * mistake two different requests for one. A multipart body is the exception: its boundary is
 * chosen anew for each request, so with `contentType` naming one, the boundary is taken out first.
 */
export function requestFingerprint(method: string, pathAndQuery: string, body: Uint8Array, contentType?: string | null): string {
  // Method and path cannot contain a newline, so the separators keep the parts apart.
  return createHash('sha256').update(`${method.toUpperCase()}\n${pathAndQuery}\n`).update(withoutBoundary(body, contentType)).digest('hex')
}

function withoutBoundary(body: Uint8Array, contentType: string | null | undefined): Uint8Array {
  const boundary = /^multipart\/[^;]*;.*\bboundary="?([^";]+)"?/i.exec(contentType ?? '')?.[1]
  if (!boundary) return body
  const parts: Buffer[] = []
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  const needle = Buffer.from(boundary)
  let from = 0
  for (let at = bytes.indexOf(needle); at >= 0; at = bytes.indexOf(needle, from)) {
    parts.push(bytes.subarray(from, at), MARK)
    from = at + needle.length
  }
  parts.push(bytes.subarray(from))
  return Buffer.concat(parts)
}

const MARK = Buffer.from('\0boundary\0')
