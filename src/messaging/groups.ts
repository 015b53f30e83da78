import type { Deps } from '../deps.js'
import type { Db, Tx } from '../db/client.js'
import { Prisma } from '../generated/sqlite/client.js'
import { AppError, isUniqueViolation, notFound } from '../core/errors.js'
import { InputRules, LIMITS, isStorableText } from './input-rules.js'
import { simKey } from './mobile.js'
import { searchKey } from './search-text.js'
import { checkGroupSim } from '../sms/sims.js'
import type { Env } from '../core/env.js'
import { rawDate, type PageRequest } from './paging.js'
import { rowCount } from '../db/row-count.js'
import { retryWriteConflicts } from '../db/write-conflict.js'
import type { Group } from '../generated/sqlite/client.js'

export interface GroupInput {
  name?: string | null
  description?: string | null
  subscribable?: boolean | null
  subscriptionAutoresponse?: string | null
  unsubscribeAutoresponse?: string | null
  subscriptionSim?: string | null
  optinCode?: string | null
  optoutCode?: string | null
}

type GroupData = Omit<Prisma.GroupUncheckedCreateInput, 'accountId' | 'nameKey' | 'searchText'>

function readGroupInput(input: GroupInput, { creating }: { creating: boolean }): Partial<GroupData> {
  const rules = new InputRules()
  const data: Partial<GroupData> = {}
  if (creating || input.name !== undefined) data.name = rules.required('name', input.name, LIMITS.name)
  const description = rules.optional('description', input.description, LIMITS.description)
  if (description !== undefined) data.description = description ?? ''
  if (input.subscribable !== undefined) {
    if (input.subscribable !== null && typeof input.subscribable !== 'boolean') rules.fail('subscribable', 'subscribable must be a boolean')
    else data.subscribable = input.subscribable ?? false
  }
  const texts = [
    ['subscriptionAutoresponse', LIMITS.autoresponse],
    ['unsubscribeAutoresponse', LIMITS.autoresponse],
    ['subscriptionSim', LIMITS.text],
    ['optinCode', LIMITS.code],
    ['optoutCode', LIMITS.code],
  ] as const
  for (const [field, max] of texts) {
    const value = rules.nullable(field, input[field], max)
    if (value !== undefined) data[field] = value
  }
  rules.check()
  return data
}

const searchTextOf = (name: string, description: string) => searchKey(`${name}\n${description}`)

/** Creates a group, or answers the existing one of the same name (case-insensitive) untouched. */
export async function createGroup({ db, env }: Pick<Deps, 'db' | 'env'>, accountId: string, input: GroupInput) {
  const data = readGroupInput(input, { creating: true }) as GroupData
  const nameKey = data.name.toLowerCase()
  const existing = await db.group.findUnique({ where: { accountId_nameKey: { accountId, nameKey } } })
  if (existing) return { group: existing, created: false }
  try {
    const group = await retryWriteConflicts(() =>
      db.$transaction(async (tx) => {
        const group = await tx.group.create({
          data: { ...data, accountId, nameKey, searchText: searchTextOf(data.name, data.description ?? '') },
        })
        await syncSimCodes(tx, group, env)
        return group
      }),
    )
    return { group, created: true }
  } catch (error) {
    if (!isUniqueViolation(error)) throw error
    // Lost a race with a create of the same name: that group exists now.
    const raced = await db.group.findUnique({ where: { accountId_nameKey: { accountId, nameKey } } })
    if (raced) return { group: raced, created: false }
    throw codeConflict()
  }
}

export async function updateGroup({ db, env }: Pick<Deps, 'db' | 'env'>, accountId: string, groupId: string, input: GroupInput) {
  const changes = readGroupInput(input, { creating: false })
  if (!isStorableText(groupId)) throw notFound('Group')
  try {
    // Two updates that swap codes on one SIM delete and insert the same SimCode keys in opposite
    // orders, and PostgreSQL may break that deadlock by aborting one (40P01): it runs again, and
    // then either finds its code free or answers the 409 below.
    return await retryWriteConflicts(() =>
      db.$transaction(async (tx) => {
        const current = await tx.group.findFirst({ where: { id: groupId, accountId } })
        if (!current) throw notFound('Group')
        const name = changes.name ?? current.name
        const description = changes.description ?? current.description
        const nameKey = name.toLowerCase()
        if (nameKey !== current.nameKey) {
          const clash = await tx.group.findUnique({ where: { accountId_nameKey: { accountId, nameKey } }, select: { id: true } })
          if (clash) throw new AppError('CONFLICT', `A group named "${name}" already exists`)
        }
        const group = await tx.group.update({
          where: { id: current.id },
          data: { ...changes, nameKey, searchText: searchTextOf(name, description) },
        })
        await syncSimCodes(tx, group, env)
        return group
      }),
    )
  } catch (error) {
    if (isUniqueViolation(error)) throw codeConflict()
    throw error
  }
}

const codeConflict = () => new AppError('CONFLICT', 'The opt-in or opt-out code is already used on this SIM (or the name by another group)')

/** Keeps SimCode rows equal to the group's codes; the primary key refuses a code used twice on one SIM. */
async function syncSimCodes(
  tx: Tx,
  group: {
    id: string
    accountId: string
    subscribable: boolean
    subscriptionSim: string | null
    optinCode: string | null
    optoutCode: string | null
  },
  env: Pick<Env, 'DEFAULT_COUNTRY' | 'SMS_GATEWAY'>,
) {
  await tx.simCode.deleteMany({ where: { groupId: group.id } })
  if (!group.subscriptionSim) return
  const sim = simKey(group.subscriptionSim, env.DEFAULT_COUNTRY)
  if (group.subscribable) await checkGroupSim(tx, group.accountId, sim, env.SMS_GATEWAY)
  const rows = (
    [
      ['optin', group.optinCode],
      ['optout', group.optoutCode],
    ] as const
  )
    .filter(([, code]) => code)
    .map(([kind, code]) => ({ accountId: group.accountId, sim, code: code!.trim().toLowerCase(), groupId: group.id, kind }))
  if (rows.length === 2 && rows[0]!.code === rows[1]!.code) {
    throw new AppError('CONFLICT', 'The opt-in and opt-out codes of a group must differ')
  }
  if (rows.length) await tx.simCode.createMany({ data: rows })
}

export async function deleteGroup({ db }: Pick<Deps, 'db'>, accountId: string, groupId: string) {
  if (!isStorableText(groupId)) throw notFound('Group')
  // Contacts stay; memberships and codes go with the group (cascade).
  const { count } = await db.group.deleteMany({ where: { id: groupId, accountId } })
  if (count === 0) throw notFound('Group')
  return groupId
}

/** Prisma's own form of the list filter: what listGroups replaces, and what the tests compare it with. */
export function groupListWhere(accountId: string, request: Pick<PageRequest, 'searchKey'>): Prisma.GroupWhereInput {
  return { accountId, ...(request.searchKey ? { searchText: { contains: request.searchKey } } : {}) }
}

/** Every scalar column of Group but searchText: what a Group object holds (the GraphQL type is not in select mode). */
const GROUP_COLUMNS = [
  'id',
  'accountId',
  'name',
  'nameKey',
  'description',
  'subscribable',
  'subscriptionAutoresponse',
  'unsubscribeAutoresponse',
  'subscriptionSim',
  'optinCode',
  'optoutCode',
  'memberCount',
  'createdAt',
  'updatedAt',
] as const
export const GROUP_LIST_COLUMNS: ReadonlySet<string> = new Set(GROUP_COLUMNS)

export const GROUP_ORDERS = ['NAME_ASC', 'NAME_DESC', 'SIZE_ASC', 'SIZE_DESC'] as const
export type GroupOrder = (typeof GROUP_ORDERS)[number]
/** The order of the REST list and of every list without `orderBy`. */
export const DEFAULT_GROUP_ORDER: GroupOrder = 'NAME_ASC'

/** Each order's keys, all in one direction, the uuid last; each has its index (migration list_orders). */
export function groupSort(order: GroupOrder): { keys: readonly ('nameKey' | 'memberCount' | 'id')[]; descending: boolean } {
  return { keys: order.startsWith('SIZE') ? ['memberCount', 'id'] : ['nameKey', 'id'], descending: order.endsWith('_DESC') }
}

/**
 * A page of the account's groups and their total in ONE statement (issue 8), by name or in `order`. Accounts hold
 * few groups, so the total is a COUNT(*) in the same statement; search is the same LIKE as Prisma's
 * `contains` (search-text.ts keeps wildcards out of the term).
 */
export async function listGroups(
  { db, dbKind }: Pick<Deps, 'db' | 'dbKind'>,
  accountId: string,
  request: Pick<PageRequest, 'searchKey' | 'skip' | 'perPage'>,
  order: GroupOrder = DEFAULT_GROUP_ORDER,
) {
  const { keys, descending } = groupSort(order)
  const orderBy = (alias: string) => Prisma.raw(keys.map((key) => `${alias}"${key}"${descending ? ' DESC' : ''}`).join(', '))
  const where = request.searchKey
    ? Prisma.sql`"accountId" = ${accountId} AND "searchText" LIKE ${`%${request.searchKey}%`}`
    : Prisma.sql`"accountId" = ${accountId}`
  const columns = Prisma.join(GROUP_COLUMNS.map((c) => Prisma.raw(`"${c}"`)))
  const result = await db.$queryRaw<
    Record<string, unknown>[]
  >(Prisma.sql`SELECT t."total", p.* FROM (SELECT COUNT(*) AS "total" FROM "Group" WHERE ${where}) t
    LEFT JOIN (SELECT ${columns} FROM "Group" WHERE ${where} ORDER BY ${orderBy('')} LIMIT ${rowCount(dbKind, request.perPage)} OFFSET ${request.skip}) p ON 1 = 1
    ORDER BY ${orderBy('p.')}`)
  const rows = result
    .filter((r) => r.id !== null && r.id !== undefined)
    .map((r) => {
      const row: Record<string, unknown> = {}
      for (const c of GROUP_COLUMNS) row[c] = r[c]
      // SQLite hands booleans back as 0/1 and dates as stored; PostgreSQL as booleans and Dates.
      row.subscribable = r.subscribable === true || Number(r.subscribable) === 1
      row.memberCount = Number(r.memberCount)
      row.createdAt = rawDate(r.createdAt)
      row.updatedAt = rawDate(r.updatedAt)
      return row as Omit<Group, 'searchText'>
    })
  return { rows, total: Number(result[0]?.total ?? 0) }
}

/** Finds the account's group or throws NOT_FOUND; `query` is Pothos' selection. */
export async function findGroup<Q extends { select?: unknown; include?: unknown }>(db: Db, accountId: string, groupId: string, query?: Q) {
  // An id no database could hold (NUL) names nothing; asking PostgreSQL would be an error.
  if (!isStorableText(groupId)) throw notFound('Group')
  const group = await db.group.findFirst({ ...(query as object), where: { id: groupId, accountId } })
  if (!group) throw notFound('Group')
  return group
}
