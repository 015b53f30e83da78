// A page of contacts and its total in ONE SQL statement (issue 8), for the all-contacts list and a
// group's list, with or without a search. Prisma's query builder needs two (the page and a count
// wrapped in a subquery) and reads every column, so the list goes through Prisma's tagged raw SQL:
// every value is a bound parameter, and the only raw fragments are column names from the fixed
// list below.
//
// Where the numbers come from:
// - Without a search the total is the list's row in "ListTotal", kept by triggers in the same
//   transaction as every insert and delete (migration list_totals_and_search), and the page walks
//   the (accountId, firstNameKey, familyNameKey, id) index for ids only, then reads the 25 rows:
//   a deep page skips index entries, never table rows, and it skips them from the nearer end of
//   the list (the total says which), so the last page costs what the first does (fromNearerEnd).
//   A group's list walks its own index the same way: each membership carries its contact's sort
//   keys, copied by triggers (migration membership_sort_keys), so a group of 100,000 in an account
//   of a million skips index entries of "Membership" instead of sorting every member.
// - With a search the matching ids are collected once (MATERIALIZED) and both counted and paged.
//   The match is always the same `searchText LIKE '%term%'` as before; at 3 characters or more an
//   index narrows the candidates first: FTS5 trigram on SQLite (rechecked by the LIKE, so exact),
//   pg_trgm GIN on PostgreSQL (the planner uses it for the LIKE itself). SQLite's planner reads the
//   account's contacts and checks each against the candidates; for a big account and a rare term
//   the candidates drive the read instead (searchIndexFirst), and a group's members for a group
//   small against its account (searchPlan).
// - A search of 1,000 matches or more is remembered (remembered-searches.ts): the same page again
//   reads its 25 rows by id, with a condition, in the same snapshot, that the account's contacts
//   (and a group's members) have not changed since; if they have, an account's page and total
//   follow the changes (one statement more), or, when they cannot (a group's), the search runs in
//   full.
import { Prisma } from '../generated/sqlite/client.js'
import type { Db } from '../db/client.js'
import type { DatabaseKind } from '../db/connection-url.js'
import type { Deps } from '../deps.js'
import { rawDate, type PageRequest } from './paging.js'
import { notFound } from '../core/errors.js'
import { isStorableText } from './input-rules.js'
import { CONTACT_COLUMNS, type ContactColumn } from './contacts.js'
import { jsonTexts } from '../db/json-texts.js'
import { rowCount } from '../db/row-count.js'
import { readDirect, type Read } from '../db/read-direct.js'
import { accountNotIndexed, membersWithContacts } from './contact-sql.js'
import {
  changeMark,
  followChanges,
  followPage,
  freshSince,
  forgetPage,
  rememberedPage,
  rememberedTotal,
  rememberPage,
  rememberTotal,
  stillFresh,
  WINDOW_MARGIN,
  type ListOf,
  type SearchOf,
} from './remembered-searches.js'

export type ContactListColumn = Exclude<ContactColumn, 'searchText'>
/** The Contact columns a list may read (its scalar fields, searchText aside). */
export const CONTACT_LIST_COLUMNS: readonly ContactListColumn[] = CONTACT_COLUMNS.filter((c): c is ContactListColumn => c !== 'searchText')
const KNOWN = new Set<string>(CONTACT_LIST_COLUMNS)
const DATE_COLUMNS = new Set<string>(['createdAt', 'updatedAt'])

export interface ContactList {
  accountId: string
  /** Only the group's members; the caller has checked the group is the account's. */
  groupId?: string
  request: Pick<PageRequest, 'searchKey' | 'skip' | 'perPage'>
  /**
   * SQLite, a search of 3 characters or more: the search index's candidates drive the read, looked
   * up by rowid, instead of the account's contacts, each checked against them. listContacts sets it
   * when the account is big and the term rare (searchIndexFirst); the rows are the same either way.
   */
  candidatesFirst?: boolean
  /**
   * A group's search: the group's members drive the read, each looked up and checked, instead of
   * the account's contacts or the search index's candidates. listContacts sets it on SQLite for a
   * group small against its account (searchPlan); the rows are the same either way.
   */
  membersFirst?: boolean
  /**
   * A list without a search: a page whose skip is at most this is read forward only, without the
   * walk from the far end (FORWARD_ONLY_SKIP by default; the tests set less, to walk short lists
   * from either end).
   */
  forwardOnlyUpTo?: number
  /**
   * A search: read this many matches before and after the page as well (its window, so that a
   * remembered page can follow changes). Every row of the statement then carries "windowId",
   * "windowKey1" and "windowKey2"; only the page's rows carry the columns.
   */
  margin?: { before: number; after: number }
}

export interface ContactListPage {
  rows: Record<string, unknown>[]
  total: number
  /** False when the page was a remembered one (remembered-searches.ts), checked unchanged in the same statement or followed since. */
  counted: boolean
}

/** The search terms the trigram indexes can serve: 3 characters (code points) or more. */
export const isTrigramTerm = (searchKey: string) => [...searchKey].length >= 3

/** The columns of `select` that are Contact columns (relations and unknown keys are left out); id always. */
export function listColumns(select: Record<string, unknown> | undefined): ContactListColumn[] {
  const wanted = new Set<ContactListColumn>(['id'])
  for (const [key, value] of Object.entries(select ?? {})) if (value && KNOWN.has(key)) wanted.add(key as ContactListColumn)
  return [...wanted]
}

export async function listContacts(
  deps: Pick<Deps, 'db' | 'dbKind' | 'directRead'>,
  list: ContactList,
  columns: readonly ContactListColumn[],
): Promise<ContactListPage> {
  const { db, dbKind: kind } = deps
  const read = readDirect(deps)
  const { searchKey, skip, perPage } = list.request
  const search = searchKey ? { accountId: list.accountId, groupId: list.groupId, searchKey, page: `${skip}:${perPage}` } : undefined
  const known = search && rememberedPage(db, search)
  if (search && known) {
    let page = known
    for (let followed = false; ; followed = true) {
      const rows = await read(rememberedPageStatement(kind, search, page.mark, page.ids, columns))
      const found = rows.filter((row) => row.id !== null && row.id !== undefined)
      if (Number(rows[0]?.fresh) === 1) {
        if (found.length === page.ids.length) return { rows: found.map((raw) => listRow(raw, columns)), total: page.total, counted: false }
        break
      }
      // Changed since: an account's window follows the changes once (a change between the two
      // statements runs the search in full); a group's search runs in full.
      const next = !followed && (await followPage(read, { db, kind }, search, page, { skip, take: perPage }))
      if (!next) break
      page = next
    }
    forgetPage(db, search)
  }
  if (kind === 'sqlite' && searchKey && isTrigramTerm(searchKey) && list.candidatesFirst === undefined) {
    list = { ...list, ...(await searchPlan(read, list, searchKey)) }
  }
  // An account's search reads its page's window with it, to be remembered and followed.
  const followed = search && !search.groupId
  const before = followed ? Math.min(skip, WINDOW_MARGIN) : 0
  if (followed) list = { ...list, margin: { before, after: WINDOW_MARGIN } }
  const result = await read(contactListStatement(kind, list, columns))
  const total = Number(result[0]?.total ?? 0)
  // The account's size, for the next search's plan (searchIndexFirst): the all-contacts list's
  // total, or the column a SQLite search statement carries for it.
  if (kind === 'sqlite') {
    const size = list.request.searchKey ? result[0]?.accountTotal : list.groupId ? undefined : total
    if (size !== undefined && size !== null) rememberAccountSize(list.accountId, Number(size))
  }
  const rows: Record<string, unknown>[] = []
  // Skipped: the LEFT JOIN's row when the page is empty, and a window's rows around the page.
  for (const raw of result) if (raw.id !== null && raw.id !== undefined) rows.push(listRow(raw, columns))
  if (search) {
    const entries = result
      .filter((raw) => raw.windowId !== null && raw.windowId !== undefined)
      .map((raw) => ({ id: raw.windowId as string, key1: raw.windowKey1 as string, key2: raw.windowKey2 as string }))
    rememberPage(
      db,
      search,
      total,
      result[0]?.mark,
      rows.map((row) => row.id as string),
      followed ? { start: skip - before, entries } : undefined,
    )
  }
  return { rows, total, counted: true }
}

/**
 * The exact total of a search of an account's contacts or a group's, without a page (the Relay
 * connection's totalCount). It is remembered as the pages' totals are, and shares them: a total of
 * 1,000 matches or more, counted here or by a page of the same search, is answered again after one
 * statement that checks that nothing that could change the matches has happened since its count
 * (an account's: or follows the changes since). `counted` is false then.
 */
export async function searchTotal(
  deps: Pick<Deps, 'db' | 'dbKind' | 'directRead'>,
  search: SearchOf,
): Promise<{ total: number; counted: boolean }> {
  const { db, dbKind: kind } = deps
  const read = readDirect(deps)
  const known = rememberedTotal(db, search)
  if (known && search.groupId) {
    if (await stillFresh(read, kind, search, known.mark)) return { total: known.total, counted: false }
  } else if (known) {
    // Unchanged, or the changes since followed: one statement either way.
    const next = await followChanges(read, kind, search, known)
    if (next) {
      rememberTotal(db, search, next.total, next.mark)
      return { total: next.total, counted: false }
    }
  }
  const plan = kind === 'sqlite' && isTrigramTerm(search.searchKey) ? await searchPlan(read, search, search.searchKey) : {}
  const [row] = await read(
    Prisma.sql`SELECT COUNT(*) AS "total", ${changeMark(kind, search)} AS "mark" FROM (${matchingContacts(kind, { ...search, ...plan })}) m`,
  )
  const total = Number(row?.total ?? 0)
  rememberTotal(db, search, total, row?.mark)
  return { total, counted: true }
}

/** A list statement's row as a contact of `columns` (dates as Date, as Prisma's). */
export function listRow(raw: Record<string, unknown>, columns: readonly ContactListColumn[]) {
  const row: Record<string, unknown> = {}
  for (const c of columns) row[c] = DATE_COLUMNS.has(c) ? rawDate(raw[c]) : raw[c]
  return row
}

/** The columns of "Contact" c, and its sort keys under their own names for the outer ORDER BY (listRow drops them). */
export function selectedColumns(columns: readonly ContactListColumn[]) {
  for (const c of columns) if (!KNOWN.has(c)) throw new Error(`not a contact list column: ${c}`)
  return Prisma.join([
    ...columns.map((c) => Prisma.raw(`c."${c}"`)),
    Prisma.raw(`c."firstNameKey" AS "sortKey1", c."familyNameKey" AS "sortKey2"`),
  ])
}

/**
 * A remembered page of a search: its contacts by id, in the list's order, and "fresh"
 * (1 when nothing that could change the matches has happened since `mark`), in one snapshot. The
 * rows come only when fresh.
 */
function rememberedPageStatement(
  kind: DatabaseKind,
  list: ListOf,
  mark: string,
  ids: readonly string[],
  columns: readonly ContactListColumn[],
): Prisma.Sql {
  const selected = selectedColumns(columns)
  // By primary key, not the account's index.
  return Prisma.sql`SELECT t."fresh", p.* FROM (${freshSince(kind, list, mark)}) t
    LEFT JOIN (SELECT ${selected} FROM "Contact" c WHERE c."id" IN (${jsonTexts(kind, ids)}) AND ${accountNotIndexed(kind)} = ${list.accountId}) p ON t."fresh" = 1
    ORDER BY p."sortKey1", p."sortKey2", p."id"`
}

/**
 * Below this many contacts, SQLite reads the account's contacts for a search and checks each against
 * the search index's candidates (a Bloom filter and a lookup: about 0.17 µs a contact, 3 ms here).
 */
const SEARCH_ACCOUNT_SCAN_MAX = 20_000
/**
 * A candidate found in the search index, looked up by rowid and rechecked costs about as much as
 * this many contacts scanned (measured at a million: 4 µs a candidate, 0.17 µs a contact).
 */
const CANDIDATE_COST = 16

/**
 * SQLite's planner always reads a search from the account's index, whatever the search index
 * holds: at a million contacts that is a million checks for 10,000 matches (167 ms). For a big
 * account (its size as last seen, accountSizes) it counts the term's candidates in the search
 * index, up to a sixteenth of the account, and lets them drive the read when they are fewer (44 ms
 * for those 10,000, the count included). A term common across the database (candidates of other
 * accounts too) keeps the account's index.
 */
async function searchIndexFirst(read: Read, accountId: string, searchKey: string) {
  const contacts = accountSizes.get(accountId) ?? 0
  if (contacts <= SEARCH_ACCOUNT_SCAN_MAX) return false
  return fewerCandidates(read, searchKey, Math.ceil(contacts / CANDIDATE_COST))
}

/** True when the search index holds fewer than `cap` candidates for the term (counted up to `cap`). */
async function fewerCandidates(read: Read, searchKey: string, cap: number) {
  const [found] = await read(
    Prisma.sql`SELECT COUNT(*) AS "n" FROM (SELECT rowid FROM "ContactSearch" WHERE "ContactSearch" MATCH ${ftsPhrase(searchKey)} LIMIT ${cap})`,
  )
  return Number(found?.n ?? cap) < cap
}

/**
 * A group's member, found in the group's index, looked up by id and checked, costs about as much
 * as this many contacts scanned (measured at a million: about 5 µs a member of a group of 1,000 or
 * 10,000, against 0.17 µs a contact).
 */
const MEMBER_COST = 30

/**
 * SQLite: what drives the read of a search of 3 characters or more. An account's search:
 * searchIndexFirst. A group's: its members, when reading them all costs less than scanning the
 * account (a group of 1,000 in an account of a million: 5 ms against 180 for "kama", 333 of its
 * members matching), unless the search index holds fewer candidates than that cost (a rare term);
 * otherwise as the account's. The sizes are the lists' totals, read first (one small statement).
 */
async function searchPlan(read: Read, { accountId, groupId }: ListOf, searchKey: string) {
  if (groupId) {
    const [sizes] = await read(
      Prisma.sql`SELECT (SELECT "total" FROM "ListTotal" WHERE "listId" = ${accountId}) AS "contacts",
        (SELECT "total" FROM "ListTotal" WHERE "listId" = ${groupId}) AS "members"`,
    )
    const contacts = Number(sizes?.contacts ?? 0)
    rememberAccountSize(accountId, contacts)
    const membersCost = Number(sizes?.members ?? 0) * MEMBER_COST
    if (membersCost < contacts) {
      const candidatesFirst = await fewerCandidates(read, searchKey, Math.ceil(membersCost / CANDIDATE_COST))
      return { candidatesFirst, membersFirst: !candidatesFirst }
    }
  }
  return { candidatesFirst: await searchIndexFirst(read, accountId, searchKey) }
}

/**
 * The last size seen of each account's list, per process (at most 10,000 accounts, the oldest
 * forgotten first). Only a hint for SQLite's search plan: a size unknown or out of date costs one
 * slow search (the account's index), never a wrong answer, and asking for it would be a statement
 * on every search.
 */
const accountSizes = new Map<string, number>()
function rememberAccountSize(accountId: string, size: number) {
  accountSizes.delete(accountId)
  if (accountSizes.size >= 10_000) accountSizes.delete(accountSizes.keys().next().value!)
  accountSizes.set(accountId, size)
}

/** An FTS5 phrase is a substring for the trigram tokenizer; "" is a literal quote inside it. */
const ftsPhrase = (searchKey: string) => `"${searchKey.replaceAll('"', '""')}"`

/**
 * The one statement of a page: its rows (the columns and the sort keys) in order, each with the
 * list's total; one row of total alone when the page is empty. With a margin (a search) the rows
 * are the page's window: up to `before` matches, the page, up to `after` (ContactList.margin).
 */
export function contactListStatement(kind: DatabaseKind, list: ContactList, columns: readonly ContactListColumn[]): Prisma.Sql {
  const { accountId, groupId, request } = list
  const selected = selectedColumns(columns)
  const margin = request.searchKey && list.margin ? list.margin : { before: 0, after: 0 }
  const window = Prisma.sql`ORDER BY "firstNameKey", "familyNameKey", "id" LIMIT ${rowCount(kind, request.perPage + margin.before + margin.after)} OFFSET ${request.skip - margin.before}`
  let sql: Prisma.Sql
  if (!request.searchKey) {
    // A group's members carry their contacts' sort keys (migration membership_sort_keys), so both
    // lists walk an index in name order: (accountId, …) on "Contact", (groupId, …) on "Membership".
    // A membership joins a group and a contact of one account (add-contacts enlists the account's
    // own contacts, the SMS opt-in the group's account's), and the caller has checked the group.
    const ids = groupId
      ? Prisma.sql`SELECT "contactId" AS "id", "firstNameKey", "familyNameKey" FROM "Membership" WHERE "groupId" = ${groupId}`
      : Prisma.sql`SELECT "id", "firstNameKey", "familyNameKey" FROM "Contact" WHERE "accountId" = ${accountId}`
    sql = Prisma.sql`WITH t AS (SELECT COALESCE((SELECT "total" FROM "ListTotal" WHERE "listId" = ${groupId ?? accountId}), 0) AS "total")
      SELECT t."total", p.* FROM t
      LEFT JOIN (SELECT ${selected} FROM (${fromNearerEnd(kind, ids, request, list.forwardOnlyUpTo)}) ids
        JOIN "Contact" c ON c."id" = ids."id") p ON 1 = 1
      ORDER BY p."sortKey1", p."sortKey2", p."id"`
  } else {
    // SQLite: the account's size rides along, for the next search's plan (searchIndexFirst).
    const accountTotal =
      kind === 'sqlite' ? Prisma.sql`, (SELECT "total" FROM "ListTotal" WHERE "listId" = ${accountId}) AS "accountTotal"` : Prisma.empty
    const matching = matchingContacts(kind, {
      accountId,
      groupId,
      searchKey: request.searchKey,
      candidatesFirst: list.candidatesFirst,
      membersFirst: list.membersFirst,
    })
    // The search says what its count saw, so that it can be remembered.
    const mark = Prisma.sql`, ${changeMark(kind, list)} AS "mark"`
    // The page's rows with their columns; with a margin, the window's other rows carry only their
    // id and sort keys (the CASE gives their lookup no key, so no contact row is read for them).
    const rowsOf = (source: Prisma.Sql) =>
      list.margin
        ? Prisma.sql`SELECT w."id" AS "windowId", w."firstNameKey" AS "windowKey1", w."familyNameKey" AS "windowKey2", ${selected}
            FROM (SELECT x."id", x."firstNameKey", x."familyNameKey", ROW_NUMBER() OVER (ORDER BY x."firstNameKey", x."familyNameKey", x."id") AS "n"
              FROM (SELECT "id", "firstNameKey", "familyNameKey" FROM ${source} ${window}) x) w
            LEFT JOIN "Contact" c ON c."id" = CASE WHEN w."n" > ${margin.before} AND w."n" <= ${margin.before + request.perPage} THEN w."id" END`
        : Prisma.sql`SELECT ${selected} FROM (SELECT "id" FROM ${source} ${window}) ids JOIN "Contact" c ON c."id" = ids."id"`
    const order = list.margin ? Prisma.sql`p."windowKey1", p."windowKey2", p."windowId"` : Prisma.sql`p."sortKey1", p."sortKey2", p."id"`
    sql = isTrigramTerm(request.searchKey)
      ? // The index yields the candidates once; they are counted and paged from the same set.
        Prisma.sql`WITH matched AS MATERIALIZED (${matching})
          SELECT t.*, p.* FROM (SELECT COUNT(*) AS "total"${mark}${accountTotal} FROM matched) t
          LEFT JOIN (${rowsOf(Prisma.sql`matched`)}) p ON 1 = 1
          ORDER BY ${order}`
      : // 1-2 characters: no index can help and such terms match many contacts, so the page walks
        // the list in order and stops at its last row, while the count scans (as before the index).
        Prisma.sql`SELECT t.*, p.* FROM (SELECT COUNT(*) AS "total"${mark} FROM (${matching}) m) t
          LEFT JOIN (${rowsOf(Prisma.sql`(${matching}) l`)}) p ON 1 = 1
          ORDER BY ${order}`
  }
  return sql
}

/** The ids and sort keys of the list's contacts that match the search (a term of any length). */
export function matchingContacts(
  kind: DatabaseKind,
  {
    accountId,
    groupId,
    searchKey,
    candidatesFirst,
    membersFirst,
  }: { accountId: string; groupId?: string; searchKey: string; candidatesFirst?: boolean; membersFirst?: boolean },
): Prisma.Sql {
  // searchKey holds no LIKE wildcard (search-text.ts swaps them), so this is a plain substring match.
  const like = `%${searchKey}%`
  if (groupId && membersFirst)
    // The group's index, then each member's contact by id, checked without the search index.
    return Prisma.sql`SELECT c."id", c."firstNameKey", c."familyNameKey" FROM ${membersWithContacts(kind, groupId, accountId)}
        AND c."searchText" LIKE ${like}`
  const candidates =
    kind === 'sqlite' && isTrigramTerm(searchKey)
      ? Prisma.sql`AND c.rowid IN (SELECT rowid FROM "ContactSearch" WHERE "ContactSearch" MATCH ${ftsPhrase(searchKey)})`
      : Prisma.empty
  // Not the account's index, so the candidates' rowids drive the read.
  const account = candidatesFirst ? accountNotIndexed(kind) : Prisma.raw('c."accountId"')
  const member = groupId
    ? Prisma.sql`AND EXISTS (SELECT 1 FROM "Membership" m WHERE m."groupId" = ${groupId} AND m."contactId" = c."id")`
    : Prisma.empty
  return Prisma.sql`SELECT c."id", c."firstNameKey", c."familyNameKey" FROM "Contact" c
      WHERE ${account} = ${accountId} AND c."searchText" LIKE ${like} ${candidates} ${member}`
}

/**
 * A page that starts this near the front is read forward only: skipping up to 1,000 index entries
 * costs less than PostgreSQL's planning of the reversed branch, about a third of its planning of
 * page 1 (docs/performance.md, "Early pages read forward only").
 */
export const FORWARD_ONLY_SKIP = 1000

/**
 * The ids of the page, walked from whichever end of the list is nearer: a B-tree has no positions,
 * so OFFSET n reads n index entries (and, on PostgreSQL, checks n rows' visibility until VACUUM has
 * marked their pages all-visible). Past the middle, the same rows are the page
 * [total - skip - perPage, total - skip) of the reversed order (every sort key reversed, so exactly
 * the reverse of a total order, whatever the collation), and the statement puts them back in order.
 * The total is the list's counter "t", read in the same statement and snapshot, so it is the exact
 * row count. Both branches are in the statement; the one whose condition fails stops at its
 * one-time filter without reading the list. Only the number parameters are computed here.
 * Either branch alone gives the same rows, so a page within `forwardOnlyUpTo` rows of the front
 * (ContactList.forwardOnlyUpTo) has the forward branch alone.
 */
export function fromNearerEnd(
  kind: DatabaseKind,
  ids: Prisma.Sql,
  request: Pick<PageRequest, 'skip' | 'perPage'>,
  forwardOnlyUpTo = FORWARD_ONLY_SKIP,
  sort: SortKeys = NAME_SORT,
): Prisma.Sql {
  const { skip, perPage } = request
  const quoted = sort.keys.map((key) => `"${key}"`)
  const forwardOrder = Prisma.raw(quoted.map((key) => (sort.descending ? `${key} DESC` : key)).join(', '))
  const backOrder = Prisma.raw(quoted.map((key) => (sort.descending ? key : `${key} DESC`)).join(', '))
  const keyColumns = Prisma.raw(['"id"', ...quoted.filter((key) => key !== '"id"')].join(', '))
  const walkForward = (where: Prisma.Sql, limit: Prisma.Sql) =>
    Prisma.sql`SELECT "id" FROM (SELECT "id" FROM (${ids}) l ${where}
        ORDER BY ${forwardOrder} LIMIT ${limit} OFFSET ${skip}) f`
  if (skip <= forwardOnlyUpTo) return walkForward(Prisma.empty, rowCount(kind, perPage))
  const atLeastZero = (value: Prisma.Sql) => (kind === 'sqlite' ? Prisma.sql`MAX(${value}, 0)` : Prisma.sql`GREATEST(${value}, 0)`)
  const total = Prisma.sql`(SELECT "total" FROM t)`
  // Forward when the rows before the page are no more than the rows after it.
  const forward = Prisma.sql`${2 * skip + perPage} <= ${total}`
  // Each branch reads perPage rows or none. PostgreSQL: a condition on the total alone is a one-time
  // filter that skips the branch's scan, and the constant LIMIT keeps the planner's row estimate at
  // the page size (an expression would count as a tenth of the list and turn the plan to a hash join
  // over the whole table). SQLite tests such a condition on every row, but LIMIT 0 ends the branch at once.
  const guarded = (when: Prisma.Sql) =>
    kind === 'sqlite'
      ? { where: Prisma.empty, limit: Prisma.sql`CASE WHEN ${when} THEN ${perPage} ELSE 0 END` }
      : { where: Prisma.sql`WHERE ${when}`, limit: rowCount(kind, perPage) }
  const ahead = guarded(forward)
  const back = guarded(Prisma.sql`NOT (${forward})`)
  // The reversed walk ends at the page's last row; when that is the list's last, shorter page the
  // outer LIMIT trims the rows before the page.
  return Prisma.sql`${walkForward(ahead.where, ahead.limit)}
      UNION ALL
      SELECT "id" FROM (SELECT ${keyColumns} FROM (SELECT ${keyColumns} FROM (${ids}) l ${back.where}
          ORDER BY ${backOrder} LIMIT ${back.limit} OFFSET ${atLeastZero(Prisma.sql`${total} - ${skip + perPage}`)}) r
        ORDER BY ${backOrder} LIMIT ${atLeastZero(Prisma.sql`${total} - ${skip}`)}) b`
}

/** The sort keys of a list's total order (the last one unique in the list) and its direction: `ids` of fromNearerEnd carries them. */
export interface SortKeys {
  keys: readonly string[]
  descending: boolean
}
const NAME_SORT: SortKeys = { keys: ['firstNameKey', 'familyNameKey', 'id'], descending: false }

/** Prisma's own form of the list filter and order: what the raw statement replaces, and what the tests compare it with. */
export function contactListWhere(accountId: string, request: Pick<PageRequest, 'searchKey'>, groupId?: string): Prisma.ContactWhereInput {
  return {
    accountId,
    ...(groupId ? { memberships: { some: { groupId } } } : {}),
    ...(request.searchKey ? { searchText: { contains: request.searchKey } } : {}),
  }
}

export const contactListOrder: Prisma.ContactOrderByWithRelationInput[] = [{ firstNameKey: 'asc' }, { familyNameKey: 'asc' }, { id: 'asc' }]

export async function findContact<Q extends { select?: unknown; include?: unknown }>(
  db: Db,
  accountId: string,
  contactId: string,
  query?: Q,
) {
  // An id no database could hold (NUL) names nothing; asking PostgreSQL would be an error.
  if (!isStorableText(contactId)) throw notFound('Contact')
  const contact = await db.contact.findFirst({ ...(query as object), where: { id: contactId, accountId } })
  if (!contact) throw notFound('Contact')
  return contact
}
