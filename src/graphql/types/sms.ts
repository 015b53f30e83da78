import { builder } from '../builder.js'
import { orderByEnum } from '../order-by.js'
import { localId } from '../node-id.js'
import { prismaConnection } from '../connections.js'
import { newestFirst, type KeysetOrder } from '../keyset.js'
import { listFilterWhere } from '../list-filters.js'
import { DateTimeRangeInput } from './common.js'
import { DELIVERY_STATUSES } from '../../sms/delivery-status.js'
import { formatCredits } from '../../sms/money.js'
import { reportTime } from '../../sms/report-time.js'
import { sendSms } from '../../sms/send-sms.js'
import { recordCarrierStatus } from '../../sms/record-status.js'
import { isStorableText } from '../../messaging/input-rules.js'
import { notFound } from '../../core/errors.js'
import { accountScoped } from '../account-scoped.js'

/** The meaning of each delivery status, as the delivery report documents it. */
const STATUS_MEANING: Record<(typeof DELIVERY_STATUSES)[number], string> = {
  DELIVRD: 'Delivered to the handset. Final.',
  UNDELIV: 'Undeliverable. Final.',
  EXPIRED: 'The carrier gave up before delivery. Final.',
  REJECTD: 'Rejected by the network. Final.',
  UNKNOWN: 'The network did not say. Final.',
  PENDING: 'Charged; not yet accepted by the gateway.',
  FAILED: 'Not sent (refused, or not submitted in time); the credits were refunded. Final.',
  NOCREDT: 'Not sent: not enough credit. Final.',
  DND: 'Blocked by the recipient (do not disturb). Final.',
  SENT: 'Accepted by the gateway; awaiting the carrier.',
}

export const DeliveryStatusEnum = builder.enumType('DeliveryStatus', {
  description: 'Where a message stands. Every status but PENDING and SENT is final (`done`).',
  values: Object.fromEntries(DELIVERY_STATUSES.map((s) => [s, { description: STATUS_MEANING[s] }])) as Record<
    (typeof DELIVERY_STATUSES)[number],
    { description: string }
  >,
})

const EncodingEnum = builder.enumType('SmsEncoding', {
  description: 'How the text is encoded, which sets the page size.',
  values: {
    GSM_7: { description: 'GSM 03.38: 160 characters in one page, 153 per page when split; extension characters count twice.' },
    UCS_2: { description: 'Any other text: 70 characters in one page, 67 per page when split.' },
  } as const,
})

const StatusUpdate = builder.prismaObject('MessageStatusUpdate', {
  description: 'One step of a message’s delivery history.',
  fields: (t) => ({
    status: t.field({
      type: DeliveryStatusEnum,
      description: 'The status from this step on.',
      resolve: (u) => u.status as (typeof DELIVERY_STATUSES)[number],
    }),
    carrierStatus: t.exposeString('carrierStatus', {
      nullable: true,
      description: "The carrier's raw status, when a carrier reported it.",
    }),
    carrierErrorCode: t.exposeString('carrierErrorCode', { nullable: true, description: "The carrier's error code, when it gave one." }),
    at: t.expose('createdAt', { type: 'DateTime', description: 'When it happened.' }),
  }),
})

export const SentMessage = builder.prismaNode('Message', {
  name: 'SentMessage',
  description: 'An SMS sent through the account and its delivery report.',
  id: { field: 'id', description: 'The global id (Relay); `uuid` is the database id.' },
  // node(id:) finds only the key's account's messages: another account's id answers null.
  findUnique: accountScoped,
  nullable: true,
  fields: (t) => ({
    uuid: t.exposeID('id', { description: 'The message uuid: the delivery report reference.' }),
    to: t.exposeString('mobile', { description: 'Recipient, E.164.' }),
    sender: t.exposeString('sender', { description: 'The sender id shown to the recipient.' }),
    text: t.exposeString('text', { description: 'The message text.' }),
    encoding: t.field({ type: EncodingEnum, description: 'GSM-7 or UCS-2.', resolve: (m) => m.encoding as 'GSM_7' | 'UCS_2' }),
    pages: t.exposeInt('pages', { description: 'How many pages (parts) it was sent and charged as.' }),
    costPerPage: t.string({ description: 'Exact decimal, in credits.', resolve: (m) => formatCredits(m.costPerPage) }),
    creditsDeducted: t.string({ description: 'Exact decimal, in credits.', resolve: (m) => formatCredits(m.creditsDeducted) }),
    mccmnc: t.exposeString('mccmnc', { description: "The recipient network's MCC and MNC; empty until known." }),
    sandbox: t.exposeBoolean('sandbox', { description: 'Sent through the sandbox gateway: no carrier involved.' }),
    status: t.field({
      type: DeliveryStatusEnum,
      description: 'The latest status.',
      resolve: (m) => m.status as (typeof DELIVERY_STATUSES)[number],
    }),
    done: t.exposeBoolean('done', { description: 'True once the status is final.' }),
    carrierStatus: t.exposeString('carrierStatus', { nullable: true, description: "The carrier's raw status." }),
    carrierErrorCode: t.exposeString('carrierErrorCode', {
      nullable: true,
      description: "The carrier's error code, or SUBMIT / SUBMIT_TIMEOUT when it never left.",
    }),
    broadcastAt: t.expose('broadcastAt', { type: 'DateTime', description: 'When it was sent.' }),
    doneAt: t.expose('doneAt', { type: 'DateTime', nullable: true, description: 'When its status became final; null until then.' }),
    broadcastTime: t.string({
      description: "broadcastAt as YYYY-MM-DD hh:mm AM|PM in the account's time zone.",
      select: { account: { select: { timezone: true } } },
      resolve: (m) => reportTime(m.broadcastAt, m.account.timezone),
    }),
    doneDate: t.string({
      nullable: true,
      description: 'doneAt in the broadcastTime shape; null until done.',
      select: { account: { select: { timezone: true } } },
      resolve: (m) => (m.doneAt ? reportTime(m.doneAt, m.account.timezone) : null),
    }),
    statusHistory: t.relation('updates', { description: 'Every status step, oldest first.', query: { orderBy: { createdAt: 'asc' } } }),
    webhookDeliveries: t.relation('deliveries', {
      description: 'The webhook pushes of its updates, oldest first.',
      query: { orderBy: { createdAt: 'asc' } },
    }),
  }),
})
void StatusUpdate

const SendSmsInput = builder.inputType('SendSmsInput', {
  description: 'One SMS to send.',
  fields: (t) => ({
    to: t.string({ required: true, description: 'Recipient; numbers without a country code are read in DEFAULT_COUNTRY.' }),
    message: t.string({
      required: true,
      description: 'GSM-7 when possible (160 per page, 153 when split), else UCS-2 (70 / 67). At most 10 pages.',
    }),
    sender: t.string({ description: 'Up to 11 letters and digits, or a number. Default: from the account name.' }),
  }),
})

const CarrierStatusInput = builder.inputType('CarrierStatusInput', {
  description: 'A status change reported by a carrier connector. Name the message by id, or by gateway and its gateway id.',
  fields: (t) => ({
    messageId: t.id({ description: 'Our message id (the report reference), or its global id.' }),
    gateway: t.string({ description: 'The gateway name, with gatewayMessageId, when the message id is not known.' }),
    gatewayMessageId: t.string({ description: "The gateway's id for the message." }),
    status: t.string({
      required: true,
      description:
        'Raw carrier status: SMPP stat (DELIVRD, UNDELIV, EXPIRED, REJECTD, UNKNOWN, ACCEPTD, DELETED, ENROUTE) or a documented code.',
    }),
    errorCode: t.string({ description: "The carrier's error code." }),
    mccmnc: t.string({ description: "The recipient network's MCC and MNC." }),
    at: t.field({ type: 'DateTime', description: 'When the carrier reported it; default: now.' }),
  }),
})

builder.queryFields((t) => ({
  message: t.prismaField({
    scope: 'read',
    type: 'Message',
    nullable: true,
    description: 'A sent message and its delivery report, by reference. Null, with a NOT_FOUND error, when there is none.',
    args: { id: t.arg.id({ required: true, description: 'The message uuid (delivery report reference) or global id.' }) },
    resolve: async (query, _root, { id: given }, ctx) => {
      const id = localId(given, 'SentMessage')
      // An id no database could hold (NUL, lone surrogate) names nothing; querying it would be an error.
      if (!isStorableText(id)) throw notFound('Delivery report')
      const message = await ctx.deps.db.message.findFirst({ ...query, where: { id, accountId: (await ctx.account()).id } })
      if (!message) throw notFound('Delivery report')
      return message
    },
  }),
}))

builder.mutationFields((t) => ({
  sendSms: t.prismaField({
    scope: 'sms:send',
    type: 'Message',
    description:
      'Charges and sends one SMS. Usually answers SENT (or FAILED, refunded, when the gateway refuses); PENDING while a gateway outage is retried, ending SENT or FAILED (SUBMIT_TIMEOUT, refunded). With an Idempotency-Key header a retry answers the first message and charges nothing.',
    args: { input: t.arg({ type: SendSmsInput, required: true, description: 'The message.' }) },
    resolve: async (query, _root, { input }, ctx) => {
      const { id } = await sendSms(ctx.deps, (await ctx.account()).id, input, { idempotencyKey: ctx.idempotencyKey })
      return ctx.deps.db.message.findUniqueOrThrow({ ...query, where: { id } })
    },
  }),
  reportCarrierStatus: t.prismaField({
    scope: 'connector',
    type: 'Message',
    description:
      'For carrier connectors, authenticated by the connector token (CARRIER_CONNECTOR_TOKEN), not an API key: applies a status change to a message. Only real changes count: a final status is final, and a repeat of the current status changes nothing.',
    args: { input: t.arg({ type: CarrierStatusInput, required: true, description: 'The status change.' }) },
    resolve: async (query, _root, { input }, ctx) => {
      ctx.assertConnector()
      const { messageId } = await recordCarrierStatus(ctx.deps, {
        ...input,
        messageId: input.messageId ? localId(input.messageId, 'SentMessage') : undefined,
        at: input.at ?? undefined,
      })
      return ctx.deps.db.message.findUniqueOrThrow({ ...query, where: { id: messageId } })
    },
  }),
}))

// A message's sent time (broadcastAt) is its createdAt: sendSms writes both from one instant, so the
// orders and the sentAt filter read createdAt, the column of the indexes (migration list_orders).
const MESSAGE_ORDERS = ['SENT_AT_DESC', 'SENT_AT_ASC', 'STATUS_ASC', 'STATUS_DESC'] as const
type MessageOrder = (typeof MESSAGE_ORDERS)[number]
const sameWay = (name: string, fields: readonly string[], direction: 'asc' | 'desc'): KeysetOrder => ({
  name,
  columns: fields.map((field) => ({ field, direction, type: field === 'createdAt' ? 'date' : 'string' })),
})
/** Each order's keyset; the default's cursors keep their name (`messages`). */
const MESSAGE_KEYSETS: Record<MessageOrder, KeysetOrder> = {
  SENT_AT_DESC: newestFirst('messages'),
  SENT_AT_ASC: sameWay('messages:SENT_AT_ASC', ['createdAt', 'id'], 'asc'),
  STATUS_ASC: sameWay('messages:STATUS_ASC', ['status', 'createdAt', 'id'], 'asc'),
  STATUS_DESC: sameWay('messages:STATUS_DESC', ['status', 'createdAt', 'id'], 'desc'),
}

const SentMessageOrderByEnum = orderByEnum('SentMessageOrderBy', 'the sent messages', {
  SENT_AT_DESC: 'Newest first, then by uuid descending: the default.',
  SENT_AT_ASC: 'Oldest first, then by uuid.',
  STATUS_ASC: 'By status code (alphabetical: DELIVRD, DND, EXPIRED, ...), oldest first within a status.',
  STATUS_DESC: 'STATUS_ASC reversed: by status code descending, newest first within a status.',
} satisfies Record<MessageOrder, string>)

const SentMessageFilterInput = builder.inputType('SentMessageFilter', {
  description: 'Which sent messages a list holds: every condition given must hold.',
  fields: (t) => ({
    status: t.field({ type: [DeliveryStatusEnum], description: 'Only messages whose latest status is one of these (at least one).' }),
    sentAt: t.field({ type: DateTimeRangeInput, description: 'Only messages sent (broadcastAt) within this span.' }),
  }),
})

builder.queryField('messagesConnection', (t) =>
  t.connection(
    {
      scope: 'read',
      type: SentMessage,
      description:
        "The account's sent messages with their delivery reports, newest first or in the order asked for, as a Relay connection (cursor pagination).",
      args: {
        status: t.arg({ type: DeliveryStatusEnum, description: 'Only messages whose latest status is this one.' }),
        filter: t.arg({ type: SentMessageFilterInput, description: 'Statuses and a time window; with `status` too, both hold.' }),
        orderBy: t.arg({ type: SentMessageOrderByEnum, description: 'The order; SENT_AT_DESC when not given.' }),
      },
      resolve: async (_root, { status, filter, orderBy, ...args }, ctx, info) => {
        const conditions = listFilterWhere({
          argument: 'filter',
          set: { field: 'status', column: 'status', values: filter?.status },
          range: { field: 'sentAt', column: 'createdAt', value: filter?.sentAt },
        })
        const where = { accountId: (await ctx.account()).id, ...(status ? { status } : {}), AND: conditions }
        return prismaConnection(ctx, info, args, {
          typeName: 'SentMessage',
          order: MESSAGE_KEYSETS[orderBy ?? 'SENT_AT_DESC'],
          where,
          findMany: (query) => ctx.deps.db.message.findMany(query),
          findFirst: (query) => ctx.deps.db.message.findFirst(query),
          totalCount: () => ctx.deps.db.message.count({ where }),
        })
      },
    },
    {
      name: 'SentMessageConnection',
      description: 'Sent messages in the order asked for; by default newest first (then by uuid, descending).',
    },
    { name: 'SentMessageEdge', description: 'A sent message and its cursor.' },
  ),
)
