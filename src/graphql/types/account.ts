// The account itself: its balance, its API keys, and sign-in links and sessions of the account
// console (docs/console.md). Everything the console shows or changes is here, open to API clients too.
import { builder } from '../builder.js'
import { formatCredits } from '../../sms/money.js'
import { createApiKey, keyLabel, MAX_ROLL_GRACE_HOURS, revokeApiKey, rollApiKey } from '../../auth/api-keys.js'
import { ALL_SCOPES, parseStoredScopes, requestedScopes, SCOPES } from '../../auth/scopes.js'
import { createConsoleLink, endConsoleSessions } from '../../console/sessions.js'
import { AppError } from '../../core/errors.js'
import { auditSource } from '../audit-source.js'

export const ApiKeyScope = builder.enumType('ApiKeyScope', {
  description: 'What an API key may do. Every Query, Mutation and Subscription field names the scope it needs in its description.',
  values: Object.fromEntries(
    ALL_SCOPES.map((scope) => [scope.replace(':', '_').toUpperCase(), { value: scope, description: SCOPES[scope] }]),
  ) as Record<string, { value: (typeof ALL_SCOPES)[number]; description: string }>,
})

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
    scopes: t.field({
      type: [ApiKeyScope],
      select: { scopes: true },
      description: 'What it may do (keys made before scopes existed have every scope).',
      resolve: (k) => parseStoredScopes(k.scopes),
    }),
    expiresAt: t.expose('expiresAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it stops working (refused like a revoked key); null: never. A rolled key ends its grace period here.',
    }),
    rolledFromId: t.exposeID('rolledFromId', {
      nullable: true,
      description: 'The id of the key this one replaced (rollApiKey); null otherwise.',
    }),
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

const RolledApiKey = builder.objectRef<{ id: string; apiKey: string; previous: { id: string } }>('RolledApiKeyPayload').implement({
  description: 'The key that replaces a rolled one, and the rolled one with its new expiry.',
  fields: (t) => ({
    apiKey: t.prismaField({
      type: ApiKeyRef,
      description: 'The new key as listed: same label and scopes.',
      resolve: (query, { id }, _args, ctx) => ctx.deps.db.apiKey.findUniqueOrThrow({ ...query, where: { id } }),
    }),
    key: t.exposeString('apiKey', { description: 'The whole new key, shown this once.' }),
    previous: t.prismaField({
      type: ApiKeyRef,
      description: 'The rolled key: it works until its expiresAt (the end of the grace period).',
      resolve: (query, { previous }, _args, ctx) => ctx.deps.db.apiKey.findUniqueOrThrow({ ...query, where: { id: previous.id } }),
    }),
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
    scope: 'read',
    description: 'The account of the request: name, zone, credit balance and price.',
    resolve: async (query, _root, _args, ctx) =>
      ctx.deps.db.account.findUniqueOrThrow({ ...query, where: { id: (await ctx.account()).id } }),
  }),
  apiKeys: t.prismaField({
    type: [ApiKeyRef],
    scope: 'admin',
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
    scope: 'admin',
    description: 'Makes another API key for the account; the answer holds the whole key, shown this once.',
    args: {
      label: t.arg.string({ required: true, description: 'What to call it (1 to 100 characters), e.g. where it is used.' }),
      scopes: t.arg({
        type: [ApiKeyScope],
        description: 'What it may do: at least one scope. Every scope when not given.',
      }),
      expiresAt: t.arg({ type: 'DateTime', description: 'When it stops working (in the future); never when not given.' }),
    },
    resolve: async (_root, { label, scopes, expiresAt }, ctx) => {
      const source = await auditSource(ctx)
      const options = {
        label: keyLabel(label),
        scopes: scopes ? requestedScopes(scopes) : undefined,
        expiresAt,
        maxLiveKeys: ctx.deps.env.API_KEYS_PER_ACCOUNT,
      }
      return createApiKey(ctx.deps, source.accountId, options, source)
    },
  }),
  rollApiKey: t.field({
    type: RolledApiKey,
    scope: 'admin',
    description:
      "Replaces one of the account's keys with a new one (same label and scopes; an expiring key's lifetime counted again from now). The old key keeps working for graceHours, then is refused like a revoked one.",
    args: {
      id: t.arg.id({ required: true, description: 'The key id or its prefix.' }),
      graceHours: t.arg.int({
        required: true,
        description: `How long the old key keeps working: 0 (stops at once) to ${MAX_ROLL_GRACE_HOURS} hours, never past its own expiry.`,
      }),
    },
    resolve: async (_root, { id, graceHours }, ctx) => {
      const source = await auditSource(ctx)
      return rollApiKey(ctx.deps, String(id), graceHours, source.accountId, source)
    },
  }),
  revokeApiKey: t.prismaField({
    type: ApiKeyRef,
    description:
      "Revokes one of the account's keys: every instance refuses it from its next request (UNAUTHENTICATED). Revoking again changes nothing.",
    args: { id: t.arg.id({ required: true, description: 'The key id or its prefix.' }) },
    scope: 'admin',
    resolve: async (query, _root, { id }, ctx) => {
      const source = await auditSource(ctx)
      const revoked = await revokeApiKey(ctx.deps, String(id), source.accountId, source)
      return ctx.deps.db.apiKey.findUniqueOrThrow({ ...query, where: { id: revoked.id } })
    },
  }),
  createConsoleLink: t.field({
    type: ConsoleLinkPayload,
    description: "A single-use sign-in link to the account console, valid 15 minutes: for an integrator's back end to hand its staff.",
    scope: 'admin',
    resolve: async (_root, _args, ctx) => {
      const source = await auditSource(ctx)
      return createConsoleLink(ctx.deps, source.accountId, source)
    },
  }),
  signOut: t.field({
    type: SignOutPayload,
    description:
      'Ends console sessions: from the console, its own session (or with everywhere: true every session of the account); with an API key, every session of the account (everywhere must be true).',
    scope: 'admin',
    args: { everywhere: t.arg.boolean({ defaultValue: false, description: 'Every console session of the account, not only this one.' }) },
    resolve: async (_root, { everywhere }, ctx) => {
      const source = await auditSource(ctx)
      if (!everywhere && !ctx.consoleSessionId)
        throw new AppError('BAD_REQUEST', 'An API key has no session of its own: pass everywhere: true')
      return { sessionsEnded: await endConsoleSessions(ctx.deps, source.accountId, everywhere ? null : ctx.consoleSessionId, source) }
    },
  }),
}))
