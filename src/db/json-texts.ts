import { Prisma } from '../generated/sqlite/client.js'
import type { DatabaseKind } from './connection-url.js'

/** A set of texts bound as one JSON array (one parameter, one statement shape), as rows of one column "value", for `IN (...)` or `FROM (...)`. */
export function jsonTexts(kind: DatabaseKind, texts: readonly string[]): Prisma.Sql {
  const json = JSON.stringify(texts)
  return kind === 'sqlite'
    ? Prisma.sql`SELECT value FROM json_each(${json})`
    : Prisma.sql`SELECT jsonb_array_elements_text(${json}::jsonb) AS value`
}

/**
 * The ids of an account's contacts with these mobiles, as a subquery. On PostgreSQL each mobile is
 * one look-up in the ("accountId", "mobile") unique index whatever the table's statistics say: a
 * lateral subquery with OFFSET 0 is never pulled up into a join, where `"mobile" IN (...)` let the
 * planner read every contact of the account when ANALYZE lagged behind its growth
 * (docs/performance.md, "Adding 10,000 new contacts on PostgreSQL: the read that followed stale statistics").
 */
export function contactIdsByMobile(kind: DatabaseKind, accountId: string, mobiles: readonly string[]): Prisma.Sql {
  return kind === 'sqlite'
    ? Prisma.sql`SELECT "id" FROM "Contact" WHERE "accountId" = ${accountId} AND "mobile" IN (${jsonTexts(kind, mobiles)})`
    : Prisma.sql`SELECT c."id" FROM jsonb_array_elements_text(${JSON.stringify(mobiles)}::jsonb) AS m("mobile")
      CROSS JOIN LATERAL (SELECT "id" FROM "Contact" WHERE "accountId" = ${accountId} AND "mobile" = m."mobile" OFFSET 0) c`
}
