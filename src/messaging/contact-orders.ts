// The contact lists' orders other than the default (GraphQL `orderBy: ContactOrderBy`). The
// default, by name (NAME_ASC, the REST order), keeps its hand-tuned path (contact-list.ts,
// contact-connection-page.ts, contact-search-page.ts, remembered-searches.ts); this file serves the
// others, each over an index of its own (migration list_orders; by mobile: the unique
// (accountId, mobile)), for the numbered pages:
// - without a search: the same statement shape as the default's, the total from "ListTotal" and the
//   page's ids walked from the nearer end of the order's index (fromNearerEnd), so the last page
//   costs what the first does under every order; a group's members are the account's contacts in
//   that order checked for membership (members carry only their contacts' name keys);
// - with a search: the matches (matchingContacts, the same LIKE and search indexes) counted, sorted
//   by the order's keys and paged, in one statement. Searches under these orders are not remembered.
// The Relay connections read these orders through Prisma (findMany with the keyset bound).
import { Prisma } from '../generated/sqlite/client.js'
import type { Deps } from '../deps.js'
import type { DatabaseKind } from '../db/connection-url.js'
import { readDirect } from '../db/read-direct.js'
import { rowCount } from '../db/row-count.js'
import {
  fromNearerEnd,
  listRow,
  matchingContacts,
  selectedColumns,
  type ContactList,
  type ContactListColumn,
  type ContactListPage,
  type SortKeys,
} from './contact-list.js'

export const CONTACT_ORDERS = [
  'NAME_ASC',
  'NAME_DESC',
  'MOBILE_ASC',
  'MOBILE_DESC',
  'CREATED_AT_ASC',
  'CREATED_AT_DESC',
  'UPDATED_AT_ASC',
  'UPDATED_AT_DESC',
] as const
export type ContactOrder = (typeof CONTACT_ORDERS)[number]
/** The order of the REST lists and of every list without `orderBy`. */
export const DEFAULT_CONTACT_ORDER: ContactOrder = 'NAME_ASC'

type SortColumn = 'firstNameKey' | 'familyNameKey' | 'id' | 'mobile' | 'createdAt' | 'updatedAt'

/**
 * Each order's keys, all in one direction; the last is unique in the list (a mobile is unique in its
 * account), so the order is total and an index read backward serves the DESC order.
 */
const KEYS: Record<'NAME' | 'MOBILE' | 'CREATED_AT' | 'UPDATED_AT', readonly SortColumn[]> = {
  NAME: ['firstNameKey', 'familyNameKey', 'id'],
  MOBILE: ['mobile'],
  CREATED_AT: ['createdAt', 'id'],
  UPDATED_AT: ['updatedAt', 'id'],
}

export interface ContactSort {
  keys: readonly SortColumn[]
  descending: boolean
}

export function contactSort(order: ContactOrder): ContactSort {
  const descending = order.endsWith('_DESC')
  return { keys: KEYS[order.slice(0, order.lastIndexOf('_')) as keyof typeof KEYS], descending }
}

/** A page of contacts and its total under an order other than the default (one statement). */
export async function listContactsInOrder(
  deps: Pick<Deps, 'db' | 'dbKind' | 'directRead'>,
  list: Pick<ContactList, 'accountId' | 'groupId' | 'request' | 'forwardOnlyUpTo'>,
  columns: readonly ContactListColumn[],
  order: ContactOrder,
): Promise<ContactListPage> {
  const result = await readDirect(deps)(orderedListStatement(deps.dbKind, list, columns, order))
  const rows: Record<string, unknown>[] = []
  // Skipped: the LEFT JOIN's row when the page is empty.
  for (const raw of result) if (raw.id !== null && raw.id !== undefined) rows.push(listRow(raw, columns))
  return { rows, total: Number(result[0]?.total ?? 0), counted: true }
}

/** The statement of listContactsInOrder: the page's rows (columns and the order's keys as "orderKeyN") in order, each with the total. */
export function orderedListStatement(
  kind: DatabaseKind,
  { accountId, groupId, request, forwardOnlyUpTo }: Pick<ContactList, 'accountId' | 'groupId' | 'request' | 'forwardOnlyUpTo'>,
  columns: readonly ContactListColumn[],
  order: ContactOrder,
): Prisma.Sql {
  const sort = contactSort(order)
  const quoted = sort.keys.map((key) => `"${key}"`)
  const keyColumns = Prisma.raw(['"id"', ...quoted.filter((key) => key !== '"id"')].map((key) => `c.${key}`).join(', '))
  const orderKeys = Prisma.raw(sort.keys.map((key, i) => `, c."${key}" AS "orderKey${i + 1}"`).join(''))
  const outerOrder = Prisma.raw(sort.keys.map((_, i) => `p."orderKey${i + 1}"${sort.descending ? ' DESC' : ''}`).join(', '))
  const pageOf = (ids: Prisma.Sql) =>
    Prisma.sql`SELECT ${selectedColumns(columns)}${orderKeys} FROM (${ids}) ids JOIN "Contact" c ON c."id" = ids."id"`
  if (!request.searchKey) {
    // A group's members: the account's contacts in the order's index, each checked for membership.
    const member = groupId
      ? Prisma.sql`AND EXISTS (SELECT 1 FROM "Membership" m WHERE m."groupId" = ${groupId} AND m."contactId" = c."id")`
      : Prisma.empty
    const ids = Prisma.sql`SELECT ${keyColumns} FROM "Contact" c WHERE c."accountId" = ${accountId} ${member}`
    return Prisma.sql`WITH t AS (SELECT COALESCE((SELECT "total" FROM "ListTotal" WHERE "listId" = ${groupId ?? accountId}), 0) AS "total")
      SELECT t."total", p.* FROM t
      LEFT JOIN (${pageOf(fromNearerEnd(kind, ids, request, forwardOnlyUpTo, sort as SortKeys))}) p ON 1 = 1
      ORDER BY ${outerOrder}`
  }
  const matching = matchingContacts(kind, { accountId, groupId, searchKey: request.searchKey })
  const forward = Prisma.raw(quoted.map((key) => (sort.descending ? `${key} DESC` : key)).join(', '))
  return Prisma.sql`WITH matched AS MATERIALIZED (SELECT ${keyColumns} FROM (${matching}) m JOIN "Contact" c ON c."id" = m."id")
    SELECT t."total", p.* FROM (SELECT COUNT(*) AS "total" FROM matched) t
    LEFT JOIN (${pageOf(Prisma.sql`SELECT "id" FROM matched ORDER BY ${forward} LIMIT ${rowCount(kind, request.perPage)} OFFSET ${request.skip}`)}) p ON 1 = 1
    ORDER BY ${outerOrder}`
}
