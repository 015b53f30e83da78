// The ids of one page of a search of 3 characters or more in cursor order (GraphQL
// contactsConnection, an account's contacts or a group's members). Asked through Prisma (the
// filter, the cursor bound, ORDER BY and LIMIT), PostgreSQL walks the name index expecting matches
// spread evenly; they cluster when the term is part of a name (every Wanjiru sorts together at the
// end), and at a million contacts the first 51 matches of "wanj" cost a walk of 950,000 rows (1.7 s);
// a group that holds none of the account's Wanjirus is walked whole (2.8 s for 100,000 members).
// Reading every match first, as the offset pages do, is as wrong the other way: a term in every
// contact's mobile ("254") would read the whole account for 51 rows. So the page is found in two
// tries, both bounded:
// 1. the walk (the account's contacts, or the group's members by their own sort keys), for at most
//    PROBE_ROWS rows past the cursor, stopping at the page's last match: a dense term, or one whose
//    matches come early, ends here;
// 2. otherwise the matches through the search index (pg_trgm, FTS5 trigram), a group's checked for
//    membership, the cursor bound applied to them, sorted, the first `take` kept.
// The rows are the same either way: the same LIKE and the same total order as findMany's.
// A page found by the second try is remembered with the search's total (remembered-searches.ts):
// the same page again costs one statement that checks the matches are unchanged since its count.
// After a change an account's page read forward follows it (its window: the page and
// WINDOW_MARGIN matches after it, past its cursor if it has one), as an offset page does; a page
// read backward, up to a `before:` cursor, or of a group's search, is found again in full.
import { Prisma } from '../generated/sqlite/client.js'
import type { Deps } from '../deps.js'
import {
  changeMark,
  followPage,
  rememberedPage,
  rememberPage,
  stillFresh,
  WINDOW_MARGIN,
  type SearchWindow,
} from './remembered-searches.js'
import { matchingContacts } from './contact-list.js'
import { readDirect } from '../db/read-direct.js'
import { keysetBound, listSource } from './contact-sql.js'
import { rowCount } from '../db/row-count.js'

/**
 * How many contacts past the cursor the walk reads before the search index takes over. PostgreSQL
 * stops the walk at the page's last match; SQLite evaluates the whole walk for its row numbers
 * (about 1.5 ms a 1,000 rows), so it walks less.
 */
const PROBE_ROWS = { postgresql: 2_000, sqlite: 500 } as const

export interface SearchPageRequest {
  accountId: string
  /** Only the group's members; the caller has checked the group is the account's. */
  groupId?: string
  /** Lower-cased, wildcards swapped (pageRequest), 3 characters or more. */
  searchKey: string
  /** The cursor's sort keys (firstNameKey, familyNameKey, id): rows strictly past it in the reading direction. */
  from: readonly string[] | null
  /** The other cursor, when both are given: rows strictly before it in the reading direction. */
  until: readonly string[] | null
  /** Reading towards the start of the list (last/before). */
  backward: boolean
  take: number
}

export async function searchPageIds(
  deps: Pick<Deps, 'db' | 'dbKind' | 'directRead'>,
  page: SearchPageRequest,
  { probe = PROBE_ROWS[deps.dbKind] }: { probe?: number } = {},
): Promise<string[]> {
  const { db, dbKind: kind } = deps
  const read = readDirect(deps)
  const { accountId, groupId } = page
  const remembered = {
    accountId,
    ...(groupId ? { groupId } : {}),
    searchKey: page.searchKey,
    page: `cursor:${JSON.stringify([page.backward, page.from, page.until, page.take])}`,
  }
  const known = rememberedPage(db, remembered)
  if (known) {
    if (await stillFresh(read, kind, remembered, known.mark)) return known.ids
    // A page read forward follows the changes in its window: the first as an offset page, one from
    // a cursor as the matches past it.
    const next = await followPage(read, { db, kind }, remembered, known, { skip: 0, take: page.take })
    if (next) return next.ids
  }
  const direction = Prisma.raw(page.backward ? 'DESC' : 'ASC')
  // The cursors' bound and the order: on the matches' sort keys, and on the walk's (a group's
  // members carry their contacts' sort keys, migration membership_sort_keys).
  const andBound = (conditions: Prisma.Sql[]) => Prisma.join([Prisma.sql`1 = 1`, ...conditions], ' AND ')
  const matches = keysetBound(['"firstNameKey"', '"familyNameKey"', '"id"'], page)
  const [bound, order] = [andBound(matches.conditions), matches.order]
  const walk = listSource(kind, page)
  const walkKeyset = keysetBound(walk.keyNames, page)
  const like = `%${page.searchKey}%`
  // The walk's matches in order, and its probe-th row (whatever it is) to tell a walk cut short
  // from one that reached the end of the list. It stops as soon as take + 1 of those are found.
  const walked = await read(
    Prisma.sql`SELECT r."id", r."hit", r."n" FROM (SELECT w.*, ROW_NUMBER() OVER (${order}) AS "n" FROM (
        SELECT c."id", ${Prisma.raw(walk.keyNames[0])} AS "firstNameKey", ${Prisma.raw(walk.keyNames[1])} AS "familyNameKey",
          CASE WHEN c."searchText" LIKE ${like} THEN 1 ELSE 0 END AS "hit"
        FROM ${walk.source} AND ${andBound(walkKeyset.conditions)} ${walkKeyset.order} LIMIT ${rowCount(kind, probe)}) w) r
      WHERE r."hit" = 1 OR r."n" = ${probe} ${order} LIMIT ${rowCount(kind, page.take + 1)}`,
  )
  const hits = walked.filter((row) => Number(row.hit) === 1).map((row) => row.id as string)
  if (hits.length >= page.take || !walked.some((row) => Number(row.n) === probe)) return hits.slice(0, page.take)
  const matching = matchingContacts(kind, { accountId, groupId, searchKey: page.searchKey, candidatesFirst: true })
  // With the matches' total and what the count saw (the mark), so that the page can be remembered.
  // An account's page read forward is read with the matches after it: its window, to follow
  // changes with (a group's changes are not followed).
  const forward = !page.until && !page.backward && !groupId
  const found = await read(
    Prisma.sql`WITH matched AS MATERIALIZED (${matching})
      SELECT t."total", t."mark", p."id", p."firstNameKey", p."familyNameKey" FROM (SELECT COUNT(*) AS "total", ${changeMark(kind, { accountId, groupId })} AS "mark" FROM matched) t
      LEFT JOIN (SELECT "id", "firstNameKey", "familyNameKey" FROM matched WHERE ${bound} ${order} LIMIT ${rowCount(kind, page.take + (forward ? WINDOW_MARGIN : 0))}) p ON 1 = 1
      ORDER BY p."firstNameKey" ${direction}, p."familyNameKey" ${direction}, p."id" ${direction}`,
  )
  const entries = found
    .filter((row) => row.id !== null && row.id !== undefined)
    .map((row) => ({ id: row.id as string, key1: row.firstNameKey as string, key2: row.familyNameKey as string }))
  const ids = entries.slice(0, page.take).map((entry) => entry.id)
  const [key1, key2, id] = page.from ?? []
  const window: SearchWindow | undefined = !forward
    ? undefined
    : page.from
      ? { start: 0, entries, after: { key1: key1!, key2: key2!, id: id! }, toEnd: entries.length < page.take + WINDOW_MARGIN }
      : { start: 0, entries }
  rememberPage(db, remembered, Number(found[0]?.total ?? 0), found[0]?.mark, ids, window)
  return ids
}
