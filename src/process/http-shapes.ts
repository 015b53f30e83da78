// Settles the size of node's request and response objects before the server takes a request;
// src/process/server.ts imports this module third, after next-tick-shape.ts.
import { IncomingMessage, ServerResponse } from 'node:http'

/** More than the seven V8 counts from. */
const SETTLED = 8

/**
 * V8 sizes the objects a constructor makes from the first seven it makes (in-object slack
 * tracking): at the seventh it keeps as many in-object fields as the objects made so far use,
 * counted along the hidden classes (maps) they went through, and every later object gets that many.
 * Those maps are held weakly. When full collections run between the first responses, each dead
 * before the next (a load balancer's readiness probes one at a time while the start-up allocates),
 * they free the maps, V8 counts no field used, and every later request and response has no
 * in-object field at all. A response has 44 properties; node adds its 25th with a keyed store
 * (`this[kNeedDrain]`), and V8 turns an object with more than 12 properties outside it into a
 * dictionary on a keyed store: every response of the process is then a dictionary object, each of
 * its property reads and writes a hash lookup (docs/performance.md, "Responses made in dictionary
 * mode"). It happened in three of four probed runs of the shared harness, and never to a service
 * whose first requests came together.
 *
 * Here the first eight of each are made at once and stay alive until the eighth is made, with the
 * properties node's server gives each response before its handler runs and writeHead adds, so the
 * count is made on a full set of maps and later objects keep their fields in-object (43 of a
 * response's 44; the last, node's kUniqueHeaders, has no public name). Nothing of them is kept.
 */
function settle() {
  // Holds every one of them until the last is made.
  const made: object[] = []
  for (let i = 0; i < SETTLED; i++) {
    const req = new IncomingMessage(null as never)
    const res = new ServerResponse(req)
    // As node's server sets them (_http_server.js parserOnIncoming), then writeHead.
    ;(res as unknown as { _maxRequestsPerSocket: number })._maxRequestsPerSocket = 0
    res.statusMessage = 'OK'
    res.statusCode = 200
    made.push(req, res)
  }
}

settle()
