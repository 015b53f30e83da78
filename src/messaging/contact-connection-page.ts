// The rows of one page of the contacts Relay connection (GraphQL contactsConnection of an account
// or of a group) read directly, without Prisma's runtime, when the page's nodes select columns
// only (no relation: those keep Prisma's findMany and Pothos' loaders). Through Prisma a page costs
// its query compiled on every request (about 2 ms of the service's CPU on a slow machine, a fifth
// of such a request); here it is one statement of a fixed shape, prepared on PostgreSQL.
// The rows are findMany's: the same filter (the account's contacts, or the group's members, and a
// search's `searchText LIKE`), the cursors' bound as one row comparison on the sort keys (the
// same total order as findMany's column-by-column bound, under the same collation), the same order
// and LIMIT. A group's members carry their contacts' sort keys (migration membership_sort_keys),
// so a group's page walks its own index, as its offset pages do.
import { Prisma } from '../generated/sqlite/client.js'
import type { Deps } from '../deps.js'
import { jsonTexts } from '../db/json-texts.js'
import { listRow, readDirect, selectedColumns, type ContactListColumn } from './contact-list.js'
import type { SearchPageRequest } from './contact-search-page.js'
import { accountNotIndexed, membersWithContacts } from './contact-sql.js'

/** A page of an account's contacts or of a group's members: a search of any length ('' for none). */
export interface ConnectionPageRequest extends SearchPageRequest {
  /** Only the group's members; the caller has checked the group is the account's. */
  groupId?: string
}

/** The page's rows in the reading direction, with `columns` (dates as Date, as Prisma's). */
export async function connectionPageRows(
  deps: Pick<Deps, 'db' | 'dbKind' | 'directRead'>,
  page: ConnectionPageRequest,
  columns: readonly ContactListColumn[],
): Promise<Record<string, unknown>[]> {
  const direction = Prisma.raw(page.backward ? 'DESC' : 'ASC')
  const [key1, key2, id] = page.groupId
    ? ['m."firstNameKey"', 'm."familyNameKey"', 'm."contactId"']
    : ['c."firstNameKey"', 'c."familyNameKey"', 'c."id"']
  const keys = Prisma.raw(`(${key1}, ${key2}, ${id})`)
  const conditions = [
    ...(page.from ? [Prisma.sql`${keys} ${Prisma.raw(page.backward ? '<' : '>')} (${Prisma.join([...page.from])})`] : []),
    ...(page.until ? [Prisma.sql`${keys} ${Prisma.raw(page.backward ? '>' : '<')} (${Prisma.join([...page.until])})`] : []),
    ...(page.searchKey ? [Prisma.sql`c."searchText" LIKE ${`%${page.searchKey}%`}`] : []),
  ]
  const bound = conditions.length ? Prisma.sql`AND ${Prisma.join(conditions, ' AND ')}` : Prisma.empty
  const order = Prisma.sql`ORDER BY ${Prisma.raw(key1)} ${direction}, ${Prisma.raw(key2)} ${direction}, ${Prisma.raw(id)} ${direction}`
  const source = page.groupId
    ? membersWithContacts(deps.dbKind, page.groupId, page.accountId)
    : Prisma.sql`"Contact" c WHERE c."accountId" = ${page.accountId}`
  const rows = await readDirect(deps)(Prisma.sql`SELECT ${selectedColumns(columns)} FROM ${source} ${bound} ${order} LIMIT ${page.take}`)
  return rows.map((raw) => listRow(raw, columns))
}

/** The account's contacts of `ids`, with `columns`, in the order of `ids` (an id not found is left out). */
export async function contactsByIds(
  deps: Pick<Deps, 'db' | 'dbKind' | 'directRead'>,
  accountId: string,
  ids: readonly string[],
  columns: readonly ContactListColumn[],
): Promise<Record<string, unknown>[]> {
  if (!ids.length) return []
  // By primary key, not the account's index.
  const rows = await readDirect(deps)(
    Prisma.sql`SELECT ${selectedColumns(columns)} FROM "Contact" c WHERE c."id" IN (${jsonTexts(deps.dbKind, ids)}) AND ${accountNotIndexed(deps.dbKind)} = ${accountId}`,
  )
  const byId = new Map(rows.map((raw) => [raw.id as string, listRow(raw, columns)]))
  return ids.flatMap((id) => {
    const row = byId.get(id)
    return row ? [row] : []
  })
}
