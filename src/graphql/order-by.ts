import { builder } from './builder.js'

/**
 * A list's `orderBy` enum: one value per order, each with its meaning. Every order is total (ties
 * broken by the id) and served by an index (test/list-orders.test.ts shows the plans); a keyset
 * cursor names the order it came from.
 */
export function orderByEnum<O extends string>(name: string, list: string, meanings: Record<O, string>) {
  return builder.enumType(name, {
    description: `The order of ${list}. Each is a total order served by an index; a cursor is valid only under the order it came from.`,
    values: Object.fromEntries(Object.entries(meanings).map(([order, description]) => [order, { description }])) as Record<
      O,
      { description: string }
    >,
  })
}
