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
