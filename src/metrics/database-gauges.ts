import { Counter, Gauge } from 'prom-client'
import type { Deps } from '../deps.js'
import { DELIVERY_STATUSES } from '../sms/delivery-status.js'
import type { Metrics } from './create-metrics.js'

/** Scrapes of several Prometheus servers (or instances of a dashboard) within this share one read. */
const CACHE_MS = 5000
const WEBHOOK_STATES = ['pending', 'delivered', 'failed']
const SUBMISSION_STATES = ['pending', 'submitted', 'refunded']

interface Snapshot {
  deliveries: Map<string, number>
  oldestPendingDelivery: Date | null
  messages: Map<string, number>
  submissions: Map<string, number>
  oldestPendingSubmission: Date | null
}

/**
 * Outbox and SMS state, read from the database when Prometheus scrapes, so no domain code has to
 * report it and every instance reports the same shared numbers. The outbox reads use the
 * (state, nextAttemptAt) indexes; messages by status is a grouped count over the message table.
 */
export function registerDatabaseGauges(metrics: Metrics, { db, clock, logger }: Pick<Deps, 'db' | 'clock' | 'logger'>) {
  let cached: { at: number; snapshot: Promise<Snapshot | null> } | null = null
  const failures = new Counter({
    name: 'gateway_metrics_database_errors_total',
    help: 'Scrapes whose outbox and SMS gauges could not be read from the database (they are left out)',
    registers: [metrics.registry],
  })

  async function read(): Promise<Snapshot> {
    const [deliveries, oldestDelivery, messages, submissions, oldestSubmission] = await Promise.all([
      db.webhookDelivery.groupBy({ by: ['state'], _count: { _all: true } }),
      db.webhookDelivery.aggregate({ where: { state: 'pending' }, _min: { createdAt: true } }),
      db.message.groupBy({ by: ['status'], _count: { _all: true } }),
      db.smsSubmission.groupBy({ by: ['state'], _count: { _all: true } }),
      db.smsSubmission.aggregate({ where: { state: 'pending' }, _min: { createdAt: true } }),
    ])
    return {
      deliveries: new Map(deliveries.map((r) => [r.state, r._count._all])),
      oldestPendingDelivery: oldestDelivery._min.createdAt,
      messages: new Map(messages.map((r) => [r.status, r._count._all])),
      submissions: new Map(submissions.map((r) => [r.state, r._count._all])),
      oldestPendingSubmission: oldestSubmission._min.createdAt,
    }
  }

  function snapshot(): Promise<Snapshot | null> {
    const now = performance.now()
    if (!cached || now - cached.at > CACHE_MS) {
      const pending = read().catch((err: unknown) => {
        failures.inc()
        logger.warn({ err }, 'metrics: outbox and SMS gauges could not be read')
        cached = null
        return null
      })
      cached = { at: now, snapshot: pending }
    }
    return cached.snapshot
  }

  const ageSeconds = (since: Date | null) => (since ? Math.max(0, (clock.now().getTime() - since.getTime()) / 1000) : 0)

  function byLabel(name: string, help: string, label: string, known: readonly string[], pick: (s: Snapshot) => Map<string, number>) {
    return new Gauge({
      name,
      help,
      labelNames: [label],
      registers: [metrics.registry],
      async collect() {
        this.reset()
        const s = await snapshot()
        if (!s) return
        const counts = pick(s)
        for (const value of new Set([...known, ...counts.keys()])) this.set({ [label]: value }, counts.get(value) ?? 0)
      },
    })
  }

  function single(name: string, help: string, value: (s: Snapshot) => number) {
    return new Gauge({
      name,
      help,
      registers: [metrics.registry],
      async collect() {
        this.reset()
        const s = await snapshot()
        if (s) this.set(value(s))
      },
    })
  }

  byLabel(
    'gateway_webhook_deliveries',
    'Webhook deliveries in the outbox by state (pending, delivered, failed)',
    'state',
    WEBHOOK_STATES,
    (s) => s.deliveries,
  )
  single('gateway_webhook_outbox_pending', 'Webhook deliveries waiting to be pushed', (s) => s.deliveries.get('pending') ?? 0)
  single('gateway_webhook_outbox_oldest_pending_age_seconds', 'Age of the oldest webhook delivery still pending (0 when none)', (s) =>
    ageSeconds(s.oldestPendingDelivery),
  )
  byLabel('gateway_sms_messages', 'SMS messages by delivery status', 'status', DELIVERY_STATUSES, (s) => s.messages)
  byLabel(
    'gateway_sms_submissions',
    'SMS submission outbox rows by state (pending, submitted, refunded)',
    'state',
    SUBMISSION_STATES,
    (s) => s.submissions,
  )
  single(
    'gateway_sms_submission_oldest_pending_age_seconds',
    'Age of the oldest SMS submission not yet handed to the gateway (0 when none)',
    (s) => ageSeconds(s.oldestPendingSubmission),
  )
}
