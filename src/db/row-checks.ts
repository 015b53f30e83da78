import type { DatabaseKind } from './connection-url.js'

/**
 * PostgreSQL: the statement that lets the rest of a transaction use generic plans, `SET LOCAL`, so
 * it ends with the transaction, committed or rolled back.
 *
 * The service's sessions plan every statement for its values (`plan_cache_mode =
 * force_custom_plan`, src/db/client.ts), for the contact list's named statements. The same mode
 * reaches the look-up PostgreSQL runs for each row a foreign key checks (and the triggers'
 * statements): planned again for every row written, about 20 µs a check against 7
 * (docs/performance.md, "Foreign key checks planned once, beyond the direct transaction"). A
 * transaction's own statements (Prisma's and the direct ones are unnamed) are planned for their
 * values whatever the mode.
 */
export const GENERIC_ROW_CHECKS = 'SET LOCAL plan_cache_mode = auto'

/**
 * The first statement of a Prisma transaction that writes many rows with foreign keys (a group's
 * send, a channel's import): one round trip, against one planning a row for each key. Nothing on SQLite.
 */
export async function planRowChecksOnce(tx: { $executeRawUnsafe(query: string): Promise<number> }, kind: DatabaseKind): Promise<void> {
  if (kind === 'postgresql') await tx.$executeRawUnsafe(GENERIC_ROW_CHECKS)
}
