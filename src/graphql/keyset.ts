// Relay cursor connections over a total order (keyset pagination). A cursor holds the row's values
// of the order's columns, not an offset and not only an id: the next page is "the rows after these
// values", which stays exact while rows are inserted or deleted between requests, even when the
// row a cursor came from is deleted (Prisma's own `cursor` option looks that row up again, and
// answers an empty page once it is gone).
import { AppError } from '../core/errors.js'
import { MAX_PER_PAGE, DEFAULT_PER_PAGE } from '../messaging/paging.js'
import { isStorableText } from '../messaging/input-rules.js'

export interface KeysetColumn {
  field: string
  direction: 'asc' | 'desc'
  type: 'string' | 'date' | 'int'
}

/**
 * A total order: the last column is unique (the id, or a column unique in the list such as a
 * contact's mobile). `name` tags the cursors, so a cursor of one order is refused by another. The
 * orders of one connection share the part of their names before a colon (`contacts`,
 * `contacts:MOBILE_ASC`): a cursor of the same connection under another `orderBy` is refused with
 * words that say so.
 */
export interface KeysetOrder {
  name: string
  columns: readonly KeysetColumn[]
}

/** The connection an order's cursors belong to: its name before any `:ORDER`. */
const connectionOf = (name: string) => name.split(':')[0]

/** Newest first: creation time, then the id (descending) as the last tiebreak (messages, webhook deliveries). */
export const newestFirst = (name: string): KeysetOrder => ({
  name,
  columns: [
    { field: 'createdAt', direction: 'desc', type: 'date' },
    { field: 'id', direction: 'desc', type: 'string' },
  ],
})

export interface ConnectionArgs {
  first?: number | null
  last?: number | null
  after?: string | null
  before?: string | null
}

/** What one page read asks the database for: spread into `findMany` next to the list's own filter. */
export interface KeysetQuery {
  where: Record<string, unknown>
  orderBy: Record<string, 'asc' | 'desc'>[]
  take: number
}

export interface Edge<Row> {
  cursor: string
  node: Row
}

export interface KeysetConnection<Row> {
  edges: Edge<Row>[]
  pageInfo: {
    startCursor: string | null
    endCursor: string | null
    /** A getter answering a promise when it needs a query (GraphQL awaits it): read only when selected. */
    hasNextPage: boolean
    hasPreviousPage: boolean
  }
}

/** The most rows one page returns: the offset pages' perPage maximum. */
export const MAX_CONNECTION_SIZE = MAX_PER_PAGE
export const DEFAULT_CONNECTION_SIZE = DEFAULT_PER_PAGE

type Values = (string | Date | number)[]

export function encodeCursor(order: KeysetOrder, row: object): string {
  const values = order.columns.map(({ field, type }) => {
    const value = (row as Record<string, unknown>)[field]
    if (type === 'date') return (value as Date).toISOString()
    return String(value)
  })
  return Buffer.from(JSON.stringify([order.name, ...values]), 'utf8').toString('base64url')
}

/** The values a cursor holds, checked against the order; anything else is a BAD_REQUEST naming the argument. */
export function decodeCursor(order: KeysetOrder, argument: 'after' | 'before', cursor: string): Values {
  const refuse = () => new AppError('BAD_REQUEST', `${argument} is not a cursor of this connection`)
  if (cursor.length > 2000 || !/^[A-Za-z0-9_-]*$/.test(cursor)) throw refuse()
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    throw refuse()
  }
  if (!Array.isArray(parsed)) throw refuse()
  // A position under one order is no position under another: its values are other columns'.
  if (typeof parsed[0] === 'string' && parsed[0] !== order.name && connectionOf(parsed[0]) === connectionOf(order.name))
    throw new AppError(
      'BAD_REQUEST',
      `${argument} is a cursor of another orderBy: use it with the orderBy it came from, or start without a cursor`,
    )
  if (parsed.length !== order.columns.length + 1 || parsed[0] !== order.name) throw refuse()
  return order.columns.map(({ type }, i) => {
    const value = parsed[i + 1]
    if (typeof value !== 'string') throw refuse()
    // Column values are ordinary text; NUL or a lone surrogate is no value any row holds.
    if (value.length > 1000 || !isStorableText(value)) throw refuse()
    if (type === 'string') return value
    if (type === 'int') {
      if (!/^-?\d{1,15}$/.test(value)) throw refuse()
      return Number(value)
    }
    const date = new Date(value)
    if (Number.isNaN(date.getTime()) || date.toISOString() !== value) throw refuse()
    return date
  })
}

const flip = (direction: 'asc' | 'desc') => (direction === 'asc' ? 'desc' : 'asc')

/**
 * Rows strictly after (`side` 'after') or strictly before ('before') the position `values` in the
 * order, or at it too when `inclusive`. The leading column's bound is repeated outside the OR so
 * the (account, first column, ...) index can start there.
 */
function positionWhere(order: KeysetOrder, values: Values, side: 'after' | 'before', inclusive = false): Record<string, unknown> {
  const branches: Record<string, unknown>[] = []
  order.columns.forEach((column, i) => {
    const ascending = (column.direction === 'asc') === (side === 'after')
    const last = i === order.columns.length - 1
    const op = ascending ? (inclusive && last ? 'gte' : 'gt') : inclusive && last ? 'lte' : 'lt'
    const branch: Record<string, unknown> = {}
    for (let j = 0; j < i; j += 1) branch[order.columns[j]!.field] = values[j]
    branch[column.field] = { [op]: values[i] }
    branches.push(branch)
  })
  const lead = order.columns[0]!
  const leadOp = (lead.direction === 'asc') === (side === 'after') ? 'gte' : 'lte'
  return { AND: [{ [lead.field]: { [leadOp]: values[0] } }, { OR: branches }] }
}

function pageSize(name: 'first' | 'last', value: number | null | undefined): number | null {
  if (value === null || value === undefined) return null
  if (!Number.isInteger(value) || value < 0) throw new AppError('BAD_REQUEST', `${name} must be a whole number from 0`)
  if (value > MAX_CONNECTION_SIZE) throw new AppError('BAD_REQUEST', `${name} must be at most ${MAX_CONNECTION_SIZE}`)
  return value
}

export interface KeysetPlan {
  order: KeysetOrder
  args: ConnectionArgs
  size: number
  backward: boolean
  after: Values | null
  before: Values | null
  query: KeysetQuery
}

/** Checks the arguments and builds the page read: forward with `first` (or neither), backward with `last`. */
export function planKeysetPage(order: KeysetOrder, args: ConnectionArgs): KeysetPlan {
  const first = pageSize('first', args.first)
  const last = pageSize('last', args.last)
  if (first !== null && last !== null) throw new AppError('BAD_REQUEST', 'first and last cannot be used together')
  const after = args.after === null || args.after === undefined ? null : decodeCursor(order, 'after', args.after)
  const before = args.before === null || args.before === undefined ? null : decodeCursor(order, 'before', args.before)
  const backward = last !== null
  const size = first ?? last ?? DEFAULT_CONNECTION_SIZE
  const bounds = [...(after ? [positionWhere(order, after, 'after')] : []), ...(before ? [positionWhere(order, before, 'before')] : [])]
  const orderBy = order.columns.map(({ field, direction }) => ({ [field]: backward ? flip(direction) : direction }))
  // One row more than the page tells whether more follow in the reading direction.
  return { order, args, size, backward, after, before, query: { where: bounds.length ? { AND: bounds } : {}, orderBy, take: size + 1 } }
}

/**
 * The connection from the rows the plan's query read. The flag facing away from the reading
 * direction (hasPreviousPage when paging forward from `after`, hasNextPage when paging backward
 * from `before`) needs a query of its own; `exists` runs it only when the flag is selected.
 */
export function keysetConnection<Row extends object>(
  plan: KeysetPlan,
  rows: Row[],
  exists: (where: Record<string, unknown>) => Promise<boolean>,
): KeysetConnection<Row> {
  const more = rows.length > plan.size
  const page = rows.slice(0, plan.size)
  if (plan.backward) page.reverse()
  const edges = page.map((node) => ({ cursor: encodeCursor(plan.order, node), node }))
  const lazy = (where: Record<string, unknown>) => {
    let answer: Promise<boolean> | undefined
    return () => (answer ??= exists(where))
  }
  const behind = plan.backward
    ? plan.before && lazy(positionWhere(plan.order, plan.before, 'after', true))
    : plan.after && lazy(positionWhere(plan.order, plan.after, 'before', true))
  const pageInfo = {
    startCursor: edges[0]?.cursor ?? null,
    endCursor: edges[edges.length - 1]?.cursor ?? null,
    hasNextPage: plan.backward ? false : more,
    hasPreviousPage: plan.backward ? more : false,
  }
  if (behind) Object.defineProperty(pageInfo, plan.backward ? 'hasNextPage' : 'hasPreviousPage', { get: behind, enumerable: true })
  return { edges, pageInfo }
}
