// Which errors mean "the database is unavailable or too slow right now" (503, retry) as opposed to
// a bug or a rule the request broke (constraint violations stay what they are). Each entry was
// provoked for real through test/kit/fault-proxy.ts with Prisma 6.19 driver adapters, pg 8 and
// better-sqlite3; docs/operations.md "Database faults" lists what each fault throws.

// Prisma error codes. P1001 can't reach server (connection refused), P1002/P1008 timed out (also
// SQLite busy beyond its timeout), P1017 server closed the connection (stopped mid-request), P2024
// pool timeout, P2037 too many connections.
const UNAVAILABLE_PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2037'])

// Driver adapter error kinds: raw queries ($queryRaw, P2010) carry them in meta.driverAdapterError.
const UNAVAILABLE_ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections'])

// PostgreSQL SQLSTATEs: 57014 statement_timeout (query_canceled), 57P01-57P03 shutdown / not yet
// accepting connections, 55P03 lock_not_available (lock_timeout), 53300 too_many_connections.
// Class 08 (connection exception) is matched by prefix.
const UNAVAILABLE_SQLSTATES = new Set(['57014', '57P01', '57P02', '57P03', '55P03', '53300'])

// node-postgres and pg-pool throw plain Errors without a code for their own timeouts and lost
// connections, and the pg adapter passes them through untouched, so these fixed messages are the
// only thing to match: pool checkout timeout (connectionTimeoutMillis), connect timeout, client
// query_timeout (a frozen server), and a connection lost while a query was pending.
const UNAVAILABLE_PG_MESSAGES = new Set([
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
  'Query read timeout',
  'Connection terminated unexpectedly',
  'Client has encountered a connection error and is not queryable',
])

// Interactive transactions that could not start (every connection busy) or ran out of their budget
// because the database was slow. Other P2028s (using a finished transaction) are bugs.
const TRANSACTION_START_TIMEOUT = 'Unable to start a transaction in the given time.'

/** What a Prisma driver adapter reports of a database error: its kind and the SQLSTATE. */
export interface AdapterCause {
  kind?: unknown
  code?: unknown
  originalCode?: unknown
}

export interface ErrorLike {
  name?: unknown
  code?: unknown
  message?: unknown
  cause?: AdapterCause
  meta?: { timeout?: unknown; driverAdapterError?: { cause?: AdapterCause } }
}

/**
 * The adapter's cause of a Prisma error: in meta.driverAdapterError for a raw query's P2010 and the
 * errors Prisma maps, or the unwrapped DriverAdapterError's own cause for those it has no code for
 * (a plain SQLSTATE).
 */
export function adapterCause(error: ErrorLike): AdapterCause | undefined {
  return error.meta?.driverAdapterError?.cause ?? (error.name === 'DriverAdapterError' ? error.cause : undefined)
}

/** The SQLSTATE an adapter's cause carries, or ''. */
export function causeSqlState(cause: AdapterCause): string {
  return typeof cause.code === 'string' ? cause.code : typeof cause.originalCode === 'string' ? cause.originalCode : ''
}

function isUnavailable(error: ErrorLike): boolean {
  const code = typeof error.code === 'string' ? error.code : undefined
  if (code && UNAVAILABLE_PRISMA_CODES.has(code)) return true
  if (code === 'P2028') return typeof error.meta?.timeout === 'number' || error.message === TRANSACTION_START_TIMEOUT
  // Adapter errors Prisma has no code for (a plain SQLSTATE) reach us unwrapped.
  const cause = adapterCause(error)
  if (cause) {
    if (typeof cause.kind === 'string' && UNAVAILABLE_ADAPTER_KINDS.has(cause.kind)) return true
    const sqlState = causeSqlState(cause)
    if (UNAVAILABLE_SQLSTATES.has(sqlState) || sqlState.startsWith('08')) return true
  }
  // better-sqlite3 errors the adapter does not map (extended busy/locked codes such as SQLITE_BUSY_SNAPSHOT),
  // and the drivers' own errors where no adapter is between (Database.directTransaction).
  if (code && /^SQLITE_(BUSY|LOCKED)(_|$)/.test(code)) return true
  if (code && (UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true
  if (error instanceof DatabaseConnectionError || error instanceof TransactionBudgetError) return true
  return code === undefined && error instanceof Error && UNAVAILABLE_PG_MESSAGES.has(error.message)
}

/**
 * A socket error on a connection to the database where no adapter wraps it (Database.directTransaction
 * on PostgreSQL). Its own class: the same codes (ECONNRESET, EPIPE) on a client's socket are the
 * client's doing, never a database fault.
 */
export class DatabaseConnectionError extends Error {}

/**
 * A transaction of the service's own on SQLite (Database.directTransaction) that found no turn on
 * the connection within its wait, or ran past its timeout and was rolled back: what Prisma's P2028
 * with a timeout says of its interactive transactions.
 */
export class TransactionBudgetError extends Error {}

/** A database fault the client may retry (SERVICE_UNAVAILABLE, 503 with Retry-After), as opposed to a bug or a broken rule. */
export function isDatabaseUnavailable(error: unknown): boolean {
  return typeof error === 'object' && error !== null && isUnavailable(error as ErrorLike)
}
