// Relay connections over Prisma models, next to the offset pages. The rows of a page come from one
// `findMany` that carries Pothos' selection for `edges.node` (relations included, as prismaField
// does), a keyset bound from the cursors (keyset.ts) and the list's own filter; totalCount is a
// separate read that only runs when selected.
import { queryFromInfo } from '@pothos/plugin-prisma'
import type { GraphQLResolveInfo } from 'graphql'
import { builder } from './builder.js'
import type { Context } from './context.js'
import { keysetConnection, planKeysetPage, type ConnectionArgs, type KeysetOrder, type KeysetPlan } from './keyset.js'

builder.globalConnectionField('totalCount', (t) =>
  t.int({
    description: 'How many rows the whole connection holds (its filter, all pages). Counted only when selected.',
    resolve: (connection) => connection.totalCount(),
  }),
)

export interface PrismaConnectionSpec<Row> {
  /** The GraphQL type of the nodes (its Pothos selection is read from `edges.node`). */
  typeName: string
  order: KeysetOrder
  /** The list's filter: account, search, status... */
  where: Record<string, unknown>
  /** The page's rows; `plan` holds the cursors' values and the reading direction, for a reader that builds its own statement. */
  findMany: (
    query: { where: Record<string, unknown>; orderBy: Record<string, 'asc' | 'desc'>[]; take: number },
    plan: KeysetPlan,
  ) => Promise<Row[]>
  totalCount: () => Promise<number>
}

/** The pageInfo flag facing away from the reading direction: whether a row lies at or behind the cursor the page starts from. */
type BehindSpec =
  /** Whether a row matches `where` (the list's filter and that bound). */
  | { findFirst: (query: { where: Record<string, unknown>; select: { id: true } }) => Promise<unknown>; behind?: never }
  /** Read by the list itself, from the plan's cursors. */
  | { behind: (plan: KeysetPlan) => Promise<boolean>; findFirst?: never }

export async function prismaConnection<Row extends object>(
  ctx: Context,
  info: GraphQLResolveInfo,
  args: ConnectionArgs,
  spec: PrismaConnectionSpec<Row> & BehindSpec,
) {
  const plan = planKeysetPage(spec.order, args)
  // The order's columns are always read: the cursors are made of them.
  const select = Object.fromEntries(spec.order.columns.map((c) => [c.field, true]))
  const selection = (await queryFromInfo({
    context: ctx,
    info,
    typeName: spec.typeName,
    select,
    paths: [['edges', 'node']],
    awaitSelections: true,
  })) as Record<string, unknown>
  const rows = await spec.findMany(
    {
      ...selection,
      where: { AND: [spec.where, plan.query.where] },
      orderBy: plan.query.orderBy,
      take: plan.query.take,
    },
    plan,
  )
  const { behind, findFirst } = spec
  const connection = keysetConnection(
    plan,
    rows,
    behind
      ? () => behind(plan)
      : async (where) => (await findFirst({ where: { AND: [spec.where, where] }, select: { id: true } })) !== null,
  )
  let total: Promise<number> | undefined
  return { ...connection, totalCount: () => (total ??= spec.totalCount()) }
}

export type { ConnectionArgs }
