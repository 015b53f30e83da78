import { builder } from '../builder.js'
import { localId } from '../node-id.js'
import { formatCredits } from '../../sms/money.js'
import { sendSmsToGroup } from '../../sms/send-sms-to-group.js'
import { SentMessage } from './sms.js'
import type { Db } from '../../db/client.js'
import type { Message } from '../../generated/sqlite/client.js'

/** Ids per IN list: well inside every database's parameter limit. */
const CHUNK = 500

async function recipientsWithMessages(db: Db, bulkSendId: string) {
  const recipients = await db.bulkSendRecipient.findMany({ where: { bulkSendId }, orderBy: { mobile: 'asc' } })
  const ids = recipients.flatMap((r) => (r.messageId ? [r.messageId] : []))
  const messages = new Map<string, Awaited<ReturnType<Db['message']['findMany']>>[number]>()
  for (let i = 0; i < ids.length; i += CHUNK) {
    for (const m of await db.message.findMany({ where: { id: { in: ids.slice(i, i + CHUNK) } } })) messages.set(m.id, m)
  }
  return recipients.map((r) => ({ ...r, message: r.messageId ? (messages.get(r.messageId) ?? null) : null }))
}

const BulkSendStatusEnum = builder.enumType('BulkSendStatus', {
  description: 'Where a bulk send stands. Each recipient’s message has its own delivery status.',
  values: {
    SENDING: { description: 'Charged; recipients are still being handed over (resumed after a crash, never twice to one contact).' },
    SENT: { description: 'Every recipient has its message. Final.' },
    NOCREDT: { description: 'Not sent to anyone, nothing charged: the credit did not cover every recipient. Final.' },
  } as const,
})

const BulkSendRecipient = builder.prismaObject('BulkSendRecipient', {
  description: 'One contact of a bulk send and its message.',
  fields: (t) => ({
    contactUuid: t.exposeID('contactId', { description: 'The contact’s uuid when it was sent (the contact may be deleted since).' }),
    mobile: t.exposeString('mobile', { description: 'The recipient, E.164.' }),
    // Not t.relation: its loader would fetch every recipient's message in one IN list, past SQLite's
    // parameter limit for a large group; recipientsWithMessages has loaded them in chunks already.
    message: t.field({
      type: SentMessage,
      nullable: true,
      description: 'Its message and delivery report; null only while the bulk send is SENDING and this recipient is not handed over yet.',
      resolve: (recipient) => (recipient as typeof recipient & { message?: Message | null }).message ?? null,
    }),
  }),
})

builder.prismaObject('BulkSend', {
  description: 'One SMS sent to every contact of a group, charged at once.',
  fields: (t) => ({
    uuid: t.exposeID('id', { description: 'The bulk send’s uuid.' }),
    groupUuid: t.exposeID('groupId', { description: 'The group it went to.' }),
    status: t.field({
      type: BulkSendStatusEnum,
      description: 'Where it stands.',
      resolve: (b) => b.status as 'SENDING' | 'SENT' | 'NOCREDT',
    }),
    text: t.exposeString('text', { description: 'The message text.' }),
    sender: t.exposeString('sender', { description: 'The sender id shown to the recipients.' }),
    pages: t.exposeInt('pages', { description: 'Pages per message.' }),
    recipientCount: t.exposeInt('recipientCount', { description: 'How many contacts the group had: one message each.' }),
    costPerPage: t.string({ description: 'Exact decimal, in credits.', resolve: (b) => formatCredits(b.costPerPage) }),
    creditsDeducted: t.string({
      description:
        'The whole charge (pages × price × recipients), exact decimal; 0 when NOCREDT. Refusals by the gateway are refunded per message.',
      resolve: (b) => formatCredits(b.creditsDeducted),
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was charged.' }),
    // Not t.relation: a group of thousands would load the messages with one IN list of thousands
    // of parameters, past SQLite's limit. Loaded in chunks instead (the messages' own relations,
    // such as broadcastTime's time zone, come through the plugin's loader).
    recipients: t.field({
      type: [BulkSendRecipient],
      description: 'Every recipient with its message, by mobile number.',
      resolve: (bulk, _args, ctx) => recipientsWithMessages(ctx.deps.db, bulk.id),
    }),
  }),
})
void BulkSendRecipient

const SendSmsToGroupInput = builder.inputType('SendSmsToGroupInput', {
  description: 'One SMS to every contact of a group.',
  fields: (t) => ({
    groupId: t.id({ required: true, description: 'The group’s uuid or global id.' }),
    message: t.string({
      required: true,
      description: 'GSM-7 when possible (160 per page, 153 when split), else UCS-2 (70 / 67). At most 10 pages.',
    }),
    sender: t.string({ description: 'Up to 11 letters and digits, or a number. Default: from the account name.' }),
  }),
})

builder.mutationField('sendSmsToGroup', (t) =>
  t.prismaField({
    scope: 'sms:send',
    type: 'BulkSend',
    description:
      'Charges and sends one SMS to every contact of the group, all or nothing on credit: short of credit for all of them, nobody is sent to and the answer is NOCREDT. Each contact gets one message (its own delivery report). With an Idempotency-Key header a retry, also after a crash half-way, answers the same bulk send and sends only to the contacts not handed over yet.',
    args: { input: t.arg({ type: SendSmsToGroupInput, required: true, description: 'The group and the message.' }) },
    resolve: async (query, _root, { input }, ctx) => {
      const { id } = await sendSmsToGroup(
        ctx.deps,
        (await ctx.account()).id,
        { ...input, groupId: localId(input.groupId, 'Group') },
        { idempotencyKey: ctx.idempotencyKey },
      )
      return ctx.deps.db.bulkSend.findUniqueOrThrow({ ...query, where: { id } })
    },
  }),
)
