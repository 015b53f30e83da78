import { publishJoins, publishLeaves, withContactRemoval } from '../../live/membership-events.js'
import { builder } from '../builder.js'
import { orderByEnum } from '../order-by.js'
import { CONTACT_SEARCH, DeletedPayload, OffsetPageInfoRef, listArgs } from './common.js'
import { queryFromInfo } from '@pothos/plugin-prisma'
import type { GraphQLResolveInfo } from 'graphql'
import type { Contact as ContactRow } from '../../generated/sqlite/client.js'
import { pageInfo, pageRequest, type PageInput, type PageRequest } from '../../messaging/paging.js'
import { deleteContact } from '../../messaging/contacts.js'
import { addContactsToGroup, delistContacts, saveContact } from '../../messaging/upsert-contacts.js'
import {
  CONTACT_LIST_COLUMNS,
  contactListWhere,
  findContact,
  isTrigramTerm,
  listColumns,
  listContacts,
  type ContactListColumn,
  type ContactListPage,
} from '../../messaging/contact-list.js'
import { contactListTotal } from '../../messaging/list-totals.js'
import { searchPageIds } from '../../messaging/contact-search-page.js'
import { connectionPageRows, contactsByIds, rowAtOrBehind } from '../../messaging/contact-connection-page.js'
import { prismaConnection, type ConnectionArgs } from '../connections.js'
import type { KeysetOrder } from '../keyset.js'
import {
  CONTACT_ORDERS,
  DEFAULT_CONTACT_ORDER,
  contactSort,
  listContactsInOrder,
  type ContactOrder,
} from '../../messaging/contact-orders.js'
import type { Context } from '../context.js'
import { Group } from './messaging-groups.js'
import { accountScoped } from '../account-scoped.js'
import { rememberedPlan } from '../remembered-plan.js'
import { localId } from '../node-id.js'

/** One meaning per contact field, for the output type and the input alike. */
const FIELD = {
  firstName: 'First name; at most 200 characters.',
  familyName: 'Family name; empty when unknown.',
  otherNames: 'Middle or other names.',
  email: 'Email address.',
  gender: 'Free text; empty when unknown.',
  organization: 'Company or organization.',
  whatsappNumber: 'WhatsApp number.',
  viberNumber: 'Viber number.',
  skypeId: 'Skype id.',
  facebook: 'Facebook profile.',
  twitter: 'Twitter/X handle.',
  linkedin: 'LinkedIn profile.',
  groupme: 'GroupMe id.',
  wechat: 'WeChat id.',
  youtube: 'YouTube channel.',
} as const

export const Contact = builder.prismaNode('Contact', {
  description: 'A person reachable by SMS, identified by mobile number within the account.',
  // Select mode: a query reads only the columns its fields need (issue 8, narrow selects).
  select: { id: true },
  id: { field: 'id', description: 'The global id (Relay); `uuid` is the database id.' },
  // node(id:) finds only the key's account's contacts: another account's id answers null.
  findUnique: accountScoped,
  nullable: true,
  fields: (t) => ({
    uuid: t.exposeID('id', { description: 'The contact uuid (the REST `reference`).' }),
    mobile: t.exposeString('mobile', { description: 'E.164, with the leading +.' }),
    firstName: t.exposeString('firstName', { description: FIELD.firstName }),
    familyName: t.exposeString('familyName', { description: FIELD.familyName }),
    otherNames: t.exposeString('otherNames', { nullable: true, description: FIELD.otherNames }),
    email: t.exposeString('email', { nullable: true, description: FIELD.email }),
    gender: t.exposeString('gender', { description: FIELD.gender }),
    organization: t.exposeString('organization', { nullable: true, description: FIELD.organization }),
    whatsappNumber: t.exposeString('whatsappNumber', { nullable: true, description: FIELD.whatsappNumber }),
    viberNumber: t.exposeString('viberNumber', { nullable: true, description: FIELD.viberNumber }),
    skypeId: t.exposeString('skypeId', { nullable: true, description: FIELD.skypeId }),
    facebook: t.exposeString('facebook', { nullable: true, description: FIELD.facebook }),
    twitter: t.exposeString('twitter', { nullable: true, description: FIELD.twitter }),
    linkedin: t.exposeString('linkedin', { nullable: true, description: FIELD.linkedin }),
    groupme: t.exposeString('groupme', { nullable: true, description: FIELD.groupme }),
    wechat: t.exposeString('wechat', { nullable: true, description: FIELD.wechat }),
    youtube: t.exposeString('youtube', { nullable: true, description: FIELD.youtube }),
    selfSubscribed: t.boolean({
      description: 'True when the contact joined a group by SMS opt-in.',
      select: { memberships: { where: { selfSubscribed: true }, select: { groupId: true } } },
      resolve: (contact) => contact.memberships.length > 0,
    }),
    groups: t.field({
      type: [Group],
      description: 'The groups the contact is on, by name.',
      select: (_args, _ctx, nestedSelection) => ({
        memberships: { orderBy: { group: { nameKey: 'asc' } }, select: { group: nestedSelection(true) } },
      }),
      resolve: (contact) => contact.memberships.map((m) => m.group),
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created.' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When it last changed.' }),
  }),
})

const ORDER_MEANING: Record<ContactOrder, string> = {
  NAME_ASC: 'Alphabetical by first name, then family name (case-insensitive), then uuid: the default, and the REST order.',
  NAME_DESC: 'NAME_ASC reversed.',
  MOBILE_ASC: 'By mobile number (E.164 as text).',
  MOBILE_DESC: 'MOBILE_ASC reversed.',
  CREATED_AT_ASC: 'Oldest first, then by uuid.',
  CREATED_AT_DESC: 'Newest first, then by uuid descending.',
  UPDATED_AT_ASC: 'Least recently changed first, then by uuid.',
  UPDATED_AT_DESC: 'Most recently changed first, then by uuid descending.',
}

export const ContactOrderByEnum = orderByEnum('ContactOrderBy', 'a contact list', ORDER_MEANING)

interface ContactPageSource {
  accountId: string
  groupId?: string
  request: PageRequest
  order: ContactOrder
  /** Pothos' selection for `nodes`, read from the operation when the page is made (even if pageInfo resolves first). */
  nodesQuery: { select?: Record<string, unknown>; include?: Record<string, unknown> }
  /** The page and its total: one statement, started by whichever of nodes and pageInfo resolves first. */
  loaded?: Promise<ContactListPage>
  /** The columns that statement reads. */
  columns?: Set<string>
}

type NodesQuery = ContactPageSource['nodesQuery']
const COLUMN_SET = new Set<string>(CONTACT_LIST_COLUMNS)

/** The selection under a page's `nodes` (every alias of it), planned once per document where it can be (remembered-plan.ts). */
const planPageNodes = rememberedPlan(
  (ctx: Context, info) => Object.freeze(queryFromInfo({ context: ctx, info, typeName: 'Contact', path: ['nodes'] })) as NodesQuery,
)

/**
 * The query of one `nodes` field, as `prismaField` would plan it. Planning a selection with
 * relations records where their rows go (Pothos' loader mappings, per request), so only a plan of
 * columns alone is reused: the exposed-columns plugin answers those from the row.
 */
const planNodes = rememberedPlan(
  (ctx: Context, info) => queryFromInfo({ context: ctx, info, awaitSelections: false }) as NodesQuery,
  (query) => !query.include && Object.entries(query.select ?? {}).every(([key, value]) => value === true && COLUMN_SET.has(key)),
)

function contactPage(
  ctx: Context,
  info: GraphQLResolveInfo,
  accountId: string,
  args: PageInput & { orderBy?: ContactOrder | null },
  groupId?: string,
): ContactPageSource {
  const order = args.orderBy ?? DEFAULT_CONTACT_ORDER
  return { accountId, groupId, request: pageRequest(args), order, nodesQuery: planPageNodes(ctx, info) }
}

function loadPage(source: ContactPageSource, ctx: Context) {
  // Contact is in select mode, so `select` names exactly the columns the operation reads.
  if (!source.loaded) {
    const columns = listColumns(source.nodesQuery.select)
    source.columns = new Set(columns)
    // The default order keeps its own path (contact-list.ts); the others are contact-orders.ts's.
    source.loaded =
      source.order === DEFAULT_CONTACT_ORDER
        ? listContacts(ctx.deps, source, columns)
        : listContactsInOrder(ctx.deps, source, columns, source.order)
  }
  return source.loaded
}

export const ContactPage = builder.objectRef<ContactPageSource>('ContactPage').implement({
  description: 'One page of contacts, in the order asked for (by default alphabetical by first name, then family name).',
  fields: (t) => ({
    nodes: t.field({
      type: [Contact],
      description: 'The contacts on this page.',
      resolve: async (source, _args, ctx, info) => {
        const query = planNodes(ctx, info)
        const { rows } = await loadPage(source, ctx)
        // Relations (groups, selfSubscribed) are not in the page statement: one batched read for
        // the whole page, then Prisma's own batched reads per relation level; never one per row.
        // Columns only another alias of `nodes` asks for come with that read too.
        const selection = query.select ?? query.include ?? {}
        const relations = Object.fromEntries(Object.entries(selection).filter(([key]) => !COLUMN_SET.has(key) || !source.columns!.has(key)))
        if (rows.length === 0 || Object.keys(relations).length === 0) return rows as unknown as ContactRow[]
        const related = await ctx.deps.db.contact.findMany({
          where: { id: { in: rows.map((r) => r.id as string) } },
          select: { id: true, ...relations },
        })
        const byId = new Map(related.map((r) => [r.id, r]))
        return rows.map((r) => ({ ...r, ...byId.get(r.id as string) })) as unknown as ContactRow[]
      },
    }),
    pageInfo: t.field({
      type: OffsetPageInfoRef,
      description: 'Totals and position.',
      resolve: async (source, _args, ctx) => pageInfo(source.request, (await loadPage(source, ctx)).total),
    }),
  }),
})

builder.objectField(Group, 'contacts', (t) =>
  t.field({
    type: ContactPage,
    description: 'The contacts on this group.',
    args: {
      ...listArgs(t.arg, CONTACT_SEARCH),
      orderBy: t.arg({ type: ContactOrderByEnum, description: 'The order; NAME_ASC when not given.' }),
    },
    resolve: (group, args, ctx, info) => contactPage(ctx, info, group.accountId, args, group.id),
  }),
)

builder.queryFields((t) => ({
  contacts: t.field({
    scope: 'read',
    type: ContactPage,
    description: "The account's contacts, a page at a time: alphabetical, or in the order asked for.",
    args: {
      ...listArgs(t.arg, CONTACT_SEARCH),
      orderBy: t.arg({ type: ContactOrderByEnum, description: 'The order; NAME_ASC when not given.' }),
    },
    resolve: async (_root, args, ctx, info) => contactPage(ctx, info, (await ctx.account()).id, args),
  }),
  contact: t.prismaField({
    scope: 'read',
    type: 'Contact',
    nullable: true,
    description: 'A contact of the account by uuid. Null, with a NOT_FOUND error, when there is none.',
    args: { id: t.arg.id({ required: true, description: 'The contact uuid or global id.' }) },
    resolve: async (query, _root, { id }, ctx) => findContact(ctx.deps.db, (await ctx.account()).id, localId(id, 'Contact'), query),
  }),
}))

const SaveContactInput = builder.inputType('SaveContactInput', {
  description: 'A contact to create, or to overwrite (given fields only) when its mobile number exists.',
  fields: (t) => ({
    mobile: t.string({ required: true, description: 'Any spelling; numbers without a country code are read in DEFAULT_COUNTRY.' }),
    firstName: t.string({ required: true, description: FIELD.firstName }),
    familyName: t.string({ description: FIELD.familyName }),
    otherNames: t.string({ description: FIELD.otherNames }),
    email: t.string({ description: `${FIELD.email} At most 254 characters.` }),
    gender: t.string({ description: FIELD.gender }),
    organization: t.string({ description: FIELD.organization }),
    whatsappNumber: t.string({ description: FIELD.whatsappNumber }),
    viberNumber: t.string({ description: FIELD.viberNumber }),
    skypeId: t.string({ description: FIELD.skypeId }),
    facebook: t.string({ description: FIELD.facebook }),
    twitter: t.string({ description: FIELD.twitter }),
    linkedin: t.string({ description: FIELD.linkedin }),
    groupme: t.string({ description: FIELD.groupme }),
    wechat: t.string({ description: FIELD.wechat }),
    youtube: t.string({ description: FIELD.youtube }),
    groups: t.idList({ description: 'Groups (uuids or global ids) to enlist the contact on; it stays on groups not listed.' }),
  }),
})

const SaveContactPayload = builder.objectRef<{ contactId: string; created: boolean }>('SaveContactPayload').implement({
  description: 'The result of saveContact.',
  fields: (t) => ({
    contact: t.prismaField({
      type: 'Contact',
      description: 'The saved contact.',
      resolve: (query, { contactId }, _args, ctx) => ctx.deps.db.contact.findUniqueOrThrow({ ...query, where: { id: contactId } }),
    }),
    created: t.exposeBoolean('created', { description: 'False when a contact with that mobile existed and was updated.' }),
  }),
})

const AddContactsToGroupPayload = builder
  .objectRef<{ groupId: string; count: number; created: number }>('AddContactsToGroupPayload')
  .implement({
    description: 'The result of addContactsToGroup.',
    fields: (t) => ({
      group: t.prismaField({
        type: 'Group',
        description: 'The group.',
        resolve: (query, { groupId }, _args, ctx) => ctx.deps.db.group.findUniqueOrThrow({ ...query, where: { id: groupId } }),
      }),
      enlisted: t.exposeInt('count', { description: 'Distinct contacts in the request, now on the group.' }),
      created: t.exposeInt('created', { description: 'How many of them were new contacts.' }),
    }),
  })

const DelistContactsPayload = builder
  .objectRef<{ group: { id: string; name: string }; removed: number }>('DelistContactsPayload')
  .implement({
    description: 'The result of delistContacts.',
    fields: (t) => ({
      group: t.prismaField({
        type: 'Group',
        description: 'The group.',
        resolve: (query, { group }, _args, ctx) => ctx.deps.db.group.findUniqueOrThrow({ ...query, where: { id: group.id } }),
      }),
      delisted: t.exposeInt('removed', { description: 'Memberships removed; numbers not on the group are ignored.' }),
    }),
  })

builder.mutationFields((t) => ({
  saveContact: t.field({
    scope: 'contacts:write',
    type: SaveContactPayload,
    description:
      'Creates a contact, or overwrites the given fields of the contact with that mobile number. It is never removed from groups.',
    args: { input: t.arg({ type: SaveContactInput, required: true, description: 'The contact.' }) },
    resolve: async (_root, { input }, ctx) => {
      const accountId = (await ctx.account()).id
      const groups = input.groups?.map((g) => localId(g, 'Group'))
      const saved = await saveContact(ctx.deps, accountId, { ...input, groups })
      await publishJoins(ctx.deps, accountId, saved.joined)
      return { contactId: saved.id, created: saved.created }
    },
  }),
  deleteContact: t.field({
    scope: 'contacts:write',
    type: DeletedPayload,
    description: 'Deletes a contact with its memberships and subscription history.',
    args: { id: t.arg.id({ required: true, description: 'The contact uuid or global id.' }) },
    resolve: async (_root, { id: given }, ctx) => {
      const accountId = (await ctx.account()).id
      const id = localId(given, 'Contact')
      return { deletedId: await withContactRemoval(ctx.deps, accountId, id, () => deleteContact(ctx.deps, accountId, id)) }
    },
  }),
  addContactsToGroup: t.field({
    scope: 'contacts:write',
    type: AddContactsToGroupPayload,
    description: 'Saves each contact (as saveContact) and enlists it on the group. All or nothing; at most 10,000.',
    args: {
      groupId: t.arg.id({ required: true, description: 'The group uuid or global id.' }),
      contacts: t.arg({ type: [SaveContactInput], required: true, description: 'The contacts; one bad item fails the whole request.' }),
    },
    resolve: async (_root, { groupId: given, contacts: input }, ctx) => {
      const accountId = (await ctx.account()).id
      const groupId = localId(given, 'Group')
      // A copy only of the contacts that name groups: the others go on as GraphQL coerced them.
      const contacts = input.map((c) => (c.groups ? { ...c, groups: c.groups.map((g) => localId(g, 'Group')) } : c))
      const added = await addContactsToGroup(ctx.deps, accountId, groupId, contacts)
      await publishJoins(ctx.deps, accountId, added.joined)
      return added
    },
  }),
  delistContacts: t.field({
    scope: 'contacts:write',
    type: DelistContactsPayload,
    description: 'Removes the numbers from the group; numbers not on it, or unknown, are ignored.',
    args: {
      groupId: t.arg.id({ required: true, description: 'The group uuid or global id.' }),
      mobiles: t.arg.stringList({ required: true, description: 'Mobile numbers, in any spelling; at most 10,000.' }),
    },
    resolve: async (_root, { groupId: given, mobiles }, ctx) => {
      const accountId = (await ctx.account()).id
      const groupId = localId(given, 'Group')
      const delisted = await delistContacts(ctx.deps, accountId, groupId, mobiles)
      await publishLeaves(ctx.deps, accountId, groupId, delisted.left)
      return delisted
    },
  }),
}))

// ---------------------------------------------------------------- Relay connection

/** The REST order (contactListOrder), as a keyset: sort keys, then the uuid as the last tiebreak. */
export const CONTACT_ORDER: KeysetOrder = {
  name: 'contacts',
  columns: [
    { field: 'firstNameKey', direction: 'asc', type: 'string' },
    { field: 'familyNameKey', direction: 'asc', type: 'string' },
    { field: 'id', direction: 'asc', type: 'string' },
  ],
}

/**
 * The keyset of each order: the default's is CONTACT_ORDER (its cursors keep their name); the
 * others' cursors are tagged with the order, so a cursor of one is refused by another.
 */
const CONTACT_KEYSETS = Object.fromEntries(
  CONTACT_ORDERS.map((order): [ContactOrder, KeysetOrder] => {
    if (order === DEFAULT_CONTACT_ORDER) return [order, CONTACT_ORDER]
    const { keys, descending } = contactSort(order)
    const direction = descending ? 'desc' : 'asc'
    const type = (key: string) => (key === 'createdAt' || key === 'updatedAt' ? 'date' : 'string')
    return [order, { name: `contacts:${order}`, columns: keys.map((field) => ({ field, direction, type: type(field) })) }]
  }),
) as Record<ContactOrder, KeysetOrder>

const ContactConnection = builder.connectionObject(
  {
    type: Contact,
    name: 'ContactConnection',
    description:
      'Contacts in the order asked for; by default alphabetical by first name, then family name, then uuid (the order of the `contacts` pages).',
  },
  { name: 'ContactEdge', description: 'A contact and its cursor.' },
)

/** The columns a connection's nodes select, when they select columns only (no relation). */
function columnsOnly(query: NodesQuery): ContactListColumn[] | undefined {
  if (query.include || !query.select) return undefined
  const columns: ContactListColumn[] = []
  for (const [key, value] of Object.entries(query.select)) {
    if (value !== true || !COLUMN_SET.has(key)) return undefined
    columns.push(key as ContactListColumn)
  }
  return columns
}

function contactConnection(
  ctx: Context,
  info: GraphQLResolveInfo,
  accountId: string,
  args: ConnectionArgs & { search?: string | null; orderBy?: ContactOrder | null },
  groupId?: string,
) {
  // The same search rules and filter as the offset pages.
  const { searchKey } = pageRequest({ search: args.search })
  const order = args.orderBy ?? DEFAULT_CONTACT_ORDER
  if (order !== DEFAULT_CONTACT_ORDER) {
    // Another order: Prisma's findMany with the keyset bound, over the order's index.
    const where = contactListWhere(accountId, { searchKey }, groupId)
    return prismaConnection(ctx, info, args, {
      typeName: 'Contact',
      order: CONTACT_KEYSETS[order],
      where,
      findMany: (query) => ctx.deps.db.contact.findMany(query) as Promise<ContactRow[]>,
      findFirst: (query) => ctx.deps.db.contact.findFirst(query),
      totalCount: () => contactListTotal(ctx.deps, { accountId, groupId, searchKey }),
    })
  }
  return prismaConnection(ctx, info, args, {
    typeName: 'Contact',
    order: CONTACT_ORDER,
    where: contactListWhere(accountId, { searchKey }, groupId),
    findMany: async (query, plan) => {
      const [from = null, until = null] = (plan.backward ? [plan.before, plan.after] : [plan.after, plan.before]) as (string[] | null)[]
      // Nodes of columns alone are read directly (contact-connection-page.ts); relations through Prisma.
      const columns = columnsOnly(query as NodesQuery)
      const searched = isTrigramTerm(searchKey)
      const page = { accountId, groupId, searchKey, from, until, backward: plan.backward, take: query.take }
      if (columns)
        return (
          searched
            ? contactsByIds(ctx.deps, accountId, await searchPageIds(ctx.deps, page), columns)
            : connectionPageRows(ctx.deps, page, columns)
        ) as Promise<ContactRow[]>
      if (!searched) return ctx.deps.db.contact.findMany(query) as Promise<ContactRow[]>
      // A search through its own bounded plan (contact-search-page.ts), then the page's rows by id
      // with Pothos' selection.
      const ids = await searchPageIds(ctx.deps, page)
      // By primary key alone, unordered. Asked for the page's order, SQLite's planner walks the
      // account's name index checking each id (at a million, 950,000 entries before the first
      // Wanjiru); given the account too, it reads the account's mobile index. The ids are the
      // account's (searchPageIds reads only its contacts) and come in the page's order.
      const rows = (await ctx.deps.db.contact.findMany({
        ...query,
        where: { id: { in: ids } },
        orderBy: undefined,
        take: undefined,
      })) as ContactRow[]
      const position = new Map(ids.map((id, i) => [id, i]))
      return rows.sort((a, b) => position.get(a.id)! - position.get(b.id)!)
    },
    // The list's filter and the cursor's bound, in one statement of a fixed shape (contact-connection-page.ts).
    behind: (plan) =>
      rowAtOrBehind(ctx.deps, { accountId, groupId, searchKey }, (plan.backward ? plan.before : plan.after) as string[], plan.backward),
    totalCount: () => contactListTotal(ctx.deps, { accountId, groupId, searchKey }),
  })
}

builder.queryField('contactsConnection', (t) =>
  t.connection(
    {
      scope: 'read',
      type: Contact,
      description:
        "The account's contacts as a Relay connection (cursor pagination), in the order asked for (by default that of `contacts`).",
      args: {
        search: t.arg.string({ description: CONTACT_SEARCH }),
        orderBy: t.arg({ type: ContactOrderByEnum, description: 'The order; NAME_ASC when not given.' }),
      },
      resolve: async (_root, args, ctx, info) => contactConnection(ctx, info, (await ctx.account()).id, args),
    },
    ContactConnection,
  ),
)

builder.objectField(Group, 'contactsConnection', (t) =>
  t.connection(
    {
      type: Contact,
      description:
        "The group's contacts as a Relay connection (cursor pagination), in the order asked for (by default that of `contacts`).",
      args: {
        search: t.arg.string({ description: CONTACT_SEARCH }),
        orderBy: t.arg({ type: ContactOrderByEnum, description: 'The order; NAME_ASC when not given.' }),
      },
      resolve: (group, args, ctx, info) => contactConnection(ctx, info, group.accountId, args, group.id),
    },
    ContactConnection,
  ),
)
