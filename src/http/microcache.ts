import { IncomingMessage, ServerResponse, validateHeaderName, validateHeaderValue } from 'node:http'

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

/** Header lists in node's own form (see OUT_HEADERS): lower-cased name to [name, value]. */
type HeaderList = Record<string, [string, string]>

interface Entry extends CachedResponse {
  /** The path and query it answers (the same string object on every hit). */
  path: string
  second: number
  span: number
  at: number
  /**
   * The heads of a 200 and a 304, built and validated once per entry, in the order they are
   * written. `requestId` is the request id's slot in both: replay writes it just before
   * writeHead, which copies the head synchronously, so one list serves every hit.
   */
  full: HeaderList
  bare: HeaderList
  requestId: [string, string]
  /** The same heads as name-value pairs, for a response whose own list is taken (writeHead validates them). */
  fullPairs: string[]
  barePairs: string[]
}

/**
 * Where node keeps a response's headers set with setHeader: `{ lowercased: [name, value] }`. Given
 * that list, writeHead writes it without validating each name and value again (setHeader did), where
 * a list passed to writeHead is checked with two regular expressions per header: with the seven
 * headers of a replay, a tenth of its CPU (docs/performance.md, "Now playing, counted in
 * instructions"). A replay hands writeHead its entry's list, validated once when the entry is made.
 * The symbol is node's own (Node 20 and 22 name it so); when a release no longer does, OUT_HEADERS
 * is undefined and replays pass a flat list to writeHead as other responses do.
 */
export const OUT_HEADERS: symbol | undefined = (() => {
  const probe = new ServerResponse(new IncomingMessage(null as never))
  const symbol = Object.getOwnPropertySymbols(probe).find((s) => s.description === 'kOutHeaders')
  return symbol && (probe as unknown as Record<symbol, unknown>)[symbol] === null ? symbol : undefined
})()

/**
 * The headers whose names node's writeHead looks for (it lower-cases each name of 4 to 17
 * characters and compares it with these): they keep an entry of their own in a header list.
 */
const NODE_READS = new Set(['connection', 'content-length', 'transfer-encoding', 'date', 'expect', 'trailer', 'keep-alive'])

/**
 * A name-value list as node's header list, each pair validated as setHeader validates it. Throws
 * if one is not valid, or if a name comes twice (one list entry holds one value).
 *
 * writeHead writes an entry of the list as `name + ': ' + value + '\r\n'`, and then looks at the
 * name (NODE_READS). So each run of headers node does not look for is one entry: its first name,
 * and as value its first value followed by the others' lines, `\r\nName: value`, joined once here.
 * The bytes on the wire are the same; writeHead handles three entries a replay instead of eight or
 * nine (docs/performance.md, "A replay's head in three entries").
 */
function headerList(pairs: string[], requestId: [string, string]): HeaderList {
  const list: HeaderList = {}
  const seen = new Set([requestId[0].toLowerCase()])
  // The entries in order, each a name and the parts of its value (array join makes one flat string).
  const entries: [string, string, string[]][] = []
  let run: string[] | undefined
  for (let i = 0; i < pairs.length; i += 2) {
    const [name, value] = [pairs[i]!, pairs[i + 1]!]
    validateHeaderName(name)
    validateHeaderValue(name, value)
    const key = name.toLowerCase()
    if (seen.has(key)) throw new Error(`${name} twice`)
    seen.add(key)
    const own = NODE_READS.has(key)
    if (run && !own) {
      run.push(`\r\n${name}: ${value}`)
      continue
    }
    const parts = [value]
    entries.push([key, name, parts])
    run = own ? undefined : parts
  }
  for (const [key, name, parts] of entries) list[key] = [name, parts.join('')]
  list[requestId[0].toLowerCase()] = requestId
  return list
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
  /**
   * The entry found last. Requests come in runs of one path, so a lookup compares the URL with
   * this entry's path first: no hash of a new URL string, which a Map lookup computes each time.
   */
  private last: Entry | undefined

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
    const last = this.last
    const hit = last !== undefined && last.path === path ? last : this.entries.get(path)
    if (!hit || second < hit.second || second >= hit.second + hit.span) return undefined
    if (Date.now() - hit.at >= this.ttlMs * hit.span) {
      this.entries.delete(path)
      this.last = undefined
      return undefined
    }
    this.last = hit
    return hit
  }

  /** Forgets the answers kept longer than a second (the program guides): their channel changed. */
  dropLongLived() {
    this.last = undefined
    for (const [path, entry] of this.entries) if (entry.span > 1) this.entries.delete(path)
  }

  set(key: MicroKey, response: CachedResponse) {
    if (!this.enabled) return
    this.last = undefined
    if (this.entries.size > 10_000 && !this.entries.has(key.path)) this.entries.clear()
    const bare = [...Object.entries(response.headers).flat(), ...this.extra, 'ETag', response.etag]
    // JSON unless the route answered another type (the program guides): then its headers name it.
    const type = 'Content-Type' in response.headers ? [] : ['Content-Type', 'application/json; charset=utf-8']
    // A Content-Length lets node write head and body in one piece instead of chunked. It comes
    // first: the headers after it make one entry of the list (headerList).
    const full = ['Content-Length', String(Buffer.byteLength(response.body)), ...type, ...bare]
    const requestId: [string, string] = ['X-Request-Id', '']
    let lists: { full: HeaderList; bare: HeaderList }
    try {
      lists = { full: headerList(full, requestId), bare: headerList(bare, requestId) }
    } catch {
      return // a header node refuses is never replayed (writing the answer itself fails the same way)
    }
    const entry = {
      ...response,
      path: key.path,
      second: key.second,
      span: key.span,
      at: Date.now(),
      ...lists,
      requestId,
      fullPairs: full,
      barePairs: bare,
    }
    this.entries.set(key.path, entry)
  }

  /** The answer the listener may replay for this request, if any. `nowMs` is the clock's time. */
  hit(req: IncomingMessage, nowMs: number): Entry | undefined {
    if (!this.enabled || (req.method !== 'GET' && req.method !== 'HEAD') || !req.url?.startsWith('/api/')) return undefined
    return this.lookup(req.url, Math.floor(nowMs / 1000))
  }

  /**
   * Writes a hit straight to a node response: 304 when the client has it, no body for HEAD.
   * `requestId` must be a valid header value (the listener's ids and the client ids it accepts are).
   */
  replay(hit: Entry, req: IncomingMessage, res: ServerResponse, requestId: string) {
    const notModified = etagMatches(rawHeader(req, 'if-none-match'), hit.etag)
    const headers = notModified ? hit.bare : hit.full
    hit.requestId[1] = requestId
    const own = res as unknown as Record<symbol, HeaderList | null>
    if (OUT_HEADERS && own[OUT_HEADERS] === null) {
      own[OUT_HEADERS] = headers
      res.writeHead(notModified ? 304 : hit.status)
    } else {
      res.writeHead(notModified ? 304 : hit.status, [...(notModified ? hit.barePairs : hit.fullPairs), 'X-Request-Id', requestId])
    }
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
