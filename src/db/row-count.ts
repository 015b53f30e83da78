import { Prisma } from '../generated/sqlite/client.js'
import type { DatabaseKind } from './connection-url.js'

/**
 * A statement's `LIMIT` of `rows`, a whole number the service computed (a page size, a probe's
 * length), never text from a request. SQLite (3.49, as better-sqlite3 builds it) plans with the
 * value bound to a lone `LIMIT ?` and so marks the prepared statement to be compiled again
 * whenever that parameter is bound, which the statement cache (sqlite-statement-cache.ts) does on
 * every call: a contact page's statement was compiled again on each request, 40% of its time
 * (docs/performance.md, "LIMIT in the statement's text on SQLite"). There the number is written
 * into the text; a page takes few sizes, so few statements are cached. PostgreSQL binds it, as
 * before: its prepared statements keep one plan for every value.
 */
export function rowCount(kind: DatabaseKind, rows: number): Prisma.Sql {
  if (!Number.isSafeInteger(rows) || rows < 0) throw new RangeError(`not a row count: ${rows}`)
  return kind === 'sqlite' ? Prisma.raw(String(rows)) : Prisma.sql`${rows}`
}
