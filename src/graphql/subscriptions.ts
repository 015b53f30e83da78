import { builder } from './builder.js'
import { Group } from './messaging-groups.js'
import { handleInboundSms } from '../subscriptions/handle-inbound-sms.js'

builder.prismaObject('SubscriptionEvent', {
  description: 'Someone joining or leaving a group by SMS.',
  fields: (t) => ({
    id: t.exposeID('id'),
    kind: t.exposeString('kind', { description: 'join or leave' }),
    sim: t.exposeString('sim'),
    text: t.exposeString('text'),
    at: t.expose('createdAt', { type: 'DateTime' }),
    contact: t.relation('contact'),
  }),
})

builder.prismaObjectField(Group, 'subscriptionEvents', (t) =>
  t.relation('events', {
    description: 'Joins and leaves by SMS, newest first.',
    args: { first: t.arg.int({ defaultValue: 50 }) },
    query: ({ first }) => ({ orderBy: { createdAt: 'desc' }, take: Math.min(Math.max(first ?? 50, 1), 200) }),
  }),
)

const InboundAction = builder.enumType('InboundSmsAction', { values: ['SUBSCRIBED', 'UNSUBSCRIBED', 'IGNORED'] as const })

const InboundSmsInput = builder.inputType('InboundSmsInput', {
  fields: (t) => ({
    to: t.string({ required: true, description: 'The hosted SIM (number or short code) that received the text.' }),
    from: t.string({ required: true }),
    text: t.string({ required: true }),
  }),
})

const InboundSmsResult = builder
  .objectRef<{ action: 'SUBSCRIBED' | 'UNSUBSCRIBED' | 'IGNORED'; groupId: string | null; contactId: string | null; autoresponseId: string | null }>('InboundSmsResult')
  .implement({
    fields: (t) => ({
      action: t.field({ type: InboundAction, resolve: (r) => r.action }),
      group: t.prismaField({
        type: 'Group',
        nullable: true,
        resolve: (query, r, _args, ctx) => (r.groupId ? ctx.deps.db.group.findUnique({ ...query, where: { id: r.groupId } }) : null),
      }),
      contact: t.prismaField({
        type: 'Contact',
        nullable: true,
        resolve: (query, r, _args, ctx) => (r.contactId ? ctx.deps.db.contact.findUnique({ ...query, where: { id: r.contactId } }) : null),
      }),
      autoresponse: t.prismaField({
        type: 'Message',
        nullable: true,
        resolve: (query, r, _args, ctx) => (r.autoresponseId ? ctx.deps.db.message.findUnique({ ...query, where: { id: r.autoresponseId } }) : null),
      }),
    }),
  })

builder.mutationFields((t) => ({
  receiveSms: t.field({
    type: InboundSmsResult,
    description: "For SIM connectors: an SMS received on one of the key's account's hosted SIMs (opt-in and opt-out codes).",
    args: { input: t.arg({ type: InboundSmsInput, required: true }) },
    resolve: async (_root, { input }, ctx) => handleInboundSms(ctx.deps, (await ctx.account()).id, input),
  }),
}))
