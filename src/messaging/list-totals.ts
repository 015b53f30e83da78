import type { Deps } from '../deps.js'
import { contactListWhere, searchTotal } from './contact-list.js'

/**
 * The total of a contact list, as the offset pages count it: without a search, the list's row in
 * "ListTotal" (kept by triggers, see contact-list.ts); with one, a COUNT of the matching contacts,
 * remembered for an account's search as its pages are (searchTotal, remembered-searches.ts).
 */
export async function contactListTotal(
  deps: Pick<Deps, 'db' | 'dbKind' | 'directRead'>,
  list: { accountId: string; groupId?: string; searchKey: string },
): Promise<number> {
  const { db } = deps
  if (!list.searchKey) {
    const row = await db.listTotal.findUnique({ where: { listId: list.groupId ?? list.accountId }, select: { total: true } })
    return row?.total ?? 0
  }
  if (!list.groupId) return (await searchTotal(deps, { accountId: list.accountId, searchKey: list.searchKey })).total
  return db.contact.count({ where: contactListWhere(list.accountId, { searchKey: list.searchKey }, list.groupId) })
}
