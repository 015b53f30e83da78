import type { Deps } from '../deps.js'
import { isStorableText } from '../messaging/input-rules.js'
import { MAX_EVENT_CONTACT_IDS, publishQuietly, TOPIC, type MembershipEvent } from './topics.js'

type LiveDeps = Pick<Deps, 'db' | 'env' | 'clock' | 'events' | 'logger'>

async function publish(deps: LiveDeps, event: Omit<MembershipEvent, 'at' | 'contactIds' | 'count'>, contactIds: string[]) {
  const full: MembershipEvent = {
    ...event,
    contactIds: contactIds.slice(0, MAX_EVENT_CONTACT_IDS),
    count: contactIds.length,
    at: deps.clock.now().toISOString(),
  }
  await publishQuietly(deps, TOPIC.groupMembership, full)
}

/** After a write that reports who joined each group itself (upsertContacts): one join event per group. */
export async function publishJoins(deps: LiveDeps, accountId: string, joined: Map<string, string[]>): Promise<void> {
  for (const [groupId, contactIds] of joined)
    if (contactIds.length) await publish(deps, { accountId, groupId, kind: 'join', via: 'api' }, contactIds)
}

/** After delistContacts, which reports who left: one leave event, if anyone did. */
export async function publishLeaves(deps: LiveDeps, accountId: string, groupId: string, contactIds: string[]): Promise<void> {
  if (contactIds.length) await publish(deps, { accountId, groupId, kind: 'leave', via: 'api' }, contactIds)
}

/** deleteContact: the contact leaves every group it was on. */
export async function withContactRemoval<T>(deps: LiveDeps, accountId: string, contactId: string, work: () => Promise<T>): Promise<T> {
  const groups = isStorableText(contactId)
    ? await deps.db.membership.findMany({ where: { contactId, contact: { accountId } }, select: { groupId: true } })
    : []
  const result = await work()
  for (const { groupId } of groups) await publish(deps, { accountId, groupId, kind: 'leave', via: 'api' }, [contactId])
  return result
}

/** deleteGroup: its subscribers get GROUP_DELETED and their streams end. */
export async function publishGroupDeleted(deps: LiveDeps, accountId: string, groupId: string): Promise<void> {
  await publish(deps, { accountId, groupId, kind: 'deleted', via: 'api' }, [])
}
