import { builder } from '../builder.js'
import { orderByEnum } from '../order-by.js'
import { auditSource } from '../audit-source.js'
import { DateTimeRangeInput, DeletedPayload } from './common.js'
import { prismaConnection } from '../connections.js'
import { newestFirst, type KeysetOrder } from '../keyset.js'
import { listFilterWhere } from '../list-filters.js'
import { isStorableText } from '../../messaging/input-rules.js'
import { Repeater } from 'graphql-yoga'
import {
  createEndpoint,
  deleteEndpoint,
  recoverFailedDeliveries,
  redeliver,
  removeWebhook,
  rotateWebhookSecret,
  sendTestEvent,
  setWebhook,
  updateEndpoint,
  DEFAULT_OVERLAP_HOURS,
  ENDPOINT_ORDER,
  MAX_ENDPOINTS_PER_ACCOUNT,
  MAX_RECOVERED,
} from '../../webhooks/endpoints.js'
import {
  eventTypesOf,
  PAYLOAD_FORMATS,
  WEBHOOK_EVENT_TYPES,
  type PayloadFormat,
  type WebhookEventType,
} from '../../webhooks/event-types.js'
import { MAX_EVENT_DELIVERY_IDS } from '../../live/topics.js'
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

/** GraphQL names for the event types: `message.status` is MESSAGE_STATUS. Built from the list, so a new type is one line there. */
const EVENT_TYPE_DESCRIPTIONS: Record<WebhookEventType, string> = {
  'message.status': 'A delivery report update (`message.status`): every applied status change of a message.',
  test: 'A test event (`test`), sent on request with sendTestWebhook.',
}
const WebhookEventTypeEnum = builder.enumType('WebhookEventType', {
  description: 'What an endpoint can subscribe to. The Standard Webhooks envelope names it in `type` (`message.status`, `test`).',
  values: Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => [
      type.toUpperCase().replace(/\./g, '_'),
      { value: type, description: EVENT_TYPE_DESCRIPTIONS[type] },
    ]),
  ) as Record<string, { value: WebhookEventType; description: string }>,
})

const PAYLOAD_FORMAT_DESCRIPTIONS: Record<PayloadFormat, string> = {
  legacy: 'The delivery report object itself (the test event: `{"test":true,...}`), as the one webhook always sent. The default.',
  standard:
    'The Standard Webhooks envelope `{"type","timestamp","data"}`: `data` holds the legacy body, `timestamp` is when the event happened (ISO 8601 UTC).',
}
const WebhookPayloadFormat = builder.enumType('WebhookPayloadFormat', {
  description: 'The body an endpoint receives.',
  values: Object.fromEntries(
    PAYLOAD_FORMATS.map((format) => [format.toUpperCase(), { value: format, description: PAYLOAD_FORMAT_DESCRIPTIONS[format] }]),
  ) as Record<string, { value: PayloadFormat; description: string }>,
})

const WebhookEndpoint = builder.prismaObject('WebhookEndpoint', {
  description: `One of the account's webhook endpoints (at most ${MAX_ENDPOINTS_PER_ACCOUNT}): every event it subscribes to is POSTed there, signed with its own secret (Standard Webhooks). The oldest is the default one, which webhook, setWebhook and removeWebhook address.`,
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The endpoint id. An endpoint registered before accounts could have several has its account id.' }),
    eventTypes: t.field({
      type: [WebhookEventTypeEnum],
      description: 'What it receives.',
      resolve: (w) => eventTypesOf(w.eventTypes),
    }),
    payloadFormat: t.field({
      type: WebhookPayloadFormat,
      description: 'The body it receives: legacy (the default) or the Standard Webhooks envelope.',
      resolve: (w) => w.payloadFormat as PayloadFormat,
    }),
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
      description:
        'False once the receiver answered 410 Gone, or failed every attempt for 5 days; setting its URL (setWebhook, updateWebhookEndpoint) enables it again.',
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
    body: t.exposeString('body', {
      description:
        'The request body as sent on every attempt: the JSON delivery report (a test event: `{"test":true,...}`), or the Standard Webhooks envelope around it.',
    }),
    eventType: t.field({ type: WebhookEventTypeEnum, description: 'What it reports.', resolve: (d) => d.eventType as WebhookEventType }),
    endpoint: t.relation('endpoint', { nullable: true, description: 'The endpoint it is for; null once that endpoint was removed.' }),
    test: t.boolean({ description: 'A test event (sendTestWebhook), not a delivery report.', resolve: (d) => d.messageId === null }),
    messageId: t.exposeID('messageId', { nullable: true, description: 'The message whose report this is; null for a test event.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the update was written.' }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true, description: 'When it was delivered or given up.' }),
    attemptLog: t.relation('attemptLog', {
      description: 'Every attempt, oldest first, numbered in order (a replay or a recovery goes on counting).',
      query: { orderBy: [{ attempt: 'asc' }, { createdAt: 'asc' }] },
    }),
  }),
})

builder.prismaObject('WebhookAttempt', {
  description: 'One POST of a delivery to the webhook.',
  fields: (t) => ({
    attempt: t.exposeInt('attempt', { description: '1 for the first attempt; replays and recoveries go on from the last number.' }),
    url: t.exposeString('url', { description: 'The URL it was sent to.' }),
    statusCode: t.exposeInt('statusCode', { nullable: true, description: "The receiver's HTTP status; null when no answer came." }),
    durationMs: t.exposeInt('durationMs', { description: 'How long it took, in milliseconds.' }),
    error: t.exposeString('error', { nullable: true, description: 'Why it failed; null on success.' }),
    at: t.expose('createdAt', { type: 'DateTime', description: 'When it was made.' }),
    requestHeaders: t.exposeString('requestHeaders', {
      nullable: true,
      description: "The headers sent, one `name: value` a line; null when no request was made. The body is the delivery's.",
    }),
    responseHeaders: t.exposeString('responseHeaders', {
      nullable: true,
      description: "The receiver's answer headers, one `name: value` a line, at most 2 KiB; null when no answer came.",
    }),
    responseBody: t.exposeString('responseBody', {
      nullable: true,
      description: "The start of the receiver's answer body, at most 4 KiB (as UTF-8 text); null when no answer came.",
    }),
    responseTruncated: t.exposeBoolean('responseTruncated', {
      description: 'True when the answer had more headers or body than is kept (or was cut at the 64 KiB read bound).',
    }),
  }),
})

const WebhookSecretPayload = builder.objectRef<{ endpointId: string; secret: string }>('WebhookSecretPayload').implement({
  description: 'A webhook endpoint with its signing secret.',
  fields: (t) => ({
    webhook: t.prismaField({
      type: 'WebhookEndpoint',
      description: 'The endpoint.',
      resolve: (query, { endpointId }, _args, ctx) =>
        ctx.deps.db.webhookEndpoint.findUniqueOrThrow({ ...query, where: { id: endpointId } }),
    }),
    secret: t.exposeString('secret', { description: 'whsec_…: verify webhook-signature with it. Keep it secret.' }),
  }),
})

type DeliveryOrder = 'CREATED_AT_DESC' | 'CREATED_AT_ASC'
const DeliveryOrderByEnum = orderByEnum('WebhookDeliveryOrderBy', 'webhook deliveries', {
  CREATED_AT_DESC: 'Newest first, then by id descending: the default.',
  CREATED_AT_ASC: 'Oldest first, then by id.',
} satisfies Record<DeliveryOrder, string>)

/** Each order's keyset; the default's cursors keep their name. */
const DELIVERY_KEYSETS: Record<DeliveryOrder, KeysetOrder> = {
  CREATED_AT_DESC: newestFirst('webhook-deliveries'),
  CREATED_AT_ASC: {
    name: 'webhook-deliveries:CREATED_AT_ASC',
    columns: [
      { field: 'createdAt', direction: 'asc', type: 'date' },
      { field: 'id', direction: 'asc', type: 'string' },
    ],
  },
}

const DeliveryFilterInput = builder.inputType('WebhookDeliveryFilter', {
  description: 'Which webhook deliveries a list holds: every condition given must hold.',
  fields: (t) => ({
    state: t.field({ type: [WebhookDeliveryState], description: 'Only deliveries in one of these states (at least one).' }),
    createdAt: t.field({ type: DateTimeRangeInput, description: 'Only deliveries created (queued) within this span.' }),
    endpointId: t.id({ description: "Only deliveries to this endpoint (another account's endpoint matches none)." }),
  }),
})

/** The deliveries' filter: the account's, in `state`, and the `filter` argument's conditions. */
function deliveryWhere(
  accountId: string,
  state: string | null | undefined,
  filter:
    | {
        state?: readonly string[] | null
        createdAt?: { from?: Date | null; before?: Date | null } | null
        endpointId?: string | number | null
      }
    | null
    | undefined,
) {
  const conditions = listFilterWhere({
    argument: 'filter',
    set: { field: 'state', column: 'state', values: filter?.state },
    range: { field: 'createdAt', column: 'createdAt', value: filter?.createdAt },
  })
  const endpointId = filter?.endpointId
  return {
    accountId,
    ...(state ? { state } : {}),
    // An id that no row could hold (a NUL byte: PostgreSQL refuses to compare it) matches none.
    ...(endpointId !== null && endpointId !== undefined
      ? { endpointId: isStorableText(String(endpointId)) ? String(endpointId) : { in: [] } }
      : {}),
    AND: conditions,
  }
}

builder.queryFields((t) => ({
  webhook: t.prismaField({
    scope: 'read',
    type: WebhookEndpoint,
    nullable: true,
    description: "The account's default webhook endpoint (its oldest); null when it has none.",
    resolve: async (query, _root, _args, ctx) =>
      ctx.deps.db.webhookEndpoint.findFirst({ ...query, where: { accountId: (await ctx.account()).id }, orderBy: ENDPOINT_ORDER }),
  }),
  webhookEndpoints: t.prismaField({
    scope: 'read',
    type: [WebhookEndpoint],
    description: `The account's webhook endpoints (at most ${MAX_ENDPOINTS_PER_ACCOUNT}), oldest first: the first is the default.`,
    resolve: async (query, _root, _args, ctx) =>
      ctx.deps.db.webhookEndpoint.findMany({ ...query, where: { accountId: (await ctx.account()).id }, orderBy: ENDPOINT_ORDER }),
  }),
  webhookDeliveries: t.prismaField({
    scope: 'read',
    type: ['WebhookDelivery'],
    description: 'Newest first, or in the order asked for.',
    args: {
      state: t.arg({ type: WebhookDeliveryState, description: 'Only deliveries in this state.' }),
      filter: t.arg({ type: DeliveryFilterInput, description: 'States and a time window; with `state` too, both hold.' }),
      orderBy: t.arg({ type: DeliveryOrderByEnum, description: 'The order; CREATED_AT_DESC when not given.' }),
      first: t.arg.int({ defaultValue: 50, description: 'How many, at most 200.' }),
    },
    resolve: async (query, _root, { state, filter, orderBy, first }, ctx) =>
      ctx.deps.db.webhookDelivery.findMany({
        ...query,
        where: deliveryWhere((await ctx.account()).id, state, filter),
        // The id breaks ties of the same instant, so the order is the same on every read.
        orderBy: DELIVERY_KEYSETS[orderBy ?? 'CREATED_AT_DESC'].columns.map((c) => ({ [c.field]: c.direction })),
        take: Math.min(Math.max(first ?? 50, 1), 200),
      }),
  }),
}))

builder.queryField('webhookDeliveriesConnection', (t) =>
  t.connection(
    {
      scope: 'read',
      type: WebhookDelivery,
      description: "The account's webhook deliveries, newest first or in the order asked for, as a Relay connection (cursor pagination).",
      args: {
        state: t.arg({ type: WebhookDeliveryState, description: 'Only deliveries in this state.' }),
        filter: t.arg({ type: DeliveryFilterInput, description: 'States and a time window; with `state` too, both hold.' }),
        orderBy: t.arg({ type: DeliveryOrderByEnum, description: 'The order; CREATED_AT_DESC when not given.' }),
      },
      resolve: async (_root, { state, filter, orderBy, ...args }, ctx, info) => {
        const where = deliveryWhere((await ctx.account()).id, state, filter)
        return prismaConnection(ctx, info, args, {
          typeName: 'WebhookDelivery',
          order: DELIVERY_KEYSETS[orderBy ?? 'CREATED_AT_DESC'],
          where,
          findMany: (query) => ctx.deps.db.webhookDelivery.findMany(query),
          findFirst: (query) => ctx.deps.db.webhookDelivery.findFirst(query),
          totalCount: () => ctx.deps.db.webhookDelivery.count({ where }),
        })
      },
    },
    {
      name: 'WebhookDeliveryConnection',
      description: 'Webhook deliveries in the order asked for; by default newest first (then by id, descending).',
    },
    { name: 'WebhookDeliveryEdge', description: 'A webhook delivery and its cursor.' },
  ),
)

const WebhookEndpointInput = builder.inputType('WebhookEndpointInput', {
  description: 'A new webhook endpoint.',
  fields: (t) => ({
    url: t.string({ required: true, description: 'A public http(s) URL.' }),
    eventTypes: t.field({ type: [WebhookEventTypeEnum], description: 'What it receives (at least one); every type when left out.' }),
    payloadFormat: t.field({ type: WebhookPayloadFormat, description: 'The body it receives; LEGACY when left out.' }),
  }),
})

const UpdateWebhookEndpointInput = builder.inputType('UpdateWebhookEndpointInput', {
  description: 'What changes of an endpoint; what is left out stays.',
  fields: (t) => ({
    url: t.string({ description: 'A public http(s) URL. Setting it enables a disabled endpoint again with a clean record.' }),
    eventTypes: t.field({ type: [WebhookEventTypeEnum], description: 'What it receives (at least one).' }),
    payloadFormat: t.field({ type: WebhookPayloadFormat, description: 'The body it receives.' }),
  }),
})

const RecoverWebhookDeliveriesPayload = builder.objectRef<{ ids: string[]; more: boolean }>('RecoverWebhookDeliveriesPayload').implement({
  description: 'Failed deliveries put back into the outbox.',
  fields: (t) => ({
    recovered: t.int({ description: 'How many went back.', resolve: (r) => r.ids.length }),
    deliveryIds: t.exposeIDList('ids', { description: 'Their ids (webhook-id), oldest failure first.' }),
    more: t.exposeBoolean('more', { description: `True when more than ${MAX_RECOVERED} had failed: call again for the rest.` }),
  }),
})

builder.mutationFields((t) => ({
  setWebhook: t.field({
    scope: 'webhooks:manage',
    type: WebhookSecretPayload,
    description:
      "Registers the URL of the account's default endpoint (its oldest), creating it (every event type, the legacy body) when it has none; keeps an existing secret; enables a disabled endpoint.",
    args: { url: t.arg.string({ required: true, description: 'A public http(s) URL.' }) },
    resolve: async (_root, { url }, ctx) => {
      const source = await auditSource(ctx)
      const endpoint = await setWebhook(ctx.deps, source.accountId, url, source)
      return { endpointId: endpoint.id, secret: endpoint.secret }
    },
  }),
  createWebhookEndpoint: t.field({
    scope: 'webhooks:manage',
    type: WebhookSecretPayload,
    description: `Adds a webhook endpoint with a secret of its own (at most ${MAX_ENDPOINTS_PER_ACCOUNT} per account; VALIDATION_FAILED past that).`,
    args: { input: t.arg({ type: WebhookEndpointInput, required: true, description: 'The endpoint.' }) },
    resolve: async (_root, { input }, ctx) => {
      const source = await auditSource(ctx)
      const endpoint = await createEndpoint(ctx.deps, source.accountId, input, source)
      return { endpointId: endpoint.id, secret: endpoint.secret }
    },
  }),
  updateWebhookEndpoint: t.prismaField({
    scope: 'webhooks:manage',
    type: WebhookEndpoint,
    description: "Changes an endpoint's URL, event types or body format; the secret stays.",
    args: {
      id: t.arg.id({ required: true, description: 'The endpoint id.' }),
      input: t.arg({ type: UpdateWebhookEndpointInput, required: true, description: 'What changes.' }),
    },
    resolve: async (query, _root, { id, input }, ctx) => {
      const source = await auditSource(ctx)
      const endpoint = await updateEndpoint(
        ctx.deps,
        source.accountId,
        String(id),
        {
          ...(input.url !== null && input.url !== undefined ? { url: input.url } : {}),
          eventTypes: input.eventTypes,
          payloadFormat: input.payloadFormat,
        },
        source,
      )
      return ctx.deps.db.webhookEndpoint.findUniqueOrThrow({ ...query, where: { id: endpoint.id } })
    },
  }),
  deleteWebhookEndpoint: t.field({
    scope: 'webhooks:manage',
    type: DeletedPayload,
    description:
      'Removes an endpoint; its pending deliveries fail at their next attempt and stay in the log. deletedId is the endpoint id.',
    args: { id: t.arg.id({ required: true, description: 'The endpoint id.' }) },
    resolve: async (_root, { id }, ctx) => {
      const source = await auditSource(ctx)
      const endpoint = await deleteEndpoint(ctx.deps, source.accountId, String(id), source)
      return { deletedId: endpoint.id }
    },
  }),
  recoverFailedWebhookDeliveries: t.field({
    scope: 'webhooks:manage',
    type: RecoverWebhookDeliveriesPayload,
    description: `Sends again every delivery that failed at or after \`since\` (of one endpoint, or of every enabled endpoint): they go back into the outbox from the start of the retry schedule, with their own webhook-id and body, and are sent within the dispatcher's per-endpoint limits. At most ${MAX_RECOVERED} per call.`,
    args: {
      since: t.arg({ type: 'DateTime', required: true, description: 'Deliveries that failed at or after this instant.' }),
      endpointId: t.arg.id({ description: "Only this endpoint's; every enabled endpoint's when left out." }),
    },
    resolve: async (_root, { since, endpointId }, ctx) => {
      const source = await auditSource(ctx)
      const accountId = source.accountId
      const result = await recoverFailedDeliveries(
        ctx.deps,
        accountId,
        since,
        endpointId === null || endpointId === undefined ? null : String(endpointId),
        source,
      )
      for (let i = 0; i < result.ids.length; i += MAX_EVENT_DELIVERY_IDS)
        await publishQuietly(ctx.deps, TOPIC.webhookDelivery, {
          accountId,
          deliveryIds: result.ids.slice(i, i + MAX_EVENT_DELIVERY_IDS),
        } satisfies WebhookDeliveryEvent)
      return result
    },
  }),
  rotateWebhookSecret: t.field({
    scope: 'webhooks:manage',
    type: WebhookSecretPayload,
    description:
      "Replaces an endpoint's signing secret (the default endpoint's without endpointId). During the overlap each request carries two signatures in webhook-signature, from the new secret and from the one before, so receivers can switch at their own pace.",
    args: {
      overlapHours: t.arg.int({
        defaultValue: DEFAULT_OVERLAP_HOURS,
        description: 'How long the previous secret keeps signing too: 0 (stop at once) to 168 hours.',
      }),
      endpointId: t.arg.id({ description: 'The endpoint; the default one when left out.' }),
    },
    resolve: async (_root, { overlapHours, endpointId }, ctx) => {
      const source = await auditSource(ctx)
      const endpoint = await rotateWebhookSecret(
        ctx.deps,
        source.accountId,
        overlapHours ?? DEFAULT_OVERLAP_HOURS,
        endpointId === null || endpointId === undefined ? null : String(endpointId),
        source,
      )
      return { endpointId: endpoint.id, secret: endpoint.secret }
    },
  }),
  sendTestWebhook: t.prismaField({
    scope: 'webhooks:manage',
    type: 'WebhookDelivery',
    description:
      'Queues a test event to an endpoint (the default one without endpointId): a delivery like the others (signed, retried, in webhookDeliveries) with the body `{"test":true,"id","message","sentAt"}` (in the envelope, type `test`, for a STANDARD endpoint). NOT_FOUND without an endpoint; VALIDATION_FAILED when it is not subscribed to TEST.',
    args: { endpointId: t.arg.id({ description: 'The endpoint; the default one when left out.' }) },
    resolve: async (query, _root, { endpointId }, ctx) => {
      const accountId = (await ctx.account()).id
      const delivery = await sendTestEvent(ctx.deps, accountId, endpointId === null || endpointId === undefined ? null : String(endpointId))
      await announce(ctx, accountId, delivery.id)
      return ctx.deps.db.webhookDelivery.findUniqueOrThrow({ ...query, where: { id: delivery.id } })
    },
  }),
  removeWebhook: t.field({
    scope: 'webhooks:manage',
    type: DeletedPayload,
    description:
      "Removes the account's default endpoint (the next oldest becomes the default); its pending deliveries fail and reports stay available by polling. deletedId is the account id.",
    resolve: async (_root, _args, ctx) => {
      const source = await auditSource(ctx)
      const accountId = source.accountId
      await removeWebhook(ctx.deps, accountId, source)
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
        // A report update queues its deliveries (one per subscribed endpoint) in the same transaction
        // as the status: the message's newest, each of them.
        const offReports = events.subscribe(TOPIC.smsStatus, (payload) => {
          const event = payload as StatusEvent
          if (event.accountId !== accountId) return
          const newest = db.webhookDelivery.findFirst({
            where: { messageId: event.messageId, accountId },
            orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
            select: { createdAt: true },
          })
          const batch = newest.then((n) =>
            n
              ? db.webhookDelivery.findMany({
                  where: { messageId: event.messageId, accountId, createdAt: n.createdAt },
                  orderBy: { id: 'asc' },
                  take: MAX_ENDPOINTS_PER_ACCOUNT,
                })
              : [],
          )
          for (let i = 0; i < MAX_ENDPOINTS_PER_ACCOUNT; i++) send(async () => (await batch)[i])
        })
        await stop
        offDeliveries()
        offReports()
      })
    },
    resolve: (_query, delivery) => delivery,
  }),
)
