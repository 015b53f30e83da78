// The contacts Relay connection (GraphQL contactsConnection of an account or of a group) read
// directly, without Prisma's runtime: a page whose nodes select columns only (no relation: those
// keep Prisma's findMany and Pothos' loaders), and for every page the pageInfo flag facing away
// from the reading direction (hasPreviousPage after `after`). Through Prisma each costs its query
// compiled on every request (about 2 ms of the service's CPU on a slow machine for a page, 1.5 ms
// for the flag's findFirst); here each is one statement of a fixed shape, prepared on PostgreSQL.
// The rows are findMany's: the same filter (the account's contacts, or the group's members, and a
// search's `searchText LIKE`), the cursors' bound as one row comparison on the sort keys (the
// same total order as findMany's column-by-column bound, under the same collation), the same order
// and LIMIT. A group's members carry their contacts' sort keys (migration membership_sort_keys),
// so a group's page walks its own index, as its offset pages do.
import { Prisma } from '../generated/sqlite/client.js'
import type { Deps } from '../deps.js'
import { jsonTexts } from '../db/json-texts.js'
import { rowCount } from '../db/row-count.js'
import { listRow, selectedColumns, type ContactListColumn } from './contact-list.js'
import { readDirect } from '../db/read-direct.js'
import type { SearchPageRequest } from './contact-search-page.js'
import { accountNotIndexed, keysetBound, listSource } from './contact-sql.js'

/** The list's source and sort keys: the account's contacts, or the group's members (their own sort keys). */
function listSql(deps: Pick<Deps, 'dbKind'>, list: { accountId: string; groupId?: string; searchKey: string }) {
  const { source, keyNames } = listSource(deps.dbKind, list)
  const search = list.searchKey ? [Prisma.sql`c."searchText" LIKE ${`%${list.searchKey}%`}`] : []
  return { keyNames, keys: Prisma.raw(`(${keyNames.join(', ')})`), source, search }
}

/** `AND` each condition, after the source's own WHERE (nothing when there is none). */
const andAll = (conditions: Prisma.Sql[]) => (conditions.length ? Prisma.sql`AND ${Prisma.join(conditions, ' AND ')}` : Prisma.empty)

/**
 * The page's rows in the reading direction, with `columns` (dates as Date, as Prisma's). The page
 * of an account's contacts or of a group's members; here its search may be of any length ('' for none).
 */
export async function connectionPageRows(
  deps: Pick<Deps, 'db' | 'dbKind' | 'directRead'>,
  page: SearchPageRequest,
  columns: readonly ContactListColumn[],
): Promise<Record<string, unknown>[]> {
  const { keyNames, source, search } = listSql(deps, page)
  const { conditions, order } = keysetBound(keyNames, page)
  const bound = andAll([...conditions, ...search])
  const rows = await readDirect(deps)(
    Prisma.sql`SELECT ${selectedColumns(columns)} FROM ${source} ${bound} ${order} LIMIT ${rowCount(deps.dbKind, page.take)}`,
  )
  return rows.map((raw) => listRow(raw, columns))
}

/**
 * Whether the list holds a row at or behind `start`, the cursor a page is read from: at or before
 * `after` when reading forward (the connection's hasPreviousPage), at or after `before` when
 * reading backward (hasNextPage). findFirst's answer over the same filter, in one statement of a
 * fixed shape instead of a query Prisma compiles on every request.
 */
export async function rowAtOrBehind(
  deps: Pick<Deps, 'db' | 'dbKind' | 'directRead'>,
  list: { accountId: string; groupId?: string; searchKey: string },
  start: readonly string[],
  backward: boolean,
): Promise<boolean> {
  const { keys, source, search } = listSql(deps, list)
  const bound = andAll([Prisma.sql`${keys} ${Prisma.raw(backward ? '>=' : '<=')} (${Prisma.join([...start])})`, ...search])
  return (await readDirect(deps)(Prisma.sql`SELECT 1 AS "found" FROM ${source} ${bound} LIMIT 1`)).length > 0
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
