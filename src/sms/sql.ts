import { Prisma } from '../generated/sqlite/client.js'
import { directTimestamp, type Db, type DirectRead, type DirectStatement } from '../db/client.js'
import type { DatabaseKind } from '../db/connection-url.js'

/**
 * The raw statements of one transaction and the database they run on: the SMS path's writes
 * (sendSms, the submit's record, status changes, receipts) run through `Database.directTransaction`,
 * without Prisma's client runtime, which cost 0.3-1.4 ms of CPU a statement (docs/sms.md "Speed").
 */
export interface SqlTx {
  run: DirectStatement
  kind: DatabaseKind
}

/** A time as a statement binds it (ISO text; see directTimestamp). */
export const timeOf = (tx: Pick<SqlTx, 'kind'>, date: Date) => directTimestamp(tx.kind, date)

/** A boolean as SQL text: both databases read TRUE and FALSE (SQLite stores 1 and 0, as Prisma does). */
export const flag = (value: boolean) => (value ? Prisma.sql`TRUE` : Prisma.sql`FALSE`)

/** Money (ten-thousandths of a credit) bound as its decimal text: both databases read it into their BIGINT column exactly. */
export const moneyParam = (value: bigint) => value.toString()

/** A raw row's integer (SQLite answers bigint, PostgreSQL's BIGINT a string, Prisma's fallback either). */
export const bigOf = (value: unknown) => BigInt(value as string | number | bigint)

/** A raw row's boolean (SQLite 0/1 as a number or bigint, PostgreSQL true/false). */
export const boolOf = (value: unknown) => value === true || value === 1 || value === 1n

/** A raw row's time (ISO text from either database, a Date through Prisma's fallback) as a Date. */
export const dateOf = (value: unknown) => (value === null || value === undefined ? null : new Date(value as string | Date))

/**
 * One raw statement outside a transaction: directly (Database.directRead: on SQLite after any
 * open transaction, so a write here is committed when it resolves), or through Prisma where the
 * direct path declines (traces on). A failure is not run again: it may be a write.
 */
export async function statementOf(
  { db, directRead }: { db: Db; directRead?: DirectRead | undefined },
  statement: Prisma.Sql,
): Promise<Record<string, unknown>[]> {
  const rows = await directRead?.(statement)
  return rows ?? (await db.$queryRaw<Record<string, unknown>[]>(statement))
}
