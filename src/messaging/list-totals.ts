import type { Deps } from '../deps.js'
import { searchTotal } from './contact-list.js'

/**
 * The total of a contact list, as the offset pages count it: without a search, the list's row in
 * "ListTotal" (kept by triggers, see contact-list.ts); with one, a COUNT of the matching contacts,
 * remembered as the search's pages are (searchTotal, remembered-searches.ts).
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
  return (await searchTotal(deps, list)).total
}
