import { isDatabaseUnavailable } from './database-faults.js'

export type ErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'VALIDATION_FAILED'
  | 'RATE_LIMITED'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'INTERNAL'
  | 'SERVICE_UNAVAILABLE'

export interface ErrorDetail {
  field: string
  message: string
}

/** The one error vocabulary: domain code throws these; REST and GraphQL map them from the table below. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message)
    this.name = 'AppError'
  }
}

export const httpStatusOf: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_FAILED: 422,
  RATE_LIMITED: 429,
  IDEMPOTENCY_KEY_REUSED: 422,
  INTERNAL: 500,
  SERVICE_UNAVAILABLE: 503,
}

/** At most this many `details` entries are listed; one more entry counts the rest. */
export const MAX_ERROR_DETAILS = 100

/**
 * A 422 listing the problems. Past MAX_ERROR_DETAILS the list is cut and a last entry (field
 * `(more)`) says how many were left out, so a hostile body cannot make a megabyte-sized answer
 * while the shape stays `{field, message}` throughout.
 */
export const validationError = (details: ErrorDetail[]) => {
  const listed =
    details.length > MAX_ERROR_DETAILS
      ? [
          ...details.slice(0, MAX_ERROR_DETAILS),
          { field: '(more)', message: `${details.length - MAX_ERROR_DETAILS} more problems are not listed` },
        ]
      : details
  const message =
    details.length === 1
      ? details[0]!.message
      : details.length > MAX_ERROR_DETAILS
        ? `The request has ${details.length} invalid fields`
        : 'The request has invalid fields'
  return new AppError('VALIDATION_FAILED', message, listed)
}

export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} not found`)

/**
 * The one mapping from anything thrown to the vocabulary, for REST and GraphQL alike: AppErrors
 * (also when wrapped by graphql-js as `originalError`) and known infrastructure faults. Returns null
 * for anything unexpected, which the caller logs and masks as INTERNAL.
 */
export function knownAppError(error: unknown): AppError | null {
  if (error instanceof AppError) return error
  const original = (error as { originalError?: unknown } | null)?.originalError
  if (original instanceof AppError) return original
  return databaseFault(original ?? error)
}

/** A database fault the client may retry: SERVICE_UNAVAILABLE (503 with Retry-After). Null otherwise. */
export function databaseFault(error: unknown): AppError | null {
  return isDatabaseUnavailable(error) ? new AppError('SERVICE_UNAVAILABLE', 'The database is unavailable; try again shortly') : null
}

/** Unique-constraint violations as the drivers raise them to a direct statement (Database.directTransaction), and Prisma's own. */
const UNIQUE_CODES = new Set(['P2002', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY', '23505'])

/** A unique-constraint violation: Prisma's, a driver's, or a raw statement's through Prisma's adapter (P2010). */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const { code, meta } = error as { code?: string; meta?: { driverAdapterError?: { cause?: { kind?: string } } } }
  return UNIQUE_CODES.has(code ?? '') || meta?.driverAdapterError?.cause?.kind === 'UniqueConstraintViolation'
}
