import { builder } from './builder.js'
import { DELIVERY_STATUSES } from '../sms/delivery-status.js'
import { formatCredits } from '../sms/money.js'
import { reportTime } from '../sms/report-time.js'
import { sendSms } from '../sms/send-sms.js'
import { recordCarrierStatus } from '../sms/record-status.js'
import { isStorableText } from '../messaging/input-rules.js'
import { notFound } from '../errors.js'

export const DeliveryStatusEnum = builder.enumType('DeliveryStatus', {
  description: 'DELIVRD delivered; UNDELIV undeliverable; EXPIRED; REJECTD by network; UNKNOWN network; PENDING in progress; FAILED; NOCREDT not sent, no credit; DND blocked; SENT awaiting confirmation.',
  values: DELIVERY_STATUSES,
})

const EncodingEnum = builder.enumType('SmsEncoding', { values: ['GSM_7', 'UCS_2'] as const })

const StatusUpdate = builder.prismaObject('MessageStatusUpdate', {
  fields: (t) => ({
    status: t.field({ type: DeliveryStatusEnum, resolve: (u) => u.status as (typeof DELIVERY_STATUSES)[number] }),
    carrierStatus: t.exposeString('carrierStatus', { nullable: true }),
    carrierErrorCode: t.exposeString('carrierErrorCode', { nullable: true }),
    at: t.expose('createdAt', { type: 'DateTime' }),
  }),
})

export const SentMessage = builder.prismaObject('Message', {
  name: 'SentMessage',
  description: 'An SMS sent through the account and its delivery report.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The delivery report reference.' }),
    to: t.exposeString('mobile', { description: 'Recipient, E.164.' }),
    sender: t.exposeString('sender'),
    text: t.exposeString('text'),
    encoding: t.field({ type: EncodingEnum, resolve: (m) => m.encoding as 'GSM_7' | 'UCS_2' }),
    pages: t.exposeInt('pages'),
    costPerPage: t.string({ description: 'Exact decimal, in credits.', resolve: (m) => formatCredits(m.costPerPage) }),
    creditsDeducted: t.string({ description: 'Exact decimal, in credits.', resolve: (m) => formatCredits(m.creditsDeducted) }),
    mccmnc: t.exposeString('mccmnc'),
    sandbox: t.exposeBoolean('sandbox'),
    status: t.field({ type: DeliveryStatusEnum, resolve: (m) => m.status as (typeof DELIVERY_STATUSES)[number] }),
    done: t.exposeBoolean('done', { description: 'True once the status is final.' }),
    carrierStatus: t.exposeString('carrierStatus', { nullable: true, description: "The carrier's raw status." }),
    carrierErrorCode: t.exposeString('carrierErrorCode', { nullable: true }),
    broadcastAt: t.expose('broadcastAt', { type: 'DateTime' }),
    doneAt: t.expose('doneAt', { type: 'DateTime', nullable: true }),
    broadcastTime: t.string({
      description: "broadcastAt as YYYY-MM-DD hh:mm AM|PM in the account's time zone.",
      select: { account: { select: { timezone: true } } },
      resolve: (m) => reportTime(m.broadcastAt, m.account.timezone),
    }),
    doneDate: t.string({
      nullable: true,
      description: "doneAt in the broadcastTime shape; null until done.",
      select: { account: { select: { timezone: true } } },
      resolve: (m) => (m.doneAt ? reportTime(m.doneAt, m.account.timezone) : null),
    }),
    statusHistory: t.relation('updates', { query: { orderBy: { createdAt: 'asc' } } }),
    webhookDeliveries: t.relation('deliveries', { query: { orderBy: { createdAt: 'asc' } } }),
  }),
})
void StatusUpdate

const SendSmsInput = builder.inputType('SendSmsInput', {
  fields: (t) => ({
    to: t.string({ required: true, description: 'Recipient; numbers without a country code are read in DEFAULT_COUNTRY.' }),
    message: t.string({ required: true, description: 'GSM-7 when possible (160 per page, 153 when split), else UCS-2 (70 / 67). At most 10 pages.' }),
    sender: t.string({ description: 'Up to 11 letters and digits, or a number. Default: from the account name.' }),
  }),
})

const CarrierStatusInput = builder.inputType('CarrierStatusInput', {
  description: 'A status change reported by a carrier connector. Name the message by id, or by gateway and its gateway id.',
  fields: (t) => ({
    messageId: t.id(),
    gateway: t.string(),
    gatewayMessageId: t.string(),
    status: t.string({ required: true, description: 'Raw carrier status: SMPP stat (DELIVRD, UNDELIV, EXPIRED, REJECTD, UNKNOWN, ACCEPTD, DELETED, ENROUTE) or a documented code.' }),
    errorCode: t.string(),
    mccmnc: t.string(),
    at: t.field({ type: 'DateTime' }),
  }),
})

builder.queryFields((t) => ({
  message: t.prismaField({
    type: 'Message',
    description: 'A sent message and its delivery report, by reference.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, { id }, ctx) => {
      // An id no database could hold (NUL, lone surrogate) names nothing; querying it would be an error.
      if (!isStorableText(String(id))) throw notFound('Delivery report')
      const message = await ctx.deps.db.message.findFirst({ ...query, where: { id: String(id), accountId: (await ctx.account()).id } })
      if (!message) throw notFound('Delivery report')
      return message
    },
  }),
}))

builder.mutationFields((t) => ({
  sendSms: t.prismaField({
    type: 'Message',
    description:
      'Charges and sends one SMS. Usually answers SENT (or FAILED, refunded, when the gateway refuses); PENDING while a gateway outage is retried, ending SENT or FAILED (SUBMIT_TIMEOUT, refunded). With an Idempotency-Key header a retry answers the first message and charges nothing.',
    args: { input: t.arg({ type: SendSmsInput, required: true }) },
    resolve: async (query, _root, { input }, ctx) => {
      const { id } = await sendSms(ctx.deps, (await ctx.account()).id, input, { idempotencyKey: ctx.idempotencyKey })
      return ctx.deps.db.message.findUniqueOrThrow({ ...query, where: { id } })
    },
  }),
  reportCarrierStatus: t.prismaField({
    type: 'Message',
    description: "For carrier connectors: applies a status change to one of the key's account's messages.",
    args: { input: t.arg({ type: CarrierStatusInput, required: true }) },
    resolve: async (query, _root, { input }, ctx) => {
      const accountId = (await ctx.account()).id
      const { messageId } = await recordCarrierStatus(
        ctx.deps,
        { ...input, messageId: input.messageId ? String(input.messageId) : undefined, at: input.at ?? undefined },
        accountId,
      )
      return ctx.deps.db.message.findUniqueOrThrow({ ...query, where: { id: messageId } })
    },
  }),
}))
