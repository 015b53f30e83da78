import { validationError, type ErrorDetail } from '../core/errors.js'

export const LIMITS = {
  name: 100,
  description: 2000,
  code: 50,
  autoresponse: 1000,
  email: 254,
  text: 200,
} as const

/**
 * Collects every problem of one input before failing, so a client sees all of them at once.
 * Strings are trimmed; an empty required string counts as missing.
 */
export class InputRules {
  readonly details: ErrorDetail[] = []
  constructor(private readonly prefix = '') {}

  fail(field: string, message: string) {
    this.details.push({ field: this.prefix + field, message })
  }

  /** Required text: a trimmed non-empty string within max. */
  required(field: string, value: unknown, max: number): string | undefined {
    if (value === undefined || value === null) {
      this.fail(field, `${field} is required`)
      return undefined
    }
    const text = this.optional(field, value, max)
    if (text === '') this.fail(field, `${field} is required`)
    return text || undefined
  }

  /** Optional text: undefined when absent, null when explicitly null, else the trimmed string. */
  optional(field: string, value: unknown, max: number): string | null | undefined {
    if (value === undefined) return undefined
    if (value === null) return null
    if (typeof value !== 'string') {
      this.fail(field, `${field} must be a string`)
      return undefined
    }
    if (!this.storable(field, value)) return undefined
    const text = value.trim()
    if (text.length > max) {
      this.fail(field, `${field} must be at most ${max} characters`)
      return undefined
    }
    return text
  }

  /**
   * Text both databases can store as given: PostgreSQL refuses NUL in text, and a lone UTF-16
   * surrogate has no UTF-8 form (drivers would silently swap it for U+FFFD). Refused alike on both.
   */
  storable(field: string, value: string): boolean {
    const problem = textProblem(value)
    if (problem) this.fail(field, `${field} ${problem}`)
    return !problem
  }

  /** Optional nullable text where an empty string means "none". */
  nullable(field: string, value: unknown, max: number): string | null | undefined {
    const text = this.optional(field, value, max)
    return text === '' ? null : text
  }

  check() {
    if (this.details.length) throw validationError(this.details)
  }
}

export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Why a string cannot be stored as given (NUL, unpaired surrogate), or null when it can. */
export function textProblem(value: string): string | null {
  if (value.includes('\u0000')) return 'must not contain NUL characters'
  if (LONE_SURROGATE.test(value)) return 'must not contain unpaired UTF-16 surrogates'
  return null
}

/** True when `value` is a string the databases can store and compare as given. */
export const isStorableText = (value: string) => textProblem(value) === null
