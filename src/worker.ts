import cron from 'node-cron'
import { hostname } from 'node:os'
import type { Deps } from './deps.js'
import { applyDueCarrierEvents } from './sms/carrier-events.js'
import { sweepSubmissions } from './sms/submit-sms.js'
import { dispatchDueDeliveries } from './webhooks/dispatcher.js'

/**
 * One pass of background work: SMS submissions left over (crash, gateway outage, deadline), then
 * due carrier events (both enqueue webhooks), then webhooks.
 */
export async function runWorkerTick(deps: Deps, owner: string) {
  const submissions = await sweepSubmissions(deps, owner)
  const events = await applyDueCarrierEvents(deps, owner)
  const deliveries = await dispatchDueDeliveries(deps, { owner })
  return { submissions, events, deliveries }
}

/** The cron loop: every second, never two ticks of this process at once. */
export function startWorker(deps: Deps) {
  const owner = `${hostname()}:${process.pid}`
  const task = cron.schedule(
    '* * * * * *',
    async () => {
      try {
        const r = await runWorkerTick(deps, owner)
        if (r.submissions.claimed || r.events || r.deliveries.claimed) deps.logger.debug(r, 'worker tick')
      } catch (error) {
        deps.logger.error({ err: error }, 'worker tick failed')
      }
    },
    { noOverlap: true, name: 'worker' },
  )
  return { stop: () => task.stop() }
}
