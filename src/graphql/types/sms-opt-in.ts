import { builder } from '../builder.js'
import { Group } from './messaging-groups.js'
import { handleInboundSms } from '../../sms-opt-in/handle-inbound-sms.js'

const SubscriptionEventKind = builder.enumType('SubscriptionEventKind', {
  description: 'Which way a subscription event went.',
  values: {
    JOIN: { value: 'join', description: 'Joined by the opt-in code.' },
    LEAVE: { value: 'leave', description: 'Left by the opt-out code.' },
  } as const,
})

builder.prismaObject('SubscriptionEvent', {
  description: 'Someone joining or leaving a group by SMS.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The event id.' }),
    kind: t.field({ type: SubscriptionEventKind, description: 'Joined or left.', resolve: (e) => e.kind as 'join' | 'leave' }),
    sim: t.exposeString('sim', { description: 'The hosted SIM the code was sent to.' }),
    text: t.exposeString('text', { description: 'The SMS text as received.' }),
    at: t.expose('createdAt', { type: 'DateTime', description: 'When it happened.' }),
    contact: t.relation('contact', { description: 'Who joined or left.' }),
  }),
})

builder.prismaObjectField(Group, 'subscriptionEvents', (t) =>
  t.relation('events', {
    description: 'Joins and leaves by SMS, newest first.',
    args: { first: t.arg.int({ defaultValue: 50, description: 'How many, at most 200.' }) },
    query: ({ first }) => ({ orderBy: { createdAt: 'desc' }, take: Math.min(Math.max(first ?? 50, 1), 200) }),
  }),
)

const InboundAction = builder.enumType('InboundSmsAction', {
  description: 'What an inbound SMS did.',
  values: {
    SUBSCRIBED: { description: 'The text was an opt-in code: the sender is on the group.' },
    UNSUBSCRIBED: { description: 'The text was an opt-out code: the sender left the group.' },
    IGNORED: { description: 'The text matched no code on that SIM.' },
  } as const,
})

const InboundSmsInput = builder.inputType('InboundSmsInput', {
  description: 'An SMS received on a hosted SIM.',
  fields: (t) => ({
    to: t.string({ required: true, description: 'The hosted SIM (number or short code) that received the text.' }),
    from: t.string({ required: true, description: "The sender's mobile number." }),
    text: t.string({ required: true, description: 'The text as received.' }),
  }),
})

const InboundSmsResult = builder
  .objectRef<{
    action: 'SUBSCRIBED' | 'UNSUBSCRIBED' | 'IGNORED'
    groupId: string | null
    contactId: string | null
    autoresponseId: string | null
  }>('InboundSmsResult')
  .implement({
    description: 'The result of receiveSms.',
    fields: (t) => ({
      action: t.field({ type: InboundAction, description: 'What the text did.', resolve: (r) => r.action }),
      group: t.prismaField({
        type: 'Group',
        nullable: true,
        description: 'The group joined or left; null when ignored.',
        resolve: (query, r, _args, ctx) => (r.groupId ? ctx.deps.db.group.findUnique({ ...query, where: { id: r.groupId } }) : null),
      }),
      contact: t.prismaField({
        type: 'Contact',
        nullable: true,
        description: 'The sender as a contact; null when ignored.',
        resolve: (query, r, _args, ctx) => (r.contactId ? ctx.deps.db.contact.findUnique({ ...query, where: { id: r.contactId } }) : null),
      }),
      autoresponse: t.prismaField({
        type: 'Message',
        nullable: true,
        description: "The group's autoresponse, sent as an SMS; null when there is none.",
        resolve: (query, r, _args, ctx) =>
          r.autoresponseId ? ctx.deps.db.message.findUnique({ ...query, where: { id: r.autoresponseId } }) : null,
      }),
    }),
  })

builder.mutationFields((t) => ({
  receiveSms: t.field({
    scope: 'sms:receive',
    type: InboundSmsResult,
    description: "For SIM connectors: an SMS received on one of the key's account's hosted SIMs (opt-in and opt-out codes).",
    args: { input: t.arg({ type: InboundSmsInput, required: true, description: 'The received SMS.' }) },
    resolve: async (_root, { input }, ctx) => handleInboundSms(ctx.deps, (await ctx.account()).id, input),
  }),
}))
