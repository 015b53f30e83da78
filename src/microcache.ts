import type { IncomingMessage, ServerResponse } from 'node:http'

export interface CachedResponse {
  status: number
  headers: Record<string, string>
  body: string
  etag: string
}

/**
 * Answers of public read-only routes that depend only on their URL and the current second (the
 * channel API), kept for the rest of that second and at most `ttlMs`. The router fills it; the
 * HTTP listener replays hits before the fetch adapter, which is where most of a request's cost is
 * (bench/now-playing.ts).
 */
export class Microcache {
  private readonly entries = new Map<string, CachedResponse & { at: number; full: Record<string, string>; bare: Record<string, string> }>()

  constructor(private readonly ttlMs: number) {}

  get enabled() {
    return this.ttlMs > 0
  }

  key(pathAndQuery: string, now: Date) {
    return `${pathAndQuery}|${Math.floor(now.getTime() / 1000)}`
  }

  get(key: string) {
    const hit = this.entries.get(key)
    if (!hit) return undefined
    if (Date.now() - hit.at >= this.ttlMs) {
      this.entries.delete(key)
      return undefined
    }
    return hit
  }

  set(key: string, response: CachedResponse) {
    if (!this.enabled) return
    if (this.entries.size > 10_000) this.entries.clear()
    // Header sets for 200 and 304 are built once, not per replay.
    const bare = { ...response.headers, ETag: response.etag }
    const full = { ...bare, 'Content-Type': 'application/json; charset=utf-8' }
    this.entries.set(key, { ...response, at: Date.now(), full, bare })
  }

  /** Writes a hit straight to a node response; false when there is none. */
  replay(req: IncomingMessage, res: ServerResponse, now: Date, requestId: string): boolean {
    if (!this.enabled || (req.method !== 'GET' && req.method !== 'HEAD') || !req.url?.startsWith('/api/')) return false
    const hit = this.get(this.key(req.url, now))
    if (!hit) return false
    const notModified = etagMatches(req.headers['if-none-match'], hit.etag)
    res.setHeader('X-Request-Id', requestId)
    res.writeHead(notModified ? 304 : hit.status, notModified ? hit.bare : hit.full)
    res.end(notModified || req.method === 'HEAD' ? undefined : hit.body)
    return true
  }
}

export function etagMatches(header: string | null | undefined, etag: string): boolean {
  if (!header) return false
  return header.trim() === '*' || header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag)
}
