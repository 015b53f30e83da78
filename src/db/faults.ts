import { AppError } from '../errors.js'

// Prisma error codes that mean the database could not be reached or did not answer in time.
// P1001 can't reach server, P1002 timed out, P1008 operation timed out, P1017 server closed the
// connection, P2024 timed out fetching a connection from the pool.
const UNAVAILABLE_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024'])

/** A database fault the client may retry: SERVICE_UNAVAILABLE (503 with Retry-After). Null otherwise. */
export function databaseFault(error: unknown): AppError | null {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) {
    return new AppError('SERVICE_UNAVAILABLE', 'The database is unavailable; try again shortly')
  }
  return null
}
