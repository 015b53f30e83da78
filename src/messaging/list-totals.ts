import type { Db } from '../db/client.js'
import { contactListWhere } from './contact-list.js'

/**
 * The total of a contact list, as the offset pages count it: without a search, the list's row in
 * "ListTotal" (kept by triggers, see contact-list.ts); with one, a COUNT of the matching contacts.
 */
export async function contactListTotal(db: Db, list: { accountId: string; groupId?: string; searchKey: string }): Promise<number> {
  if (!list.searchKey) {
    const row = await db.listTotal.findUnique({ where: { listId: list.groupId ?? list.accountId }, select: { total: true } })
    return row?.total ?? 0
  }
  return db.contact.count({ where: contactListWhere(list.accountId, { searchKey: list.searchKey }, list.groupId) })
}
