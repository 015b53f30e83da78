import { AppError, validationError, type ErrorDetail } from '../src/core/errors.js'

type FieldType = 'string' | 'boolean' | 'stringArray' | 'phone'

export interface FieldSpec {
  /** The GraphQL input field it feeds. */
  to: string
  type: FieldType
  required?: boolean
}

export type BodySpec = Record<string, FieldSpec>

/** The body must be a JSON object: anything else is a 400. */
export function expectObject(body: unknown, what = 'The request body'): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('BAD_REQUEST', `${what} must be a JSON object`)
  }
  return body as Record<string, unknown>
}

/**
 * Maps a legacy snake_case object onto GraphQL input fields, checking JSON types so that a wrong
 * type is a 422 naming the legacy field rather than a GraphQL coercion error. Unknown fields are
 * ignored unless `strict`. Content rules (trim, bounds, formats) stay in the domain functions.
 */
export function readFields(
  source: Record<string, unknown>,
  spec: BodySpec,
  options: { strict?: boolean; prefix?: string; details?: ErrorDetail[] } = {},
): Record<string, unknown> {
  const details = options.details ?? []
  const prefix = options.prefix ?? ''
  const out: Record<string, unknown> = {}
  // Keys, not entries: add-contacts reads 10,000 items through here, and an entry is an array each.
  for (const name of Object.keys(source)) {
    // Own properties only: a body key such as `constructor` or `__proto__` must not find Object.prototype's.
    const field = Object.hasOwn(spec, name) ? spec[name] : undefined
    if (!field) {
      if (options.strict) details.push({ field: prefix + name, message: `${name} is not a field that can be changed` })
      continue
    }
    const value = source[name]
    const problem = typeProblem(field.type, value)
    if (problem) details.push({ field: prefix + name, message: `${name} ${problem}` })
    else out[field.to] = coerce(field.type, value)
  }
  for (const name of requiredOf(spec)) {
    const value = Object.hasOwn(source, name) ? source[name] : undefined
    if (value === undefined || value === null) details.push({ field: prefix + name, message: `${name} is required` })
  }
  if (!options.details && details.length) throw validationError(details)
  return out
}

const requiredFields = new WeakMap<BodySpec, string[]>()
/** The spec's required fields, in its order; worked out once a spec. */
function requiredOf(spec: BodySpec): string[] {
  let names = requiredFields.get(spec)
  if (!names) requiredFields.set(spec, (names = Object.keys(spec).filter((name) => spec[name]!.required)))
  return names
}

function typeProblem(type: FieldType, value: unknown): string | null {
  if (value === null) return null
  switch (type) {
    case 'string':
      return typeof value === 'string' ? null : 'must be a string'
    case 'phone':
      return typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value)) ? null : 'must be a string'
    case 'boolean':
      return typeof value === 'boolean' || value === 0 || value === 1 ? null : 'must be true or false'
    case 'stringArray':
      return Array.isArray(value) && value.every((v) => typeof v === 'string') ? null : 'must be an array of strings'
  }
}

function coerce(type: FieldType, value: unknown): unknown {
  if (value === null) return null
  if (type === 'boolean') return value === true || value === 1
  if (type === 'phone') return String(value)
  return value
}
