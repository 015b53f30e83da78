import { builder } from '../builder.js'
import { auditSource } from '../audit-source.js'
import { recordAudit } from '../../audit/record-audit.js'
import { DeletedPayload } from './common.js'
import { prismaConnection } from '../connections.js'
import { newestFirst } from '../keyset.js'
import { Repeater } from 'graphql-yoga'
import {
  redeliver,
  removeWebhook,
  rotateWebhookSecret,
  sendTestEvent,
  setWebhook,
  DEFAULT_OVERLAP_HOURS,
} from '../../webhooks/endpoints.js'
import { publishQuietly, TOPIC, type StatusEvent, type WebhookDeliveryEvent } from '../../live/topics.js'
import { subscriberOutbox } from '../../live/subscriber-outbox.js'
import type { WebhookDelivery as DeliveryRow } from '../../generated/sqlite/client.js'
import type { Context } from '../context.js'
import { busListening } from './live.js'

const WebhookDeliveryState = builder.enumType('WebhookDeliveryState', {
  description: 'Where a webhook delivery stands.',
  values: {
    PENDING: { value: 'pending', description: 'Not yet accepted by the receiver; retried on the schedule.' },
    DELIVERED: { value: 'delivered', description: 'The receiver answered 2xx.' },
    FAILED: { value: 'failed', description: 'Every attempt failed, or the endpoint was removed or answered 410 Gone.' },
  } as const,
})

const WebhookEndpoint = builder.prismaObject('WebhookEndpoint', {
  description: "The account's webhook: every delivery report update is POSTed there, signed (Standard Webhooks).",
  fields: (t) => ({
    url: t.exposeString('url', { description: 'Where updates are POSTed.' }),
    secret: t.exposeString('secret', { description: 'whsec_…: the secret that signs webhook-signature. Keep it secret.' }),
    previousSecretExpiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'After rotateWebhookSecret: until then requests carry a signature from the secret before it too; null when none.',
      resolve: (w, _args, ctx) =>
        w.previousSecret && w.previousSecretUntil && w.previousSecretUntil > ctx.deps.clock.now() ? w.previousSecretUntil : null,
    }),
    enabled: t.boolean({
      description: 'False once the receiver answered 410 Gone, or failed every attempt for 5 days; setWebhook enables it again.',
      resolve: (w) => !w.disabledAt,
    }),
    disabledAt: t.expose('disabledAt', { type: 'DateTime', nullable: true, description: 'When it was disabled.' }),
    disabledReason: t.exposeString('disabledReason', {
      nullable: true,
      description: 'Why it was disabled: it answered 410 Gone, or every attempt failed since a date.',
    }),
    failures: t.exposeInt('failures', { description: 'Failed attempts in a row; a 2xx resets it.' }),
    pausedUntil: t.expose('pausedUntil', {
      type: 'DateTime',
      nullable: true,
      description:
        'After 5 failures in a row no delivery is attempted until then (5 s, doubling with each further failure, at most 10 min).',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was registered.' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When it last changed.' }),
  }),
})

const WebhookDelivery = builder.prismaObject('WebhookDelivery', {
  description: 'One report update on its way to the webhook.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Sent as webhook-id; the same on every retry.' }),
    state: t.field({ type: WebhookDeliveryState, description: 'Pending, delivered or failed.', resolve: (d) => d.state as 'pending' }),
    attempts: t.exposeInt('attempts', { description: 'Attempts made so far.' }),
    nextAttemptAt: t.expose('nextAttemptAt', { type: 'DateTime', description: 'When a pending delivery is tried next.' }),
    lastError: t.exposeString('lastError', { nullable: true, description: "The last attempt's failure, when it failed." }),
    body: t.exposeString('body', { description: 'The JSON delivery report as sent (a test event: `{"test":true,...}`).' }),
    test: t.boolean({ description: 'A test event (sendTestWebhook), not a delivery report.', resolve: (d) => d.messageId === null }),
    messageId: t.exposeID('messageId', { nullable: true, description: 'The message whose report this is; null for a test event.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the update was written.' }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true, description: 'When it was delivered or given up.' }),
    attemptLog: t.relation('attemptLog', { description: 'Every attempt, oldest first.', query: { orderBy: { createdAt: 'asc' } } }),
  }),
})

builder.prismaObject('WebhookAttempt', {
  description: 'One POST of a delivery to the webhook.',
  fields: (t) => ({
    attempt: t.exposeInt('attempt', { description: '1 for the first attempt.' }),
    url: t.exposeString('url', { description: 'The URL it was sent to.' }),
    statusCode: t.exposeInt('statusCode', { nullable: true, description: "The receiver's HTTP status; null when no answer came." }),
    durationMs: t.exposeInt('durationMs', { description: 'How long it took, in milliseconds.' }),
    error: t.exposeString('error', { nullable: true, description: 'Why it failed; null on success.' }),
    at: t.expose('createdAt', { type: 'DateTime', description: 'When it was made.' }),
  }),
})

const WebhookSecretPayload = builder.objectRef<{ accountId: string; secret: string }>('WebhookSecretPayload').implement({
  description: 'The webhook with its signing secret.',
  fields: (t) => ({
    webhook: t.prismaField({
      type: 'WebhookEndpoint',
      description: 'The endpoint.',
      resolve: (query, { accountId }, _args, ctx) => ctx.deps.db.webhookEndpoint.findUniqueOrThrow({ ...query, where: { accountId } }),
    }),
    secret: t.exposeString('secret', { description: 'whsec_…: verify webhook-signature with it. Keep it secret.' }),
  }),
})

builder.queryFields((t) => ({
  webhook: t.prismaField({
    scope: 'read',
    type: WebhookEndpoint,
    nullable: true,
    description: "The account's webhook; null when none is set.",
    resolve: async (query, _root, _args, ctx) =>
      ctx.deps.db.webhookEndpoint.findUnique({ ...query, where: { accountId: (await ctx.account()).id } }),
  }),
  webhookDeliveries: t.prismaField({
    scope: 'read',
    type: ['WebhookDelivery'],
    description: 'Newest first.',
    args: {
      state: t.arg({ type: WebhookDeliveryState, description: 'Only deliveries in this state.' }),
      first: t.arg.int({ defaultValue: 50, description: 'How many, at most 200.' }),
    },
    resolve: async (query, _root, { state, first }, ctx) =>
      ctx.deps.db.webhookDelivery.findMany({
        ...query,
        where: { accountId: (await ctx.account()).id, ...(state ? { state } : {}) },
        // The uuid breaks ties of the same instant, so the order is the same on every read.
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: Math.min(Math.max(first ?? 50, 1), 200),
      }),
  }),
}))

/** The order of `webhookDeliveries`. */
const DELIVERY_ORDER = newestFirst('webhook-deliveries')

builder.queryField('webhookDeliveriesConnection', (t) =>
  t.connection(
    {
      scope: 'read',
      type: WebhookDelivery,
      description: "The account's webhook deliveries, newest first, as a Relay connection (cursor pagination).",
      args: { state: t.arg({ type: WebhookDeliveryState, description: 'Only deliveries in this state.' }) },
      resolve: async (_root, { state, ...args }, ctx, info) => {
        const where = { accountId: (await ctx.account()).id, ...(state ? { state } : {}) }
        return prismaConnection(ctx, info, args, {
          typeName: 'WebhookDelivery',
          order: DELIVERY_ORDER,
          where,
          findMany: (query) => ctx.deps.db.webhookDelivery.findMany(query),
          findFirst: (query) => ctx.deps.db.webhookDelivery.findFirst(query),
          totalCount: () => ctx.deps.db.webhookDelivery.count({ where }),
        })
      },
    },
    { name: 'WebhookDeliveryConnection', description: 'Webhook deliveries, newest first (then by id, descending).' },
    { name: 'WebhookDeliveryEdge', description: 'A webhook delivery and its cursor.' },
  ),
)

builder.mutationFields((t) => ({
  setWebhook: t.field({
    scope: 'webhooks:manage',
    type: WebhookSecretPayload,
    description: 'Registers the webhook URL (keeps an existing secret; enables a disabled endpoint).',
    args: { url: t.arg.string({ required: true, description: 'A public http(s) URL.' }) },
    resolve: async (_root, { url }, ctx) => {
      const source = await auditSource(ctx)
      const endpoint = await setWebhook(ctx.deps, source.accountId, url)
      await recordAudit(ctx.deps.db, { ...source, action: 'webhook.set', target: endpoint.url })
      return { accountId: endpoint.accountId, secret: endpoint.secret }
    },
  }),
  rotateWebhookSecret: t.field({
    scope: 'webhooks:manage',
    type: WebhookSecretPayload,
    description:
      'Replaces the signing secret. During the overlap each request carries two signatures in webhook-signature, from the new secret and from the one before, so receivers can switch at their own pace.',
    args: {
      overlapHours: t.arg.int({
        defaultValue: DEFAULT_OVERLAP_HOURS,
        description: 'How long the previous secret keeps signing too: 0 (stop at once) to 168 hours.',
      }),
    },
    resolve: async (_root, { overlapHours }, ctx) => {
      const source = await auditSource(ctx)
      const endpoint = await rotateWebhookSecret(ctx.deps, source.accountId, overlapHours ?? DEFAULT_OVERLAP_HOURS)
      await recordAudit(ctx.deps.db, {
        ...source,
        action: 'webhook.rotate_secret',
        target: endpoint.url,
        details: { overlapHours: overlapHours ?? DEFAULT_OVERLAP_HOURS },
      })
      return { accountId: endpoint.accountId, secret: endpoint.secret }
    },
  }),
  sendTestWebhook: t.prismaField({
    scope: 'webhooks:manage',
    type: 'WebhookDelivery',
    description:
      'Queues a test event to the webhook: a delivery like the others (signed, retried, in webhookDeliveries) with the body `{"test":true,"id","message","sentAt"}`. NOT_FOUND without a webhook.',
    resolve: async (query, _root, _args, ctx) => {
      const accountId = (await ctx.account()).id
      const delivery = await sendTestEvent(ctx.deps, accountId)
      await announce(ctx, accountId, delivery.id)
      return ctx.deps.db.webhookDelivery.findUniqueOrThrow({ ...query, where: { id: delivery.id } })
    },
  }),
  removeWebhook: t.field({
    scope: 'webhooks:manage',
    type: DeletedPayload,
    description: 'Removes the webhook; pending deliveries fail and reports stay available by polling. deletedId is the account id.',
    resolve: async (_root, _args, ctx) => {
      const source = await auditSource(ctx)
      const accountId = source.accountId
      await removeWebhook(ctx.deps, accountId)
      await recordAudit(ctx.deps.db, { ...source, action: 'webhook.remove' })
      return { deletedId: accountId }
    },
  }),
  redeliverWebhook: t.prismaField({
    scope: 'webhooks:manage',
    type: 'WebhookDelivery',
    description: 'Sends a delivery again from the start of the retry schedule, with the same webhook-id.',
    args: { id: t.arg.id({ required: true, description: 'The delivery id (webhook-id).' }) },
    resolve: async (query, _root, { id }, ctx) => {
      const accountId = (await ctx.account()).id
      const delivery = await redeliver(ctx.deps, accountId, String(id))
      await announce(ctx, accountId, delivery.id)
      return ctx.deps.db.webhookDelivery.findUniqueOrThrow({ ...query, where: { id: delivery.id } })
    },
  }),
}))

/** Tells the account's delivery log subscribers (and the worker, on this instance) that a delivery is due. */
const announce = (ctx: Context, accountId: string, deliveryId: string) =>
  publishQuietly(ctx.deps, TOPIC.webhookDelivery, { accountId, deliveryIds: [deliveryId] } satisfies WebhookDeliveryEvent)

builder.subscriptionField('webhookDeliveryUpdates', (t) =>
  t.prismaField({
    scope: 'read',
    type: 'WebhookDelivery',
    description:
      "Each of the account's webhook deliveries as it changes: queued (a report update, a test event, a replay) and after each attempt. Needs an API key or a console session.",
    subscribe: async (_root, _args, ctx) => {
      const accountId = (await ctx.account()).id
      await busListening(ctx)
      const { db, events } = ctx.deps
      return new Repeater<DeliveryRow>(async (push, stop) => {
        const send = subscriberOutbox(push, stop, ctx.deps.logger, 'webhookDeliveryUpdates')
        const offDeliveries = events.subscribe(TOPIC.webhookDelivery, (payload) => {
          const event = payload as WebhookDeliveryEvent
          if (event.accountId !== accountId) return
          for (const id of event.deliveryIds)
            send(async () => (await db.webhookDelivery.findFirst({ where: { id, accountId } })) ?? undefined)
        })
        // A report update queues its delivery in the same transaction as the status: the newest of the message's.
        const offReports = events.subscribe(TOPIC.smsStatus, (payload) => {
          const event = payload as StatusEvent
          if (event.accountId !== accountId) return
          send(
            async () =>
              (await db.webhookDelivery.findFirst({
                where: { messageId: event.messageId, accountId },
                orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
              })) ?? undefined,
          )
        })
        await stop
        offDeliveries()
        offReports()
      })
    },
    resolve: (_query, delivery) => delivery,
  }),
)
