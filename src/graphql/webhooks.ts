import { builder } from './builder.js'
import { DeletedPayload } from './common.js'
import { textProblem } from '../messaging/input-rules.js'
import { validationError } from '../errors.js'
import { redeliver, removeWebhook, rotateWebhookSecret, setWebhook } from '../webhooks/endpoints.js'

const WebhookEndpoint = builder.prismaObject('WebhookEndpoint', {
  description: "The account's webhook: every delivery report update is POSTed there, signed (Standard Webhooks).",
  fields: (t) => ({
    url: t.exposeString('url'),
    enabled: t.boolean({ resolve: (w) => !w.disabledAt }),
    disabledAt: t.expose('disabledAt', { type: 'DateTime', nullable: true, description: 'Set when the receiver answered 410 Gone.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
})

builder.prismaObject('WebhookDelivery', {
  description: 'One report update on its way to the webhook.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Sent as webhook-id; the same on every retry.' }),
    state: t.exposeString('state', { description: 'pending, delivered or failed.' }),
    attempts: t.exposeInt('attempts'),
    nextAttemptAt: t.expose('nextAttemptAt', { type: 'DateTime' }),
    lastError: t.exposeString('lastError', { nullable: true }),
    body: t.exposeString('body', { description: 'The JSON delivery report as sent.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
    attemptLog: t.relation('attemptLog', { query: { orderBy: { createdAt: 'asc' } } }),
  }),
})

builder.prismaObject('WebhookAttempt', {
  fields: (t) => ({
    attempt: t.exposeInt('attempt'),
    url: t.exposeString('url'),
    statusCode: t.exposeInt('statusCode', { nullable: true }),
    durationMs: t.exposeInt('durationMs'),
    error: t.exposeString('error', { nullable: true }),
    at: t.expose('createdAt', { type: 'DateTime' }),
  }),
})

const WebhookSecretPayload = builder.objectRef<{ accountId: string; secret: string }>('WebhookSecretPayload').implement({
  fields: (t) => ({
    webhook: t.prismaField({
      type: 'WebhookEndpoint',
      resolve: (query, { accountId }, _args, ctx) => ctx.deps.db.webhookEndpoint.findUniqueOrThrow({ ...query, where: { accountId } }),
    }),
    secret: t.exposeString('secret', { description: 'whsec_…: verify webhook-signature with it. Keep it secret.' }),
  }),
})

builder.queryFields((t) => ({
  webhook: t.prismaField({
    type: WebhookEndpoint,
    nullable: true,
    resolve: async (query, _root, _args, ctx) => ctx.deps.db.webhookEndpoint.findUnique({ ...query, where: { accountId: (await ctx.account()).id } }),
  }),
  webhookDeliveries: t.prismaField({
    type: ['WebhookDelivery'],
    description: 'Newest first.',
    args: { state: t.arg.string(), first: t.arg.int({ defaultValue: 50 }) },
    resolve: async (query, _root, { state, first }, ctx) => {
      // Text no database can compare (NUL, lone surrogates) is refused before the query.
      const problem = state ? textProblem(state) : null
      if (problem) throw validationError([{ field: 'state', message: `state ${problem}` }])
      return ctx.deps.db.webhookDelivery.findMany({
        ...query,
        where: { accountId: (await ctx.account()).id, ...(state ? { state } : {}) },
        orderBy: { createdAt: 'desc' },
        take: Math.min(Math.max(first ?? 50, 1), 200),
      })
    },
  }),
}))

builder.mutationFields((t) => ({
  setWebhook: t.field({
    type: WebhookSecretPayload,
    description: 'Registers the webhook URL (keeps an existing secret; enables a disabled endpoint).',
    args: { url: t.arg.string({ required: true }) },
    resolve: async (_root, { url }, ctx) => {
      const endpoint = await setWebhook(ctx.deps, (await ctx.account()).id, url)
      return { accountId: endpoint.accountId, secret: endpoint.secret }
    },
  }),
  rotateWebhookSecret: t.field({
    type: WebhookSecretPayload,
    resolve: async (_root, _args, ctx) => {
      const endpoint = await rotateWebhookSecret(ctx.deps, (await ctx.account()).id)
      return { accountId: endpoint.accountId, secret: endpoint.secret }
    },
  }),
  removeWebhook: t.field({
    type: DeletedPayload,
    resolve: async (_root, _args, ctx) => {
      const accountId = (await ctx.account()).id
      await removeWebhook(ctx.deps, accountId)
      return { deletedId: accountId }
    },
  }),
  redeliverWebhook: t.prismaField({
    type: 'WebhookDelivery',
    description: 'Sends a delivery again from the start of the retry schedule, with the same webhook-id.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, { id }, ctx) => {
      const delivery = await redeliver(ctx.deps, (await ctx.account()).id, String(id))
      return ctx.deps.db.webhookDelivery.findUniqueOrThrow({ ...query, where: { id: delivery.id } })
    },
  }),
}))
