import cron from 'node-cron'
import { hostname } from 'node:os'
import type { Deps } from '../deps.js'
import { applyDueCarrierEvents } from '../sms/carrier-events.js'
import { sweepSubmissions } from '../sms/submit-sms.js'
import { resumeBulkSends } from '../sms/send-sms-to-group.js'
import { createDispatcher, dispatchDueDeliveries, type Dispatcher } from '../webhooks/dispatcher.js'
import { purgeExpiredIdempotencyRecords } from '../idempotency/purge-expired.js'
import { purgeContactChanges } from '../messaging/remembered-searches.js'
import { inWorkerTick } from '../core/tracing.js'
import { purgeExpiredAuditEvents } from '../audit/purge-audit.js'
import { purgeUnmatchedReceipts } from '../sms/smpp/smpp-receipts.js'

/**
 * One pass of background work: bulk sends left unfinished, SMS submissions left over (crash, gateway outage, deadline), then
 * due carrier events (both enqueue webhooks), then webhooks. With the worker's `dispatcher` the
 * webhooks are only claimed and started (they finish on their own); without one (tests, tools) the
 * tick waits until every due delivery has been attempted.
 */
export async function runWorkerTick(deps: Deps, owner: string, dispatcher?: Dispatcher) {
  // Bulk sends whose request died hand their remaining recipients over first; the sweep submits what they leave.
  const bulkSends = await resumeBulkSends(deps, owner)
  const submissions = await sweepSubmissions(deps, owner)
  const events = await applyDueCarrierEvents(deps, owner)
  // A connector's own leftovers (SMPP receipts that arrived before their submit_sm_resp was recorded).
  const gateway = (await deps.gateway.sweep?.()) ?? 0
  const deliveries = dispatcher ? { started: await dispatcher.pump() } : await dispatchDueDeliveries(deps, { owner })
  const idempotencyPurged = await purgeExpiredIdempotencyRecords(deps)
  const contactChangesPurged = await purgeContactChanges(deps)
  const auditPurged = await purgeExpiredAuditEvents(deps)
  // SMPP receipts that never found their part (their submit_sm's answer was lost), past a week.
  const receiptsPurged = await purgeUnmatchedReceipts(deps)
  return { bulkSends, submissions, events, gateway, deliveries, idempotencyPurged, contactChangesPurged, auditPurged, receiptsPurged }
}

/** The cron loop: every second, never two ticks of this process at once. */
export function startWorker(deps: Deps) {
  const owner = `${hostname()}:${process.pid}`
  // The continuous dispatcher on both databases: a slow receiver holds only its endpoint's slots
  // and never the tick (docs/sms.md, "Fair dispatch").
  const dispatcher = createDispatcher(deps, { owner })
  const task = cron.schedule(
    '* * * * * *',
    async () => {
      try {
        // Traced only when it does something (docs/operations.md "Traces"): an idle tick exports nothing.
        const r = await inWorkerTick(
          () => runWorkerTick(deps, owner, dispatcher),
          (r) =>
            Boolean(
              r.submissions.claimed ||
              r.events ||
              ('started' in r.deliveries ? r.deliveries.started : r.deliveries.claimed) ||
              r.idempotencyPurged ||
              r.contactChangesPurged,
            ),
        )
        if (r.submissions.claimed || r.events || ('started' in r.deliveries ? r.deliveries.started : r.deliveries.claimed))
          deps.logger.debug(r, 'worker tick')
      } catch (error) {
        deps.logger.error({ err: error }, 'worker tick failed')
      }
    },
    {
      noOverlap: true,
      name: 'worker',
      // node-cron's own messages (a tick missed while the event loop was blocked, an overlap) go
      // into the JSON log through pino, not as coloured text on the console.
      logger: {
        info: (message) => deps.logger.info({ component: 'node-cron' }, message),
        warn: (message) => deps.logger.warn({ component: 'node-cron' }, message),
        error: (message, err) =>
          deps.logger.error({ component: 'node-cron', err: err ?? message }, typeof message === 'string' ? message : message.message),
        debug: (message, err) =>
          deps.logger.debug({ component: 'node-cron', err: err ?? undefined }, typeof message === 'string' ? message : message.message),
      },
    },
  )
  return {
    /** Stops the loop; resolves once the webhook POSTs in flight are recorded. */
    stop: () => {
      task.stop()
      return dispatcher?.stop() ?? Promise.resolve()
    },
  }
}
