// An account's search remembered between requests (issue 19: a substring search in a million
// contacts, the exact total included, in 25 ms). Counting 50,000 matches and finding the first 25
// of them in name order reads all 50,000 rows (60 to 300 ms), whatever the page. So when a search
// of an account's contacts finds 1,000 or more, this process remembers its total, the pages it
// served and a mark of what the count saw. The same page again is one statement: the 25 contacts by
// id (their columns read fresh), and, in the same snapshot, whether anything that could change the
// matches has happened since the mark. The Relay connection's totalCount (searchTotal in
// contact-list.ts) shares the remembered total.
//
// After a change the search follows it instead of running again (followChanges): the account's
// contact edits since the mark ("ContactEdit", written by triggers: migration contact_edits) say,
// for each contact written, whether it matched then and where it sorted; its row now says the rest.
// The total moves by the matches gained less the matches lost. An offset page is remembered with
// the matches around it (its window: up to WINDOW_MARGIN on each side, and where the window starts
// in the list), so the page is found again among them: the window's matches not written since,
// the written contacts that match now and sort inside it, and the start moved by the matches gained
// and lost before it. One statement, in one snapshot, with a new mark. After more than
// FOLLOW_MAX_EDITS contact writes, or when the page has moved out of its window (more removed
// before or inside it than the margin holds), the search runs in full. A write from any process or
// instance (they share the database) is followed alike.
//
// Under an unchanged mark the matches are the same contacts with the same search text and sort keys
// (the triggers log a change of either): each page holds the same ids in the same order.
//
// A group's search is remembered the same way, under a mark that also covers the group's members
// (migration group_search_marks): a page again is one statement while neither the account's
// contacts nor the group's members have changed. After a change of either it runs in full: a
// group's changes are not followed.
//
// The mark:
// - SQLite: the account's "changes" in "ListTotal", a counter the triggers raise on every insert
//   and delete of a contact and every change of its search text, sort keys or account; each edit
//   row holds the counter's value after it.
// - PostgreSQL: the count's snapshot (pg_current_snapshot()). Each edit row holds its transaction
//   id; the edits since the mark are the rows visible now that the snapshot did not see. Rows are
//   only inserted, so writers never wait for each other there.
// - A group's search, SQLite: the account's counter and the group's (raised by every insert and
//   delete of a membership), as "account:group". PostgreSQL: the same snapshot; the group's members
//   are unchanged while the transaction id its "ListTotal" row holds (the last to insert or delete
//   members) is one the snapshot saw.
import type { Db } from '../db/client.js'
import type { DatabaseKind } from '../db/connection-url.js'
import type { Deps } from '../deps.js'
import { Prisma } from '../generated/sqlite/client.js'
import { oncePerInterval } from '../core/once-per-interval.js'
import { jsonTexts } from '../db/json-texts.js'
import { rowCount } from '../db/row-count.js'
import type { Read } from '../db/read-direct.js'
import { accountNotIndexed } from './contact-sql.js'

/** Searches with fewer matches run in full every time: the search index makes that a few milliseconds. */
export const REMEMBERED_TOTAL_MIN = 1_000
/**
 * A search is trusted for at most this long after its count or the last change it followed. Edit
 * rows are kept an hour (purgeContactChanges), so a transaction that writes contacts for more than
 * 55 minutes could outlive its rows; the service's own transactions end within 2 minutes.
 */
const REMEMBERED_MAX_AGE_MS = 5 * 60_000
/** At most this many searches a database handle (the oldest go first), each with at most this many pages. */
const MAX_SEARCHES = 1_000
const MAX_PAGES = 8
/** Matches remembered on each side of an offset page, so that it can be found again after a change. */
export const WINDOW_MARGIN = 25
/** More contact writes (edit rows) since the mark than this, and the search runs in full again. */
export const FOLLOW_MAX_EDITS = 2_000

/** A match: its id and sort keys (firstNameKey, familyNameKey). */
export interface WindowEntry {
  id: string
  key1: string
  key2: string
}

/** Consecutive matches of a search in list order, `entries[0]` at position `start` (0-based) of the list. */
export interface SearchWindow {
  start: number
  entries: WindowEntry[]
  /**
   * A cursor page's window instead (the Relay connection's `after:`): the cursor's sort keys;
   * `entries` are the first matches past it in list order (`start` unused), all of them when `toEnd`.
   */
  after?: WindowEntry
  toEnd?: boolean
}

/** A search's total and what its count saw: SQLite's change counter, PostgreSQL's snapshot (text). */
export interface SearchCount {
  total: number
  mark: string
}

export interface RememberedPage extends SearchCount {
  /** The page's ids in order. */
  ids: string[]
  /** The page's neighbourhood, when it was read with one (an offset page, a Relay page read forward): what followChanges moves. */
  window?: SearchWindow
  /** performance.now() of the count, or of the last change followed. */
  at: number
}

interface RememberedSearch extends SearchCount {
  at: number
  /** Each page served, by its key (SearchPage.page), with the count it was read under. */
  pages: Map<string, RememberedPage>
}

/** Which list: an account's contacts, or a group's members (of that account). */
export interface ListOf {
  accountId: string
  groupId?: string
}

/** Which search: an account's contacts or a group's, with a term. */
export interface SearchOf extends ListOf {
  searchKey: string
}

export interface SearchPage extends SearchOf {
  /** Which page: `${skip}:${perPage}` for an offset page, the cursors, direction and size for the Relay connection's. */
  page: string
}

// Per database handle: a process that opens two databases (the tests) keeps them apart.
const remembered = new WeakMap<Db, Map<string, RememberedSearch>>()
const keyOf = (search: SearchOf) => `${search.accountId}\n${search.groupId ?? ''}\n${search.searchKey}`

/** The remembered page of a search, if young enough to be checked. */
export function rememberedPage(db: Db, page: SearchPage, now = performance.now()): RememberedPage | undefined {
  const found = remembered.get(db)?.get(keyOf(page))?.pages.get(page.page)
  return found && now - found.at < REMEMBERED_MAX_AGE_MS ? found : undefined
}

/**
 * Keeps a page of a search, counted under `mark` (the statement's column) or followed to it: its
 * ids and its window, if it has one. The search's total becomes this one. A total below
 * REMEMBERED_TOTAL_MIN forgets the search.
 */
export function rememberPage(
  db: Db,
  page: SearchPage,
  total: number,
  mark: unknown,
  ids: string[],
  window?: SearchWindow,
  now = performance.now(),
) {
  const search = rememberedSearch(db, page, total, mark, now)
  if (!search) return
  search.pages.delete(page.page)
  if (search.pages.size >= MAX_PAGES) search.pages.delete(search.pages.keys().next().value!)
  search.pages.set(page.page, { total, mark: search.mark, ids, ...(window ? { window } : {}), at: now })
}

/** Forgets one page of a search (it could not be followed). */
export function forgetPage(db: Db, page: SearchPage) {
  remembered.get(db)?.get(keyOf(page))?.pages.delete(page.page)
}

/** The remembered total of a search (the latest counted or followed), if young enough to be checked. */
export function rememberedTotal(db: Db, search: SearchOf, now = performance.now()): SearchCount | undefined {
  const known = remembered.get(db)?.get(keyOf(search))
  return known && now - known.at < REMEMBERED_MAX_AGE_MS ? { total: known.total, mark: known.mark } : undefined
}

/** Keeps the total of a search counted in full without a page (the Relay connection's totalCount), or followed to `mark`. */
export function rememberTotal(db: Db, search: SearchOf, total: number, mark: unknown, now = performance.now()) {
  rememberedSearch(db, search, total, mark, now)
}

/** The search's entry, its total and mark now these (each page keeps its own); none below REMEMBERED_TOTAL_MIN. */
function rememberedSearch(db: Db, search: SearchOf, total: number, mark: unknown, now: number) {
  let searches = remembered.get(db)
  const key = keyOf(search)
  if (total < REMEMBERED_TOTAL_MIN || mark === null || mark === undefined) {
    searches?.delete(key)
    return undefined
  }
  if (!searches) remembered.set(db, (searches = new Map()))
  let entry = searches.get(key)
  if (entry) {
    searches.delete(key)
    Object.assign(entry, { total, mark: String(mark), at: now })
  } else {
    entry = { total, mark: String(mark), at: now, pages: new Map() }
    if (searches.size >= MAX_SEARCHES) searches.delete(searches.keys().next().value!)
  }
  searches.set(key, entry)
  return entry
}

/** SQLite: a list's change counter. */
const changesOf = (listId: string) => Prisma.sql`(SELECT "changes" FROM "ListTotal" WHERE "listId" = ${listId})`

/** The column (named "mark" by the caller) that says which changes a count saw. */
export function changeMark(kind: DatabaseKind, { accountId, groupId }: ListOf): Prisma.Sql {
  if (kind !== 'sqlite') return Prisma.sql`CAST(pg_current_snapshot() AS text)`
  return groupId ? Prisma.sql`${changesOf(accountId)} || ':' || ${changesOf(groupId)}` : changesOf(accountId)
}

/** True when nothing that could change the list's matches has happened since `mark`. */
function unchangedSince(kind: DatabaseKind, list: ListOf, mark: string): Prisma.Sql {
  if (kind === 'sqlite') return Prisma.sql`${changeMark(kind, list)} = ${list.groupId ? mark : Number(mark)}`
  const snapshot = Prisma.sql`CAST(${mark} AS pg_snapshot)`
  // Rows of transactions older than the snapshot's xmin were visible to it: only the later ones
  // (a range of the index) are checked against it.
  const contacts = Prisma.sql`NOT EXISTS (SELECT 1 FROM "ContactEdit" WHERE "accountId" = ${list.accountId}
      AND "txid" >= pg_snapshot_xmin(${snapshot}) AND NOT pg_visible_in_snapshot("txid", ${snapshot}))`
  if (!list.groupId) return contacts
  // No id: no member inserted or deleted since the migration. No row: the group is gone.
  return Prisma.sql`${contacts} AND EXISTS (SELECT 1 FROM "ListTotal" WHERE "listId" = ${list.groupId}
      AND ("txid" IS NULL OR pg_visible_in_snapshot("txid", ${snapshot})))`
}

/** One row, "fresh": 1 when nothing that could change the list's matches has happened since `mark`. */
export const freshSince = (kind: DatabaseKind, list: ListOf, mark: string): Prisma.Sql =>
  Prisma.sql`SELECT CASE WHEN ${unchangedSince(kind, list, mark)} THEN 1 ELSE 0 END AS "fresh"`

/** True when nothing has changed the search's matches since `mark` (one statement). */
export async function stillFresh(read: Read, kind: DatabaseKind, search: SearchOf, mark: string): Promise<boolean> {
  const [row] = await read(freshSince(kind, search, mark))
  return Number(row?.fresh) === 1
}

/**
 * The account's contact edits since `mark`, at most FOLLOW_MAX_EDITS + 1 of them (the index's
 * range, so a big import since costs no more than that to find out), as "e"; and "ch", each contact
 * among them once, with its search text and sort keys before its first write since the mark.
 */
function editsSince(kind: DatabaseKind, accountId: string, mark: string): Prisma.Sql {
  if (kind === 'sqlite')
    // With one MIN(), SQLite takes the other columns from the row that has it.
    return Prisma.sql`e AS (SELECT "contactId", "change", "oldText", "oldKey1", "oldKey2" FROM "ContactEdit"
        WHERE "accountId" = ${accountId} AND "change" > ${Number(mark)} ORDER BY "change" LIMIT ${rowCount(kind, FOLLOW_MAX_EDITS + 1)}),
      ch AS (SELECT "contactId", MIN("change") AS "first", "oldText", "oldKey1", "oldKey2" FROM e GROUP BY "contactId")`
  return Prisma.sql`e AS (SELECT "contactId", "seq", "oldText", "oldKey1", "oldKey2" FROM "ContactEdit"
        WHERE "accountId" = ${accountId} AND "txid" >= pg_snapshot_xmin(CAST(${mark} AS pg_snapshot))
          AND NOT pg_visible_in_snapshot("txid", CAST(${mark} AS pg_snapshot)) LIMIT ${FOLLOW_MAX_EDITS + 1}),
      ch AS (SELECT DISTINCT ON ("contactId") "contactId", "oldText", "oldKey1", "oldKey2" FROM e ORDER BY "contactId", "seq")`
}

/**
 * Brings a remembered count (and an offset page's window) up to date in one statement: the total
 * and window of the search now, with the new mark; undefined when it cannot (too many contact
 * writes, an edit row missing, a window with no match to hold its place).
 */
export async function followChanges(
  read: Read,
  kind: DatabaseKind,
  search: SearchOf,
  count: SearchCount,
  window?: SearchWindow,
): Promise<(SearchCount & { window?: SearchWindow }) | undefined> {
  const { accountId } = search
  // A group's changes are not followed.
  if (search.groupId) return undefined
  if (window && !window.after && window.start > 0 && window.entries.length === 0) return undefined
  const like = `%${search.searchKey}%`
  // The window's bounds: inclusive for an offset window, none at the list's start or end; a cursor
  // window's lower bound is the cursor, exclusive, and its upper one open when it reaches the end.
  const lo = window?.after ?? (window && window.start > 0 ? window.entries[0] : undefined)
  const hi =
    window && (window.after ? !window.toEnd : window.start + window.entries.length < count.total) ? window.entries.at(-1) : undefined
  const keysOf = (entry: WindowEntry) => Prisma.sql`(${entry.key1}, ${entry.key2}, ${entry.id})`
  // By primary key, not the account's index.
  const account = accountNotIndexed(kind)
  const oldKeys = Prisma.sql`(ch."oldKey1", ch."oldKey2", ch."contactId")`
  const newKeys = Prisma.sql`(c."firstNameKey", c."familyNameKey", c."id")`
  const flag = (condition: Prisma.Sql) => Prisma.sql`CASE WHEN ${condition} THEN 1 ELSE 0 END`
  const beforeLo = (keys: Prisma.Sql) => (lo ? flag(Prisma.sql`${keys} < ${keysOf(lo)}`) : Prisma.sql`0`)
  const bounds = [
    ...(lo ? [Prisma.sql`${newKeys} ${Prisma.raw(window?.after ? '>' : '>=')} ${keysOf(lo)}`] : []),
    ...(hi ? [Prisma.sql`${newKeys} <= ${keysOf(hi)}`] : []),
  ]
  // Each written contact: whether it matched at the mark and matches now, and where it sorted then
  // and sorts now against the window's bounds (a missing row or old text compares as no).
  const changed = Prisma.sql`WITH ${editsSince(kind, accountId, count.mark)},
    d AS (SELECT ch."contactId" AS "id", c."firstNameKey" AS "key1", c."familyNameKey" AS "key2",
        ${flag(Prisma.sql`ch."oldText" LIKE ${like}`)} AS "was", ${flag(Prisma.sql`c."searchText" LIKE ${like}`)} AS "now",
        ${beforeLo(oldKeys)} AS "wasBefore", ${beforeLo(newKeys)} AS "nowBefore",
        ${bounds.length ? flag(Prisma.join(bounds, ' AND ')) : Prisma.sql`1`} AS "inBounds"
      FROM ch LEFT JOIN "Contact" c ON c."id" = ch."contactId" AND ${account} = ${accountId}),
    s AS (SELECT (SELECT COUNT(*) FROM e) AS "edits", COALESCE(SUM("now"), 0) - COALESCE(SUM("was"), 0) AS "gained",
        COALESCE(SUM("now" * "nowBefore"), 0) - COALESCE(SUM("was" * "wasBefore"), 0) AS "shift", ${changeMark(kind, { accountId })} AS "mark"
        ${kind === 'sqlite' ? Prisma.sql`, (SELECT MIN("change") FROM e) AS "first"` : Prisma.empty} FROM d)`
  const statement = window
    ? // The window's matches not written since (so still matching, where they were), and the written
      // contacts that match now inside its bounds, in list order.
      Prisma.sql`${changed}
      SELECT s.*, w."id", w."key1", w."key2" FROM s LEFT JOIN (
        SELECT c."id", c."firstNameKey" AS "key1", c."familyNameKey" AS "key2" FROM "Contact" c
          WHERE c."id" IN (${jsonTexts(
            kind,
            window.entries.map((entry) => entry.id),
          )}) AND ${account} = ${accountId}
            AND c."id" NOT IN (SELECT "id" FROM d)
        UNION ALL
        SELECT "id", "key1", "key2" FROM d WHERE "now" = 1 AND "inBounds" = 1
      ) w ON s."edits" <= ${FOLLOW_MAX_EDITS}
      ORDER BY w."key1", w."key2", w."id"`
    : Prisma.sql`${changed} SELECT s.* FROM s`
  const rows = await read(statement)
  const summary = rows[0]
  const edits = Number(summary?.edits ?? Infinity)
  if (!summary || edits > FOLLOW_MAX_EDITS || summary.mark === null || summary.mark === undefined) return undefined
  // SQLite: the first edit since the mark must be the next change (none purged in between).
  if (kind === 'sqlite' && edits > 0 && Number(summary.first) !== Number(count.mark) + 1) return undefined
  const next = { total: count.total + Number(summary.gained), mark: String(summary.mark) }
  if (!window) return next
  const entries: WindowEntry[] = []
  for (const row of rows)
    if (row.id !== null && row.id !== undefined) entries.push({ id: String(row.id), key1: String(row.key1), key2: String(row.key2) })
  return { ...next, window: { ...window, start: window.start + Number(summary.shift), entries } }
}

/**
 * A remembered page with a window, brought up to date (followChanges) and remembered again: the
 * offset page [skip, skip + take), or a cursor window's first `take`. Undefined when it cannot be.
 */
export async function followPage(
  read: Read,
  { db, kind }: { db: Db; kind: DatabaseKind },
  page: SearchPage,
  known: RememberedPage,
  { skip, take }: { skip: number; take: number },
): Promise<RememberedPage | undefined> {
  if (!known.window) return undefined
  const next = await followChanges(read, kind, page, known, known.window)
  const moved = next?.window && (next.window.after ? cursorPageIn(next.window, take) : pageIn(next.window, next.total, skip, take))
  if (!next || !moved) return undefined
  rememberPage(db, page, next.total, next.mark, moved.ids, moved.window)
  return { total: next.total, mark: next.mark, ...moved, at: known.at }
}

/**
 * The page [skip, skip + perPage) of a followed window, and the window kept for it (up to
 * WINDOW_MARGIN matches each side); undefined when the page is no longer inside the window.
 */
function pageIn(window: SearchWindow, total: number, skip: number, perPage: number) {
  const at = skip - window.start
  const toEnd = window.start + window.entries.length >= total
  if (at < 0 || (at + perPage > window.entries.length && !toEnd)) return undefined
  const from = Math.max(0, at - WINDOW_MARGIN)
  return {
    ids: window.entries.slice(at, at + perPage).map((entry) => entry.id),
    window: { start: window.start + from, entries: window.entries.slice(from, at + perPage + WINDOW_MARGIN) },
  }
}

/**
 * The first `take` matches past a followed cursor window's cursor, and the window kept for them (up
 * to WINDOW_MARGIN matches more); undefined when the window no longer holds `take` of them.
 */
function cursorPageIn(window: SearchWindow, take: number) {
  if (window.entries.length < take && !window.toEnd) return undefined
  const entries = window.entries.slice(0, take + WINDOW_MARGIN)
  return {
    ids: entries.slice(0, take).map((entry) => entry.id),
    window: { ...window, entries, toEnd: window.toEnd === true && entries.length === window.entries.length },
  }
}

const purgeDue = oncePerInterval()
/** Edit rows are kept this long, well past REMEMBERED_MAX_AGE_MS. */
const CONTACT_EDIT_RETENTION_SECONDS = 3600

/**
 * Deletes the contact edit rows older than an hour, at most once per `minIntervalMs` (a worker tick
 * calls it every second). Returns how many went. Rows are numbered in the order written (PostgreSQL's
 * "seq", SQLite's rowid), so the purge walks that order to the first young row and deletes what
 * lies before it: it reads only what it deletes. On PostgreSQL the rows of "ContactChange", which
 * the previous release checks and the triggers still write for one release (migration
 * contact_edits), go the same way, by their index on "at"; the count is of both tables.
 */
export async function purgeContactChanges(
  { db, dbKind, clock }: Pick<Deps, 'db' | 'dbKind' | 'clock'>,
  { minIntervalMs = 60_000 }: { minIntervalMs?: number } = {},
): Promise<number> {
  if (!purgeDue(db, clock.now().getTime(), minIntervalMs)) return 0
  // The database's clock, the one that wrote "at" (a test clock may be pinned anywhere).
  if (dbKind === 'sqlite')
    return db.$executeRaw`DELETE FROM "ContactEdit" WHERE rowid < COALESCE(
        (SELECT rowid FROM "ContactEdit" WHERE "at" >= unixepoch() - ${CONTACT_EDIT_RETENTION_SECONDS} ORDER BY rowid LIMIT 1),
        (SELECT MAX(rowid) + 1 FROM "ContactEdit"))`
  const edits = await db.$executeRaw`DELETE FROM "ContactEdit" WHERE "seq" < COALESCE(
      (SELECT "seq" FROM "ContactEdit" WHERE "at" >= now() - make_interval(secs => ${CONTACT_EDIT_RETENTION_SECONDS}) ORDER BY "seq" LIMIT 1),
      (SELECT MAX("seq") + 1 FROM "ContactEdit"))`
  const changes =
    await db.$executeRaw`DELETE FROM "ContactChange" WHERE "at" < now() - make_interval(secs => ${CONTACT_EDIT_RETENTION_SECONDS})`
  return edits + changes
}
