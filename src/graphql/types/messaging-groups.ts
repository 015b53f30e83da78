import { builder, type BuilderTypes } from '../builder.js'
import { orderByEnum } from '../order-by.js'
import { DeletedPayload, OffsetPageInfoRef, listArgs } from './common.js'
import { pageInfo, pageRequest, type PageRequest } from '../../messaging/paging.js'
import type { Group as GroupRow } from '../../generated/sqlite/client.js'
import {
  DEFAULT_GROUP_ORDER,
  GROUP_LIST_COLUMNS,
  GROUP_ORDERS,
  createGroup,
  deleteGroup,
  findGroup,
  groupListWhere,
  groupSort,
  listGroups,
  updateGroup,
  type GroupOrder,
} from '../../messaging/groups.js'
import { prismaConnection } from '../connections.js'
import type { KeysetOrder } from '../keyset.js'
import type { Context } from '../context.js'
import { publishGroupDeleted } from '../../live/membership-events.js'
import { accountScoped } from '../account-scoped.js'
import { localId } from '../node-id.js'

export const Group = builder.prismaNode('Group', {
  description: 'A contact group. Subscribable groups take SMS opt-in and opt-out codes on a hosted SIM.',
  id: { field: 'id', description: 'The global id (Relay); `uuid` is the database id.' },
  // node(id:) finds only the key's account's groups: another account's id answers null.
  findUnique: accountScoped,
  nullable: true,
  fields: (t) => ({
    uuid: t.exposeID('id', { description: 'The group uuid (the REST `reference`).' }),
    name: t.exposeString('name', { description: 'Unique per account, case-insensitively.' }),
    description: t.exposeString('description', { description: 'Free text; empty when none.' }),
    subscribable: t.exposeBoolean('subscribable', {
      description: 'Whether people can join and leave by SMS codes sent to subscriptionSim.',
    }),
    subscriptionAutoresponse: t.exposeString('subscriptionAutoresponse', {
      nullable: true,
      description: 'SMS sent to a person who subscribes.',
    }),
    unsubscribeAutoresponse: t.exposeString('unsubscribeAutoresponse', {
      nullable: true,
      description: 'SMS sent to a person who unsubscribes.',
    }),
    subscriptionSim: t.exposeString('subscriptionSim', {
      nullable: true,
      description: "The account's hosted SIM that receives the codes.",
    }),
    optinCode: t.exposeString('optinCode', { nullable: true, description: 'The text that subscribes a sender (case-insensitive).' }),
    optoutCode: t.exposeString('optoutCode', { nullable: true, description: 'The text that unsubscribes a sender (case-insensitive).' }),
    contactCount: t.exposeInt('memberCount', {
      description: 'How many contacts are on the group (its size, as `orderBy: SIZE_ASC` sorts it).',
    }),
    subscriberCount: t.relationCount('memberships', {
      description: 'Contacts currently on the group by SMS opt-in.',
      where: { selfSubscribed: true },
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created.' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When it last changed.' }),
  }),
})

const ORDER_MEANING: Record<GroupOrder, string> = {
  NAME_ASC: 'By lower-cased name, then uuid: the default, and the REST order.',
  NAME_DESC: 'NAME_ASC reversed.',
  SIZE_ASC: 'Smallest first (contactCount), then by uuid.',
  SIZE_DESC: 'Largest first (contactCount), then by uuid descending.',
}

const GroupOrderByEnum = orderByEnum('GroupOrderBy', 'a group list', ORDER_MEANING)

interface GroupPageSource {
  accountId: string
  request: PageRequest
  order: GroupOrder
  /** The page and its total: one statement, started by whichever of nodes and pageInfo resolves first. */
  loaded?: ReturnType<typeof listGroups>
}

const loadPage = (source: GroupPageSource, ctx: Context) =>
  (source.loaded ??= listGroups(ctx.deps, source.accountId, source.request, source.order))

const GroupPage = builder.objectRef<GroupPageSource>('GroupPage').implement({
  description: 'One page of groups, in the order asked for (by default by name).',
  fields: (t) => ({
    nodes: t.prismaField({
      type: ['Group'],
      description: 'The groups on this page.',
      resolve: async (query, source, _args, ctx) => {
        const { rows } = await loadPage(source, ctx)
        // Relations (subscriberCount) are not in the page statement: one batched read for the page.
        const selection = query as { include?: Record<string, unknown>; select?: Record<string, unknown> }
        const relations = Object.fromEntries(
          Object.entries(selection.include ?? selection.select ?? {}).filter(([key]) => !GROUP_LIST_COLUMNS.has(key)),
        )
        if (rows.length === 0 || Object.keys(relations).length === 0) return rows as GroupRow[]
        const related = await ctx.deps.db.group.findMany({
          where: { id: { in: rows.map((r) => r.id) } },
          select: { id: true, ...relations },
        })
        const byId = new Map(related.map((r) => [r.id, r]))
        return rows.map((r) => ({ ...byId.get(r.id), ...r })) as GroupRow[]
      },
    }),
    pageInfo: t.field({
      type: OffsetPageInfoRef,
      description: 'Totals and position.',
      resolve: async (source, _args, ctx) => pageInfo(source.request, (await loadPage(source, ctx)).total),
    }),
  }),
})

builder.queryFields((t) => ({
  groups: t.field({
    scope: 'read',
    type: GroupPage,
    description: "The account's groups, a page at a time: by name, or in the order asked for.",
    args: {
      ...listArgs(t.arg, 'Case-insensitive substring of name or description.'),
      orderBy: t.arg({ type: GroupOrderByEnum, description: 'The order; NAME_ASC when not given.' }),
    },
    resolve: async (_root, args, ctx) => ({
      accountId: (await ctx.account()).id,
      request: pageRequest(args),
      order: args.orderBy ?? DEFAULT_GROUP_ORDER,
    }),
  }),
  group: t.prismaField({
    scope: 'read',
    type: 'Group',
    nullable: true,
    description: 'A group of the account by uuid. Null, with a NOT_FOUND error, when there is none.',
    args: { id: t.arg.id({ required: true, description: 'The group uuid or global id.' }) },
    resolve: async (query, _root, { id }, ctx) => findGroup(ctx.deps.db, (await ctx.account()).id, localId(id, 'Group'), query),
  }),
}))

const groupFields = (required: boolean) => (t: PothosSchemaTypes.InputFieldBuilder<BuilderTypes, 'InputObject'>) => ({
  name: t.string({ required, description: 'Unique per account, case-insensitively; at most 100 characters.' }),
  description: t.string({ description: 'Free text, at most 2,000 characters.' }),
  subscribable: t.boolean({ description: 'Whether people can join and leave by SMS codes sent to subscriptionSim.' }),
  subscriptionAutoresponse: t.string({ description: 'SMS sent to a person who subscribes.' }),
  unsubscribeAutoresponse: t.string({ description: 'SMS sent to a person who unsubscribes.' }),
  subscriptionSim: t.string({ description: "The account's hosted SIM (number or short code) that receives the codes." }),
  optinCode: t.string({ description: 'Unique per SIM, case-insensitively.' }),
  optoutCode: t.string({ description: 'Unique per SIM, case-insensitively.' }),
})

const CreateGroupInput = builder.inputType('CreateGroupInput', { description: 'A new group.', fields: groupFields(true) })
const UpdateGroupInput = builder.inputType('UpdateGroupInput', {
  description: 'Only the fields given change; null clears an optional field.',
  fields: groupFields(false),
})

const CreateGroupPayload = builder.objectRef<{ groupId: string; created: boolean }>('CreateGroupPayload').implement({
  description: 'The result of createGroup.',
  fields: (t) => ({
    group: t.prismaField({
      type: 'Group',
      description: 'The new group, or the existing one of that name.',
      resolve: (query, { groupId }, _args, ctx) => ctx.deps.db.group.findUniqueOrThrow({ ...query, where: { id: groupId } }),
    }),
    created: t.exposeBoolean('created', { description: 'False when a group of that name already existed (it is returned unchanged).' }),
  }),
})

builder.mutationFields((t) => ({
  createGroup: t.field({
    scope: 'contacts:write',
    type: CreateGroupPayload,
    description: 'Creates a group; a group of the same name (case-insensitive) is returned unchanged instead.',
    args: { input: t.arg({ type: CreateGroupInput, required: true, description: 'The group.' }) },
    resolve: async (_root, { input }, ctx) => {
      const { group, created } = await createGroup(ctx.deps, (await ctx.account()).id, input)
      return { groupId: group.id, created }
    },
  }),
  updateGroup: t.prismaField({
    scope: 'contacts:write',
    type: 'Group',
    description: 'Changes the given fields of a group. A name or code that would collide is a CONFLICT.',
    args: {
      id: t.arg.id({ required: true, description: 'The group uuid or global id.' }),
      input: t.arg({ type: UpdateGroupInput, required: true, description: 'The fields to change.' }),
    },
    resolve: async (query, _root, { id, input }, ctx) => {
      const group = await updateGroup(ctx.deps, (await ctx.account()).id, localId(id, 'Group'), input)
      return ctx.deps.db.group.findUniqueOrThrow({ ...query, where: { id: group.id } })
    },
  }),
  deleteGroup: t.field({
    scope: 'contacts:write',
    type: DeletedPayload,
    description: 'Deletes the group; its contacts stay.',
    args: { id: t.arg.id({ required: true, description: 'The group uuid or global id.' }) },
    resolve: async (_root, { id }, ctx) => {
      const accountId = (await ctx.account()).id
      const deletedId = await deleteGroup(ctx.deps, accountId, localId(id, 'Group'))
      await publishGroupDeleted(ctx.deps, accountId, deletedId)
      return { deletedId }
    },
  }),
}))

/** The keyset of each order; the default's cursors keep their name (`groups`), the others' carry the order. */
const GROUP_KEYSETS = Object.fromEntries(
  GROUP_ORDERS.map((order): [GroupOrder, KeysetOrder] => {
    const { keys, descending } = groupSort(order)
    const direction = descending ? 'desc' : 'asc'
    return [
      order,
      {
        name: order === DEFAULT_GROUP_ORDER ? 'groups' : `groups:${order}`,
        columns: keys.map((field) => ({ field, direction, type: field === 'memberCount' ? 'int' : 'string' })),
      },
    ]
  }),
) as Record<GroupOrder, KeysetOrder>

builder.queryField('groupsConnection', (t) =>
  t.connection(
    {
      scope: 'read',
      type: Group,
      description: "The account's groups as a Relay connection (cursor pagination), in the order asked for (by default that of `groups`).",
      args: {
        search: t.arg.string({ description: 'Case-insensitive substring of name or description.' }),
        orderBy: t.arg({ type: GroupOrderByEnum, description: 'The order; NAME_ASC when not given.' }),
      },
      resolve: async (_root, { orderBy, ...args }, ctx, info) => {
        const accountId = (await ctx.account()).id
        const where = groupListWhere(accountId, pageRequest({ search: args.search }))
        return prismaConnection(ctx, info, args, {
          typeName: 'Group',
          order: GROUP_KEYSETS[orderBy ?? DEFAULT_GROUP_ORDER],
          where,
          findMany: (query) => ctx.deps.db.group.findMany(query),
          findFirst: (query) => ctx.deps.db.group.findFirst(query),
          // Accounts hold few groups: a COUNT, as the pages do.
          totalCount: () => ctx.deps.db.group.count({ where }),
        })
      },
    },
    {
      name: 'GroupConnection',
      description: 'Groups in the order asked for; by default by lower-cased name, then uuid (the order of the `groups` pages).',
    },
    { name: 'GroupEdge', description: 'A group and its cursor.' },
  ),
)
