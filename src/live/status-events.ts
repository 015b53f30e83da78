import type { Deps } from '../deps.js'
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

export async function publishStatusChanges(deps: Partial<Pick<Deps, 'events' | 'logger'>>, changes: StatusEvent[]): Promise<void> {
  for (const change of changes.splice(0)) await publishQuietly(deps, TOPIC.smsStatus, change)
}
