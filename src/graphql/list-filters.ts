// The filters of the lists (GraphQL `filter:` arguments) as Prisma conditions. A filter that can
// match nothing by construction (an empty set of statuses, a time window that ends before it
// starts) is a mistake of the caller's, refused with VALIDATION_FAILED naming the field, not an
// empty page.
import { validationError, type ErrorDetail } from '../core/errors.js'

export interface DateTimeRange {
  from?: Date | null
  before?: Date | null
}

/** A filter on a set of values of one column and a time window on another. */
export interface ListFilter {
  /** The argument's name, for the errors' fields (`filter`). */
  argument: string
  set: { field: string; column: string; values: readonly string[] | null | undefined }
  range: { field: string; column: string; value: DateTimeRange | null | undefined }
}

/** The filter's conditions, to AND with the list's own (nothing for what is not given); a filter that matches nothing by construction throws. */
export function listFilterWhere({ argument, set, range }: ListFilter): Record<string, unknown>[] {
  const details: ErrorDetail[] = []
  const conditions: Record<string, unknown>[] = []
  if (set.values) {
    if (set.values.length === 0)
      details.push({ field: `${argument}.${set.field}`, message: `${argument}.${set.field} must name at least one value` })
    conditions.push({ [set.column]: { in: [...new Set(set.values)] } })
  }
  const { from, before } = range.value ?? {}
  if (from && before && from.getTime() >= before.getTime())
    details.push({ field: `${argument}.${range.field}`, message: `${argument}.${range.field}: from must be earlier than before` })
  if (from || before) conditions.push({ [range.column]: { ...(from ? { gte: from } : {}), ...(before ? { lt: before } : {}) } })
  if (details.length) throw validationError(details)
  return conditions
}
