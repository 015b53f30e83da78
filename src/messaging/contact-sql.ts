// Fragments of the contact statements that several of them share (contact-list.ts,
// contact-connection-page.ts, remembered-searches.ts).
import { Prisma } from '../generated/sqlite/client.js'
import type { DatabaseKind } from '../db/connection-url.js'

/**
 * `c."accountId"` for a condition that must not choose the index: SQLite reads the account's
 * index whenever it can, so there it is written `+c."accountId"` (unary +), and the contacts are
 * found another way (by primary key, a group's members, the search index's candidates).
 */
export const accountNotIndexed = (kind: DatabaseKind) => Prisma.raw(kind === 'sqlite' ? '+c."accountId"' : 'c."accountId"')

/**
 * FROM and WHERE of a group's members ("Membership" m) with their contacts ("Contact" c): the
 * group's index first, then each member's contact by id (CROSS JOIN keeps SQLite to that order).
 */
export const membersWithContacts = (kind: DatabaseKind, groupId: string, accountId: string) =>
  Prisma.sql`"Membership" m CROSS JOIN "Contact" c
      WHERE m."groupId" = ${groupId} AND c."id" = m."contactId" AND ${accountNotIndexed(kind)} = ${accountId}`

/**
 * A list's rows and its sort keys' names in order: the account's contacts ("Contact" c), or the
 * group's members with their contacts, sorted by the members' own copy of the keys (migration
 * membership_sort_keys), so that a group's list walks its own index.
 */
export function listSource(kind: DatabaseKind, list: { accountId: string; groupId?: string }) {
  return list.groupId
    ? {
        source: membersWithContacts(kind, list.groupId, list.accountId),
        keyNames: ['m."firstNameKey"', 'm."familyNameKey"', 'm."contactId"'] as const,
      }
    : {
        source: Prisma.sql`"Contact" c WHERE c."accountId" = ${list.accountId}`,
        keyNames: ['c."firstNameKey"', 'c."familyNameKey"', 'c."id"'] as const,
      }
}

/** The page's cursors and reading direction (the Relay connection's). */
interface Keyset {
  /** The sort keys of the cursor the page is read from: rows strictly past it. */
  from: readonly string[] | null
  /** The other cursor, when both are given: rows strictly before it. */
  until: readonly string[] | null
  backward: boolean
}

/**
 * The cursors' bound on the sort keys `keyNames` (each cursor as one row comparison) and the
 * ORDER BY of the reading direction.
 */
export function keysetBound(keyNames: readonly string[], { from, until, backward }: Keyset) {
  const keys = Prisma.raw(`(${keyNames.join(', ')})`)
  const conditions = [
    ...(from ? [Prisma.sql`${keys} ${Prisma.raw(backward ? '<' : '>')} (${Prisma.join([...from])})`] : []),
    ...(until ? [Prisma.sql`${keys} ${Prisma.raw(backward ? '>' : '<')} (${Prisma.join([...until])})`] : []),
  ]
  const order = Prisma.raw(`ORDER BY ${keyNames.map((key) => `${key} ${backward ? 'DESC' : 'ASC'}`).join(', ')}`)
  return { conditions, order }
}
