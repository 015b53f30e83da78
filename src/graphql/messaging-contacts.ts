import { builder } from './builder.js'
import { CONTACT_SEARCH, DeletedPayload, PageInfoRef, listArgs } from './common.js'
import { pageInfo, pageRequest, type PageRequest } from '../messaging/paging.js'
import {
  addContactsToGroup,
  contactListOrder,
  contactListWhere,
  deleteContact,
  delistContacts,
  findContact,
  saveContact,
} from '../messaging/contacts.js'
import { findGroup } from '../messaging/groups.js'
import { Group } from './messaging-groups.js'

export const Contact = builder.prismaObject('Contact', {
  description: 'A person reachable by SMS, identified by mobile number within the account.',
  fields: (t) => ({
    id: t.exposeID('id'),
    mobile: t.exposeString('mobile', { description: 'E.164, with the leading +.' }),
    firstName: t.exposeString('firstName'),
    familyName: t.exposeString('familyName'),
    otherNames: t.exposeString('otherNames', { nullable: true }),
    email: t.exposeString('email', { nullable: true }),
    gender: t.exposeString('gender', { description: 'Free text; empty when unknown.' }),
    organization: t.exposeString('organization', { nullable: true }),
    whatsappNumber: t.exposeString('whatsappNumber', { nullable: true }),
    viberNumber: t.exposeString('viberNumber', { nullable: true }),
    skypeId: t.exposeString('skypeId', { nullable: true }),
    facebook: t.exposeString('facebook', { nullable: true }),
    twitter: t.exposeString('twitter', { nullable: true }),
    linkedin: t.exposeString('linkedin', { nullable: true }),
    groupme: t.exposeString('groupme', { nullable: true }),
    wechat: t.exposeString('wechat', { nullable: true }),
    youtube: t.exposeString('youtube', { nullable: true }),
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
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
})

interface ContactPageSource {
  accountId: string
  groupId?: string
  request: PageRequest
}

export const ContactPage = builder.objectRef<ContactPageSource>('ContactPage').implement({
  description: 'One page of contacts, alphabetical by first name, then family name.',
  fields: (t) => ({
    nodes: t.prismaField({
      type: ['Contact'],
      resolve: (query, { accountId, groupId, request }, _args, ctx) =>
        ctx.deps.db.contact.findMany({
          ...query,
          where: contactListWhere(accountId, request, groupId),
          orderBy: contactListOrder,
          skip: request.skip,
          take: request.perPage,
        }),
    }),
    pageInfo: t.field({
      type: PageInfoRef,
      resolve: async ({ accountId, groupId, request }, _args, ctx) =>
        pageInfo(request, await ctx.deps.db.contact.count({ where: contactListWhere(accountId, request, groupId) })),
    }),
  }),
})

builder.objectField(Group, 'contacts', (t) =>
  t.field({
    type: ContactPage,
    description: 'The contacts on this group.',
    args: listArgs(t.arg, CONTACT_SEARCH),
    resolve: (group, args) => ({ accountId: group.accountId, groupId: group.id, request: pageRequest(args) }),
  }),
)

builder.queryFields((t) => ({
  contacts: t.field({
    type: ContactPage,
    args: listArgs(t.arg, CONTACT_SEARCH),
    resolve: async (_root, args, ctx) => ({ accountId: (await ctx.account()).id, request: pageRequest(args) }),
  }),
  contact: t.prismaField({
    type: 'Contact',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, { id }, ctx) => findContact(ctx.deps.db, (await ctx.account()).id, String(id), query),
  }),
}))

const SaveContactInput = builder.inputType('SaveContactInput', {
  description: 'A contact to create, or to overwrite (given fields only) when its mobile number exists.',
  fields: (t) => ({
    mobile: t.string({ required: true, description: 'Any spelling; numbers without a country code are read in DEFAULT_COUNTRY.' }),
    firstName: t.string({ required: true }),
    familyName: t.string(),
    otherNames: t.string(),
    email: t.string(),
    gender: t.string(),
    organization: t.string(),
    whatsappNumber: t.string(),
    viberNumber: t.string(),
    skypeId: t.string(),
    facebook: t.string(),
    twitter: t.string(),
    linkedin: t.string(),
    groupme: t.string(),
    wechat: t.string(),
    youtube: t.string(),
    groups: t.idList({ description: 'Groups to enlist the contact on; it stays on groups not listed.' }),
  }),
})

const SaveContactPayload = builder
  .objectRef<{ contactId: string; created: boolean }>('SaveContactPayload')
  .implement({
    fields: (t) => ({
      contact: t.prismaField({
        type: 'Contact',
        resolve: (query, { contactId }, _args, ctx) => ctx.deps.db.contact.findUniqueOrThrow({ ...query, where: { id: contactId } }),
      }),
      created: t.exposeBoolean('created'),
    }),
  })

const AddContactsToGroupPayload = builder
  .objectRef<{ groupId: string; count: number; created: number }>('AddContactsToGroupPayload')
  .implement({
    fields: (t) => ({
      group: t.prismaField({
        type: 'Group',
        resolve: (query, { groupId }, _args, ctx) => ctx.deps.db.group.findUniqueOrThrow({ ...query, where: { id: groupId } }),
      }),
      enlisted: t.exposeInt('count', { description: 'Distinct contacts in the request, now on the group.' }),
      created: t.exposeInt('created', { description: 'How many of them were new contacts.' }),
    }),
  })

const DelistContactsPayload = builder
  .objectRef<{ group: { id: string; name: string }; removed: number }>('DelistContactsPayload')
  .implement({
    fields: (t) => ({
      group: t.prismaField({
        type: 'Group',
        resolve: (query, { group }, _args, ctx) => ctx.deps.db.group.findUniqueOrThrow({ ...query, where: { id: group.id } }),
      }),
      delisted: t.exposeInt('removed', { description: 'Memberships removed; numbers not on the group are ignored.' }),
    }),
  })

builder.mutationFields((t) => ({
  saveContact: t.field({
    type: SaveContactPayload,
    args: { input: t.arg({ type: SaveContactInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const saved = await saveContact(ctx.deps, (await ctx.account()).id, { ...input, groups: input.groups?.map(String) })
      return { contactId: saved.id, created: saved.created }
    },
  }),
  deleteContact: t.field({
    type: DeletedPayload,
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => ({ deletedId: await deleteContact(ctx.deps, (await ctx.account()).id, String(id)) }),
  }),
  addContactsToGroup: t.field({
    type: AddContactsToGroupPayload,
    description: 'Saves each contact (as saveContact) and enlists it on the group. All or nothing; at most 10,000.',
    args: {
      groupId: t.arg.id({ required: true }),
      contacts: t.arg({ type: [SaveContactInput], required: true }),
    },
    resolve: async (_root, { groupId, contacts }, ctx) => {
      const accountId = (await ctx.account()).id
      await findGroup(ctx.deps.db, accountId, String(groupId), { select: { id: true } })
      return addContactsToGroup(ctx.deps, accountId, String(groupId), contacts.map((c) => ({ ...c, groups: c.groups?.map(String) })))
    },
  }),
  delistContacts: t.field({
    type: DelistContactsPayload,
    description: 'Removes the numbers from the group; numbers not on it, or unknown, are ignored.',
    args: {
      groupId: t.arg.id({ required: true }),
      mobiles: t.arg.stringList({ required: true }),
    },
    resolve: async (_root, { groupId, mobiles }, ctx) => delistContacts(ctx.deps, (await ctx.account()).id, String(groupId), mobiles),
  }),
}))
