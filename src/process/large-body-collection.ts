// A full garbage collection after the answer to a large request body (docs/operations.md, "Memory").
import type { IncomingMessage, ServerResponse } from 'node:http'
import v8 from 'node:v8'
import { runInNewContext } from 'node:vm'
import { rawHeader } from '../http/microcache.js'

/** A declared body at least this large is followed by a full collection (an add-contacts of about 650 contacts). */
export const LARGE_BODY_BYTES = 64 * 1024

/**
 * What a request with a large body leaves in V8's old generation: its body, parsed, mapped and
 * coerced, lives through the request and is promoted out of the 4 MiB young generation, and so is
 * what each statement's chunk keeps across a few scavenges. After a full collection V8 lets the old
 * generation grow by at least 8 MB over the live heap, plus the young generation's capacity (a
 * fixed minimum step, whatever `--heap-growing-percent` says), before the next one; so a large
 * request that came after another reached that limit mid-request, with the other's garbage and its
 * own in the heap: about 62 MB committed against 50 under the page load, the add-contacts phase's
 * peak RSS on SQLite (docs/performance.md, "A full collection after a large body").
 *
 * Collected once the answer is written ('finish'), in the check phase after it: the client has its
 * answer, and the next request starts from the live heap. A full collection of this heap takes a
 * few milliseconds (10 to 20 under load), against the hundreds of milliseconds that a body this size
 * costs. Answers finished in one turn share one collection. Chunked bodies (no Content-Length) are
 * not counted; the clients that send large bodies declare them. The server uses it on SQLite only
 * (src/process/serve-http.ts): PostgreSQL's page cache is the server's, so its add-contacts phase
 * is under the goal without it, and its add-contacts time (issue 56, goal 3) would pay for it.
 */
export function largeBodyCollection(collect?: () => void): (req: IncomingMessage, res: ServerResponse) => void {
  let scheduled = false
  const run = () => {
    scheduled = false
    collect ??= fullCollection()
    collect()
  }
  const finished = () => {
    if (scheduled) return
    scheduled = true
    setImmediate(run)
  }
  return (req, res) => {
    if (req.method === 'GET' || req.method === 'HEAD') return
    const length = rawHeader(req, 'content-length')
    if (length === undefined || !(Number(length) >= LARGE_BODY_BYTES)) return
    res.once('finish', finished)
  }
}

/**
 * V8's `gc`, taken from a context made while `--expose-gc` is on and turned off again: the
 * service's own global gets no `gc`, and only that one context (about 200 KB) is kept. Made on the
 * first large body, so a process that never gets one never makes it.
 */
function fullCollection(): () => void {
  v8.setFlagsFromString('--expose-gc')
  try {
    return runInNewContext('gc') as () => void
  } finally {
    v8.setFlagsFromString('--no-expose-gc')
  }
}
