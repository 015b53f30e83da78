import type { Deps } from '../deps.js'
import { normalizeMobile } from '../messaging/mobile.js'
import { isStorableText } from '../messaging/input-rules.js'
import { MAX_EVENT_CONTACT_IDS, publishQuietly, TOPIC, type MembershipEvent } from './topics.js'

type LiveDeps = Pick<Deps, 'db' | 'env' | 'clock' | 'events' | 'logger'>

/** Bounded IN lists (SQLite binds at most 32,766 values a statement). */
const CHUNK = 500

async function publish(deps: LiveDeps, event: Omit<MembershipEvent, 'at' | 'contactIds' | 'count'>, contactIds: string[]) {
  const full: MembershipEvent = { ...event, contactIds: contactIds.slice(0, MAX_EVENT_CONTACT_IDS), count: contactIds.length, at: deps.clock.now().toISOString() }
  await publishQuietly(deps, TOPIC.groupMembership, full)
}

/** Contact ids on `groupId` among the account's contacts with these mobile numbers. */
async function membersByMobile(deps: LiveDeps, accountId: string, groupId: string, mobiles: string[]): Promise<Set<string>> {
  const found = new Set<string>()
  if (!isStorableText(groupId)) return found
  for (let i = 0; i < mobiles.length; i += CHUNK) {
    const rows = await deps.db.membership.findMany({
      where: { groupId, contact: { accountId, mobile: { in: mobiles.slice(i, i + CHUNK) } } },
      select: { contactId: true },
    })
    for (const row of rows) found.add(row.contactId)
  }
  return found
}

/**
 * Runs a mutation that may delist contacts (named by mobile) from groups, then publishes
 * who actually joined and who left each group: the memberships are compared before and after,
 * so a contact already on a group is no JOIN. Nothing is published when `work` fails.
 */
export async function withMembershipChanges<T>(
  deps: LiveDeps,
  accountId: string,
  scope: { groupIds: readonly unknown[] | null | undefined; mobiles: readonly unknown[] },
  work: () => Promise<T>,
): Promise<T> {
  const groupIds = [...new Set((scope.groupIds ?? []).map(String))]
  const mobiles = [
    ...new Set(scope.mobiles.flatMap((m) => (typeof m === 'string' && m.length <= 64 && isStorableText(m) ? [normalizeMobile(m, deps.env.DEFAULT_COUNTRY)] : [])).filter((m): m is string => !!m)),
  ]
  if (!groupIds.length || !mobiles.length) return work()
  const before = new Map<string, Set<string>>()
  for (const groupId of groupIds) before.set(groupId, await membersByMobile(deps, accountId, groupId, mobiles))
  const result = await work()
  for (const groupId of groupIds) {
    const was = before.get(groupId)!
    const now = await membersByMobile(deps, accountId, groupId, mobiles)
    const joined = [...now].filter((id) => !was.has(id))
    const left = [...was].filter((id) => !now.has(id))
    if (joined.length) await publish(deps, { accountId, groupId, kind: 'join', via: 'api' }, joined)
    if (left.length) await publish(deps, { accountId, groupId, kind: 'leave', via: 'api' }, left)
  }
  return result
}

/** After a write that reports who joined each group itself (upsertContacts): one join event per group. */
export async function publishJoins(deps: LiveDeps, accountId: string, joined: Map<string, string[]>): Promise<void> {
  for (const [groupId, contactIds] of joined) if (contactIds.length) await publish(deps, { accountId, groupId, kind: 'join', via: 'api' }, contactIds)
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
