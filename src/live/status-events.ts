import type { Deps } from '../deps.js'
import { notifySelect } from '../events/event-bus.js'
import { publishQuietly, TOPIC, type StatusEvent } from './topics.js'

/**
 * Publish-after-commit for status changes. applyStatusChange runs inside its caller's transaction
 * and appends what it applied to a list the caller owns (`changes`); the caller publishes the list
 * once its `$transaction` has resolved, i.e. committed. A rolled-back transaction throws before
 * that line, so nothing is published for it. One mechanism for both databases (no NOTIFY inside
 * the transaction): the event bus is at most once in any case, and a crash between commit and
 * publish costs one live update, never a wrong one, since subscribers read the report itself.
 */
export function statusChanges(): StatusEvent[] {
  return []
}

type PublishDeps = Partial<Pick<Deps, 'events' | 'logger' | 'directRead'>>

export async function publishStatusChanges(deps: PublishDeps, changes: StatusEvent[]): Promise<void> {
  const events = changes.splice(0)
  if (!events.length) return
  if (deps.events?.notification && deps.directRead) return notifyInTurn(deps, events)
  for (const change of events) await publishQuietly(deps, TOPIC.smsStatus, change)
}

interface Notifying {
  events: StatusEvent[]
  done: Promise<void>
}
/** The changes published in this event-loop turn, by bus: one statement at the next `setImmediate`. */
const notifyingOf = new WeakMap<object, Notifying>()

/**
 * PostgreSQL: the changes published in one event-loop turn (the SENT and receipts of one batch)
 * as one direct statement of pg_notify calls (EventBus.notification), delivered here once it ran,
 * where each change was a publish of its own through Prisma's runtime: a round trip and its CPU
 * each (docs/sms.md "Speed"). At most once as before: a failed statement is logged, not retried.
 */
function notifyInTurn(deps: PublishDeps, events: StatusEvent[]): Promise<void> {
  const bus = deps.events!
  let notifying = notifyingOf.get(bus)
  if (!notifying) {
    const started: Notifying = { events: [], done: Promise.resolve() }
    notifying = started
    notifyingOf.set(bus, started)
    started.done = new Promise<void>((resolve) =>
      setImmediate(() => {
        if (notifyingOf.get(bus) === started) notifyingOf.delete(bus)
        void notifyNow(deps, started.events).finally(resolve)
      }),
    )
  }
  notifying.events.push(...events)
  return notifying.done
}

async function notifyNow(deps: PublishDeps, events: StatusEvent[]) {
  const bus = deps.events!
  try {
    const notifications = events.map((event) => bus.notification!(TOPIC.smsStatus, event))
    const rows = await deps.directRead!(notifySelect(notifications))
    if (!rows) {
      // Traces on (directRead declines): through the bus's own publish.
      for (const event of events) await publishQuietly(deps, TOPIC.smsStatus, event)
      return
    }
    for (const n of notifications) n.deliverLocally()
  } catch (error) {
    deps.logger?.warn({ err: error, topic: TOPIC.smsStatus }, 'live event not published')
  }
}
