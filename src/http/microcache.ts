import type { IncomingMessage, ServerResponse } from 'node:http'

export interface CachedResponse {
  status: number
  headers: Record<string, string>
  body: string
  etag: string
}

/** Where an answer is kept: its path and query, the second it starts at and how many seconds it serves. */
export interface MicroKey {
  path: string
  second: number
  span: number
}

interface Entry extends CachedResponse {
  second: number
  span: number
  at: number
  /**
   * Flat header lists for writeHead (200 and 304), built once per entry. The last value is the
   * request id's slot: replay writes it just before writeHead, which copies the list into the
   * response head synchronously, so one list serves every hit.
   */
  full: string[]
  bare: string[]
}

/**
 * Answers of public read-only routes that depend only on their URL and the current second (the
 * channel API), kept for the rest of that second and at most `ttlMs`. The router fills it; the
 * HTTP listener replays hits before the fetch adapter, which is where most of a request's cost is
 * (bench/now-playing.ts). One entry per path: the next second's answer replaces the last one.
 */
export class Microcache {
  private readonly entries = new Map<string, Entry>()
  /** Name-value pairs every replay carries as well (X-Worker in a cluster, src/process/http-listener.ts). */
  private extra: string[] = []

  constructor(private readonly ttlMs: number) {}

  /** Headers added to every entry set from now on; the listener sets them before serving. */
  addHeaders(pairs: string[]) {
    this.extra = [...this.extra, ...pairs]
  }

  get enabled() {
    return this.ttlMs > 0
  }

  /** `span` seconds (default 1) share one answer: the spans start at multiples of `span` in the clock's time. */
  key(pathAndQuery: string, now: Date, span = 1): MicroKey {
    return { path: pathAndQuery, second: Math.floor(now.getTime() / 1000 / span) * span, span }
  }

  get(key: MicroKey) {
    return this.lookup(key.path, key.second)
  }

  private lookup(path: string, second: number) {
    const hit = this.entries.get(path)
    if (!hit || second < hit.second || second >= hit.second + hit.span) return undefined
    if (Date.now() - hit.at >= this.ttlMs * hit.span) {
      this.entries.delete(path)
      return undefined
    }
    return hit
  }

  /** Forgets the answers kept longer than a second (the program guides): their channel changed. */
  dropLongLived() {
    for (const [path, entry] of this.entries) if (entry.span > 1) this.entries.delete(path)
  }

  set(key: MicroKey, response: CachedResponse) {
    if (!this.enabled) return
    if (this.entries.size > 10_000 && !this.entries.has(key.path)) this.entries.clear()
    const headers = Object.entries(response.headers).flat()
    const bare = [...headers, ...this.extra, 'ETag', response.etag, 'X-Request-Id', '']
    // JSON unless the route answered another type (the program guides): then its headers name it.
    const type = 'Content-Type' in response.headers ? [] : ['Content-Type', 'application/json; charset=utf-8']
    // A Content-Length lets node write head and body in one piece instead of chunked.
    const full = [...type, 'Content-Length', String(Buffer.byteLength(response.body)), ...bare]
    this.entries.set(key.path, { ...response, second: key.second, span: key.span, at: Date.now(), full, bare })
  }

  /** The answer the listener may replay for this request, if any. `nowMs` is the clock's time. */
  hit(req: IncomingMessage, nowMs: number): Entry | undefined {
    if (!this.enabled || (req.method !== 'GET' && req.method !== 'HEAD') || !req.url?.startsWith('/api/')) return undefined
    return this.lookup(req.url, Math.floor(nowMs / 1000))
  }

  /** Writes a hit straight to a node response: 304 when the client has it, no body for HEAD. */
  replay(hit: Entry, req: IncomingMessage, res: ServerResponse, requestId: string) {
    const notModified = etagMatches(rawHeader(req, 'if-none-match'), hit.etag)
    const headers = notModified ? hit.bare : hit.full
    headers[headers.length - 1] = requestId
    res.writeHead(notModified ? 304 : hit.status, headers)
    res.end(notModified || req.method === 'HEAD' ? undefined : hit.body)
  }
}

/**
 * One request header read from rawHeaders: `req.headers` is built on first use, an object and a
 * lower-cased name per header, which is a good part of a replay's cost. First occurrence wins.
 */
export function rawHeader(req: IncomingMessage, lowerName: string): string | undefined {
  const raw = req.rawHeaders
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!
    if (name.length === lowerName.length && name.toLowerCase() === lowerName) return raw[i + 1]
  }
  return undefined
}

export function etagMatches(header: string | null | undefined, etag: string): boolean {
  if (!header) return false
  return header.trim() === '*' || header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag)
}
