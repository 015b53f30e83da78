import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServerAdapter } from '@whatwg-node/server'
import type { App } from './app.js'
import type { Deps } from './deps.js'

/** The node:http listener: microcache hits are answered here, everything else goes to app.fetch. */
export function createListener(app: App, { clock, logger }: Pick<Deps, 'clock' | 'logger'>) {
  const adapter = createServerAdapter(app.fetch)
  return (req: IncomingMessage, res: ServerResponse) => {
    if (app.microcache.enabled) {
      const started = performance.now()
      const requestId = randomUUID()
      if (app.microcache.replay(req, res, clock.now(), requestId)) {
        logger.info({ requestId, method: req.method, path: req.url, status: res.statusCode, ms: Math.round(performance.now() - started), cached: true }, 'request')
        return
      }
    }
    void adapter(req, res)
  }
}
