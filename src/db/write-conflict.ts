// PostgreSQL's answer "run the whole transaction again": 40P01 (deadlock_detected: the server broke
// a cycle of lock waits by aborting this transaction) and 40001 (serialization_failure). Both roll
// the transaction back whole, so a transaction whose function only reads and writes the database
// may simply run again. One that does anything else (submits an SMS, posts a webhook) may not.
import { AppError } from '../core/errors.js'
import { adapterCause, causeSqlState, type ErrorLike } from '../core/database-faults.js'

const SQLSTATES = new Set(['40P01', '40001'])

/**
 * A deadlock or serialization failure in each shape it reaches us (checked against real ones in
 * test/write-conflict.test.ts): node-postgres's own error with the SQLSTATE in `code` (the direct
 * transaction, Database.directTransaction); Prisma's P2034 (a model query, 40001, which Prisma
 * 6.19's pg adapter maps to `TransactionWriteConflict`); a raw query's P2010 with the adapter's cause
 * (`kind: TransactionWriteConflict` for 40001, `kind: postgres` with `originalCode` 40P01); and the
 * unwrapped `DriverAdapterError` of a model query that hit 40P01 (Prisma has no code for it).
 */
export function isWriteConflict(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const { code } = error as ErrorLike
  if (typeof code === 'string' && (SQLSTATES.has(code) || code === 'P2034')) return true
  const cause = adapterCause(error as ErrorLike)
  return cause !== undefined && (cause.kind === 'TransactionWriteConflict' || SQLSTATES.has(causeSqlState(cause)))
}

/** Runs of a transaction at most, the first included. */
export const WRITE_CONFLICT_ATTEMPTS = 3

/**
 * The pause before run `attempt + 1`: 10-50 ms, then 20-100 ms, at random. By the time a deadlock
 * is reported the other side has waited deadlock_timeout (1 s by default) and is free to go on; the
 * pause lets it take the locks it waited for before this transaction asks for them again, and the
 * jitter keeps two aborted writers from coming back in step.
 */
export const writeConflictPause = (attempt: number, random: () => number = Math.random) => (10 + 40 * random()) * 2 ** (attempt - 1)

/** What the client gets once every run was aborted: the 503 of a busy database, to be retried as it is. */
export const writeConflictError = () =>
  new AppError('SERVICE_UNAVAILABLE', 'Concurrent writes to the same records kept colliding; try again shortly')

/**
 * Runs `transaction` (the whole transaction, BEGIN to COMMIT) again after a write conflict, at most
 * WRITE_CONFLICT_ATTEMPTS times, then fails with writeConflictError. Any other error passes through.
 * Only for a transaction whose function has no effect outside the database.
 */
export async function retryWriteConflicts<T>(transaction: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction()
    } catch (error) {
      if (!isWriteConflict(error)) throw error
      if (attempt === WRITE_CONFLICT_ATTEMPTS) throw writeConflictError()
      await new Promise((resolve) => setTimeout(resolve, writeConflictPause(attempt)))
    }
  }
}
