// The account itself: its balance, its API keys, and sign-in links and sessions of the account
// console (docs/console.md). Everything the console shows or changes is here, open to API clients too.
import { builder } from '../builder.js'
import { formatCredits } from '../../sms/money.js'
import { createApiKey, keyLabel, revokeApiKey } from '../../auth/api-keys.js'
import { createConsoleLink, endConsoleSessions } from '../../console/sessions.js'
import { AppError } from '../../core/errors.js'

const AccountRef = builder.prismaObject('Account', {
  description: 'The account of the API key (or console session) making the request.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The account uuid.' }),
    name: t.exposeString('name', { description: 'Its name.' }),
    timezone: t.exposeString('timezone', { description: 'The IANA zone its delivery reports use.' }),
    creditBalance: t.string({
      description: 'Credits left, as the delivery report writes money ("98.5").',
      resolve: (a) => formatCredits(a.creditBalance),
    }),
    pricePerPage: t.string({ description: 'Credits charged per SMS page.', resolve: (a) => formatCredits(a.pricePerPage) }),
  }),
})

const ApiKeyRef = builder.prismaObject('ApiKey', {
  description: 'An API key of the account. The key itself is shown once, by createApiKey; only its prefix is kept visible.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The key id.' }),
    prefix: t.exposeString('prefix', { description: 'The visible start of the key (gk_ and 12 hex digits).' }),
    label: t.exposeString('label', { nullable: true, description: 'What the account holder called it; null for keys made without one.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was made.' }),
    lastUsedAt: t.expose('lastUsedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When a request last used it, to the minute (each instance writes it at most once a minute); null: never.',
    }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true, description: 'When it was revoked; null while it works.' }),
  }),
})

const CreatedApiKey = builder.objectRef<{ id: string; apiKey: string }>('CreatedApiKeyPayload').implement({
  description: 'A new API key.',
  fields: (t) => ({
    apiKey: t.prismaField({
      type: ApiKeyRef,
      description: 'The key as listed.',
      resolve: (query, { id }, _args, ctx) => ctx.deps.db.apiKey.findUniqueOrThrow({ ...query, where: { id } }),
    }),
    key: t.exposeString('apiKey', { description: 'The whole key, shown this once: send it as `Authorization: Bearer <key>`.' }),
  }),
})

const ConsoleLinkPayload = builder.objectRef<{ url: string; expiresAt: Date }>('ConsoleLinkPayload').implement({
  description: 'A single-use sign-in link to the account console.',
  fields: (t) => ({
    url: t.exposeString('url', { description: 'Open it in a browser; it works once.' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', description: 'It stops working then (15 minutes after it was made).' }),
  }),
})

const SignOutPayload = builder.objectRef<{ sessionsEnded: number }>('SignOutPayload').implement({
  description: 'What signOut ended.',
  fields: (t) => ({ sessionsEnded: t.exposeInt('sessionsEnded', { description: 'How many console sessions ended.' }) }),
})

builder.queryFields((t) => ({
  account: t.prismaField({
    type: AccountRef,
    description: 'The account of the request: name, zone, credit balance and price.',
    resolve: async (query, _root, _args, ctx) =>
      ctx.deps.db.account.findUniqueOrThrow({ ...query, where: { id: (await ctx.account()).id } }),
  }),
  apiKeys: t.prismaField({
    type: [ApiKeyRef],
    description: "The account's API keys, revoked ones included, newest first.",
    resolve: async (query, _root, _args, ctx) =>
      ctx.deps.db.apiKey.findMany({
        ...query,
        where: { accountId: (await ctx.account()).id },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      }),
  }),
}))

builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: CreatedApiKey,
    description: 'Makes another API key for the account; the answer holds the whole key, shown this once.',
    args: { label: t.arg.string({ required: true, description: 'What to call it (1 to 100 characters), e.g. where it is used.' }) },
    resolve: async (_root, { label }, ctx) =>
      createApiKey(ctx.deps, (await ctx.account()).id, keyLabel(label), ctx.deps.env.API_KEYS_PER_ACCOUNT),
  }),
  revokeApiKey: t.prismaField({
    type: ApiKeyRef,
    description:
      "Revokes one of the account's keys: every instance refuses it from its next request (UNAUTHENTICATED). Revoking again changes nothing.",
    args: { id: t.arg.id({ required: true, description: 'The key id or its prefix.' }) },
    resolve: async (query, _root, { id }, ctx) => {
      const revoked = await revokeApiKey(ctx.deps, String(id), (await ctx.account()).id)
      return ctx.deps.db.apiKey.findUniqueOrThrow({ ...query, where: { id: revoked.id } })
    },
  }),
  createConsoleLink: t.field({
    type: ConsoleLinkPayload,
    description:
      "A single-use sign-in link to the account console, valid 15 minutes: for an integrator's back end to hand its staff. Needs an API key (a console session cannot make one).",
    resolve: async (_root, _args, ctx) => {
      const account = await ctx.account()
      if (!account.keyId) throw new AppError('FORBIDDEN', 'Sign-in links are made with an API key')
      return createConsoleLink(ctx.deps, account.id)
    },
  }),
  signOut: t.field({
    type: SignOutPayload,
    description:
      'Ends console sessions: from the console, its own session (or with everywhere: true every session of the account); with an API key, every session of the account (everywhere must be true).',
    args: { everywhere: t.arg.boolean({ defaultValue: false, description: 'Every console session of the account, not only this one.' }) },
    resolve: async (_root, { everywhere }, ctx) => {
      const account = await ctx.account()
      if (!everywhere && !ctx.consoleSessionId)
        throw new AppError('BAD_REQUEST', 'An API key has no session of its own: pass everywhere: true')
      return { sessionsEnded: await endConsoleSessions(ctx.deps, account.id, everywhere ? null : ctx.consoleSessionId) }
    },
  }),
}))
