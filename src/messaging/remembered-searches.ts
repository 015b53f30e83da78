// An account's search remembered between requests (issue 19: a substring search in a million
// contacts, the exact total included, in 25 ms). Counting 50,000 matches and finding the first 25
// of them in name order reads all 50,000 rows (60 to 300 ms), whatever the page. So when a search
// of an account's contacts finds 1,000 or more, this process remembers its total, the ids of the
// pages it served, and a mark of what the count saw. The same page again is one statement: the 25
// contacts by id (their columns read fresh), and, in the same snapshot, whether anything that could
// change the matches has happened since the mark. If something has, the search runs in full. The
// Relay connection's totalCount (searchTotal in contact-list.ts) shares the remembered total: the
// check alone, or a count that it remembers for the pages too. The answer is the one a full search
// would give either way; a write from any process or instance (they share the database) makes the
// next search run in full.
//
// Under an unchanged mark the matches are the same contacts with the same search text, so the same
// sort keys (derived from the names, which are in the search text): each page holds the same ids.
//
// The mark:
// - SQLite: the account's "changes" in "ListTotal", a counter the triggers raise on every insert
//   and delete of a contact and every change of its search text (migration search_totals).
// - PostgreSQL: the count's snapshot (pg_current_snapshot()). Every transaction that inserts,
//   deletes or changes the search text of an account's contacts leaves a row with its transaction
//   id in "ContactChange"; nothing changed if no such row is visible now that the snapshot did not
//   see. Rows are only inserted, so writers never wait for each other there.
import type { Db } from '../db/client.js'
import type { DatabaseKind } from '../db/connection-url.js'
import type { Deps } from '../deps.js'
import { Prisma } from '../generated/sqlite/client.js'
import { oncePerInterval } from '../core/once-per-interval.js'

/** Searches with fewer matches run in full every time: the search index makes that a few milliseconds. */
export const REMEMBERED_TOTAL_MIN = 1_000
/**
 * A search is trusted for at most this long after its count. On PostgreSQL the change rows are kept
 * an hour (purgeContactChanges), so a transaction that writes contacts for more than 55 minutes
 * could outlive its row; the service's own transactions end within 2 minutes.
 */
const REMEMBERED_MAX_AGE_MS = 5 * 60_000
/** At most this many searches a database handle (the oldest go first), each with at most this many pages. */
const MAX_SEARCHES = 1_000
const MAX_PAGES = 8

export interface RememberedSearch {
  total: number
  /** What the count saw: SQLite's change counter, PostgreSQL's snapshot (text). */
  mark: string
  /** performance.now() of the count. */
  at: number
  /** The ids of each page served, by its key (SearchPage.page). */
  pages: Map<string, string[]>
}

/** Which search: an account's contacts, with a term. */
export interface SearchOf {
  accountId: string
  searchKey: string
}

export interface SearchPage extends SearchOf {
  /** Which page: `${skip}:${perPage}` for an offset page, the cursors, direction and size for the Relay connection's. */
  page: string
}

// Per database handle: a process that opens two databases (the tests) keeps them apart.
const remembered = new WeakMap<Db, Map<string, RememberedSearch>>()
const keyOf = (search: SearchOf) => `${search.accountId}\n${search.searchKey}`

/** The remembered total and ids of this page of an account's search, if young enough to be checked. */
export function rememberedPage(db: Db, page: SearchPage, now = performance.now()) {
  const search = remembered.get(db)?.get(keyOf(page))
  if (!search || now - search.at >= REMEMBERED_MAX_AGE_MS) return undefined
  const ids = search.pages.get(page.page)
  return ids && { total: search.total, mark: search.mark, ids }
}

/**
 * Keeps a page of a search just run in full: its total, its ids and `mark` (the statement's column).
 * A page counted under the same mark joins the search's other pages; a new mark starts over. A total
 * below REMEMBERED_TOTAL_MIN forgets the search.
 */
export function rememberPage(db: Db, page: SearchPage, total: number, mark: unknown, ids: string[], now = performance.now()) {
  const search = rememberedSearch(db, page, total, mark, now)
  if (!search) return
  if (search.pages.size >= MAX_PAGES) search.pages.delete(search.pages.keys().next().value!)
  search.pages.set(page.page, ids)
}

/** The remembered total of an account's search (whichever pages were read), if young enough to be checked. */
export function rememberedTotal(db: Db, search: SearchOf, now = performance.now()) {
  const known = remembered.get(db)?.get(keyOf(search))
  return known && now - known.at < REMEMBERED_MAX_AGE_MS ? { total: known.total, mark: known.mark } : undefined
}

/** Keeps the total of a search counted in full without a page (the Relay connection's totalCount), as rememberPage does. */
export function rememberTotal(db: Db, search: SearchOf, total: number, mark: unknown, now = performance.now()) {
  rememberedSearch(db, search, total, mark, now)
}

/** The search's entry under `mark`: the one there if counted under the same mark, else a new one. */
function rememberedSearch(db: Db, search: SearchOf, total: number, mark: unknown, now: number) {
  let searches = remembered.get(db)
  const key = keyOf(search)
  if (total < REMEMBERED_TOTAL_MIN || mark === null || mark === undefined) {
    searches?.delete(key)
    return undefined
  }
  if (!searches) remembered.set(db, (searches = new Map()))
  let entry = searches.get(key)
  if (!entry || entry.mark !== String(mark)) {
    entry = { total, mark: String(mark), at: now, pages: new Map() }
    searches.delete(key)
    if (searches.size >= MAX_SEARCHES) searches.delete(searches.keys().next().value!)
    searches.set(key, entry)
  }
  return entry
}

/** Forgets an account's search (its mark is out of date). */
export function forgetSearch(db: Db, search: SearchOf) {
  remembered.get(db)?.delete(keyOf(search))
}

/** The column (named "mark" by the caller) that says which changes a count saw. */
export function changeMark(kind: DatabaseKind, accountId: string): Prisma.Sql {
  return kind === 'sqlite'
    ? Prisma.sql`(SELECT "changes" FROM "ListTotal" WHERE "listId" = ${accountId})`
    : Prisma.sql`CAST(pg_current_snapshot() AS text)`
}

/** True when nothing that could change the account's matches has happened since `mark`. */
function unchangedSince(kind: DatabaseKind, accountId: string, mark: string): Prisma.Sql {
  if (kind === 'sqlite') return Prisma.sql`${changeMark(kind, accountId)} = ${Number(mark)}`
  // Rows of transactions older than the snapshot's xmin were visible to it: only the later ones
  // (a range of the primary key) are checked against it.
  return Prisma.sql`NOT EXISTS (SELECT 1 FROM "ContactChange" WHERE "accountId" = ${accountId}
      AND "txid" >= pg_snapshot_xmin(CAST(${mark} AS pg_snapshot)) AND NOT pg_visible_in_snapshot("txid", CAST(${mark} AS pg_snapshot)))`
}

/** One row, "fresh": 1 when nothing that could change the account's matches has happened since `mark`. */
export const freshSince = (kind: DatabaseKind, accountId: string, mark: string): Prisma.Sql =>
  Prisma.sql`SELECT CASE WHEN ${unchangedSince(kind, accountId, mark)} THEN 1 ELSE 0 END AS "fresh"`

/** True when nothing has changed the search's matches since `mark` (one statement); else forgets the search. */
export async function stillFresh(
  read: (statement: Prisma.Sql) => Promise<Record<string, unknown>[]>,
  { db, kind }: { db: Db; kind: DatabaseKind },
  search: SearchOf,
  mark: string,
): Promise<boolean> {
  const [row] = await read(freshSince(kind, search.accountId, mark))
  if (Number(row?.fresh) === 1) return true
  forgetSearch(db, search)
  return false
}

const purgeDue = oncePerInterval()
/** Change rows are kept this long, well past REMEMBERED_MAX_AGE_MS. */
const CONTACT_CHANGE_RETENTION_SECONDS = 3600

/**
 * PostgreSQL: deletes the contact change rows older than an hour, at most once per `minIntervalMs`
 * (a worker tick calls it every second). Returns how many went; SQLite keeps none.
 */
export async function purgeContactChanges(
  { db, dbKind, clock }: Pick<Deps, 'db' | 'dbKind' | 'clock'>,
  { minIntervalMs = 60_000 }: { minIntervalMs?: number } = {},
): Promise<number> {
  if (dbKind !== 'postgresql') return 0
  if (!purgeDue(db, clock.now().getTime(), minIntervalMs)) return 0
  // The database's clock, the one that wrote "at" (a test clock may be pinned anywhere).
  return db.$executeRaw`DELETE FROM "ContactChange" WHERE "at" < now() - make_interval(secs => ${CONTACT_CHANGE_RETENTION_SECONDS})`
}
