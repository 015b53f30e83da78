import { AppError } from '../core/errors.js'

// The contract: 1-255 printable ASCII characters (space to tilde).
const KEY_FORM = /^[\x20-\x7e]{1,255}$/

/**
 * The Idempotency-Key header, checked. A bad form is a 400 BAD_REQUEST: it is a malformed request
 * header, not a rule broken by a well-formed JSON body (which would be a 422).
 */
export function parseIdempotencyKey(raw: string): string {
  if (!KEY_FORM.test(raw)) {
    throw new AppError('BAD_REQUEST', 'The Idempotency-Key header must be 1 to 255 printable ASCII characters')
  }
  return raw
}
