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
//   a deep page skips index entries, never table rows.
// - With a search the matching ids are collected once (MATERIALIZED) and both counted and paged.
//   The match is always the same `searchText LIKE '%term%'` as before; at 3 characters or more an
//   index narrows the candidates first: FTS5 trigram on SQLite (rechecked by the LIKE, so exact),
//   pg_trgm GIN on PostgreSQL (the planner uses it for the LIKE itself).
import { Prisma } from '../generated/sqlite/client.js'
import type { Db } from '../db/client.js'
import type { DatabaseKind } from '../db/connection-url.js'
import { rawDate, type PageRequest } from './paging.js'
import { notFound } from '../errors.js'
import { isStorableText } from './input-rules.js'
import { CONTACT_COLUMNS, type ContactColumn } from './contacts.js'

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
}

export interface ContactListPage {
  rows: Record<string, unknown>[]
  total: number
}

/** The search terms the trigram indexes can serve: 3 characters (code points) or more. */
export const isTrigramTerm = (searchKey: string) => [...searchKey].length >= 3

/** The columns of `select` that are Contact columns (relations and unknown keys are left out); id always. */
export function listColumns(select: Record<string, unknown> | undefined): ContactListColumn[] {
  const wanted = new Set<ContactListColumn>(['id'])
  for (const [key, value] of Object.entries(select ?? {})) if (value && KNOWN.has(key)) wanted.add(key as ContactListColumn)
  return [...wanted]
}

export async function listContacts(db: Db, kind: DatabaseKind, list: ContactList, columns: readonly ContactListColumn[]): Promise<ContactListPage> {
  const { accountId, groupId, request } = list
  for (const c of columns) if (!KNOWN.has(c)) throw new Error(`not a contact list column: ${c}`)
  // Sort keys ride along under their own names for the outer ORDER BY; they are dropped below.
  const selected = Prisma.join([
    ...columns.map((c) => Prisma.raw(`c."${c}"`)),
    Prisma.raw(`c."firstNameKey" AS "sortKey1", c."familyNameKey" AS "sortKey2"`),
  ])
  const window = Prisma.sql`ORDER BY "firstNameKey", "familyNameKey", "id" LIMIT ${request.perPage} OFFSET ${request.skip}`
  let sql: Prisma.Sql
  if (!request.searchKey) {
    const ids = groupId
      ? Prisma.sql`SELECT c."id", c."firstNameKey", c."familyNameKey" FROM "Membership" m JOIN "Contact" c ON c."id" = m."contactId"
          WHERE m."groupId" = ${groupId} AND c."accountId" = ${accountId}`
      : Prisma.sql`SELECT "id", "firstNameKey", "familyNameKey" FROM "Contact" WHERE "accountId" = ${accountId}`
    sql = Prisma.sql`SELECT t."total", p.* FROM (SELECT COALESCE((SELECT "total" FROM "ListTotal" WHERE "listId" = ${groupId ?? accountId}), 0) AS "total") t
      LEFT JOIN (SELECT ${selected} FROM (SELECT "id" FROM (${ids}) l ${window}) ids JOIN "Contact" c ON c."id" = ids."id") p ON 1 = 1
      ORDER BY p."sortKey1", p."sortKey2", p."id"`
  } else {
    const candidates =
      kind === 'sqlite' && isTrigramTerm(request.searchKey)
        ? // An FTS5 phrase is a substring for the trigram tokenizer; "" is a literal quote inside it.
          Prisma.sql`AND c.rowid IN (SELECT rowid FROM "ContactSearch" WHERE "ContactSearch" MATCH ${`"${request.searchKey.replaceAll('"', '""')}"`})`
        : Prisma.empty
    const member = groupId
      ? Prisma.sql`AND EXISTS (SELECT 1 FROM "Membership" m WHERE m."groupId" = ${groupId} AND m."contactId" = c."id")`
      : Prisma.empty
    // searchKey holds no LIKE wildcard (search-text.ts swaps them), so this is a plain substring match.
    const matching = Prisma.sql`SELECT c."id", c."firstNameKey", c."familyNameKey" FROM "Contact" c
        WHERE c."accountId" = ${accountId} AND c."searchText" LIKE ${`%${request.searchKey}%`} ${candidates} ${member}`
    sql = isTrigramTerm(request.searchKey)
      ? // The index yields the candidates once; they are counted and paged from the same set.
        Prisma.sql`WITH matched AS MATERIALIZED (${matching})
          SELECT t."total", p.* FROM (SELECT COUNT(*) AS "total" FROM matched) t
          LEFT JOIN (SELECT ${selected} FROM (SELECT "id" FROM matched ${window}) ids JOIN "Contact" c ON c."id" = ids."id") p ON 1 = 1
          ORDER BY p."sortKey1", p."sortKey2", p."id"`
      : // 1-2 characters: no index can help and such terms match many contacts, so the page walks
        // the list in order and stops at its last row, while the count scans (as before the index).
        Prisma.sql`SELECT t."total", p.* FROM (SELECT COUNT(*) AS "total" FROM (${matching}) m) t
          LEFT JOIN (SELECT ${selected} FROM (SELECT "id" FROM (${matching}) l ${window}) ids JOIN "Contact" c ON c."id" = ids."id") p ON 1 = 1
          ORDER BY p."sortKey1", p."sortKey2", p."id"`
  }
  const result = await db.$queryRaw<Record<string, unknown>[]>(sql)
  const total = Number(result[0]?.total ?? 0)
  const rows: Record<string, unknown>[] = []
  for (const raw of result) {
    if (raw.id === null || raw.id === undefined) continue // the LEFT JOIN's row when the page is empty
    const row: Record<string, unknown> = {}
    for (const c of columns) row[c] = DATE_COLUMNS.has(c) ? rawDate(raw[c]) : raw[c]
    rows.push(row)
  }
  return { rows, total }
}

/** Prisma's own form of the list filter and order: what the raw statement replaces, and what the tests compare it with. */
export function contactListWhere(accountId: string, request: Pick<PageRequest, 'searchKey'>, groupId?: string): Prisma.ContactWhereInput {
  return {
    accountId,
    ...(groupId ? { memberships: { some: { groupId } } } : {}),
    ...(request.searchKey ? { searchText: { contains: request.searchKey } } : {}),
  }
}

export const contactListOrder: Prisma.ContactOrderByWithRelationInput[] = [{ firstNameKey: 'asc' }, { familyNameKey: 'asc' }, { id: 'asc' }]

export async function findContact<Q extends { select?: unknown; include?: unknown }>(db: Db, accountId: string, contactId: string, query?: Q) {
  // An id no database could hold (NUL) names nothing; asking PostgreSQL would be an error.
  if (!isStorableText(contactId)) throw notFound('Contact')
  const contact = await db.contact.findFirst({ ...(query as object), where: { id: contactId, accountId } })
  if (!contact) throw notFound('Contact')
  return contact
}
