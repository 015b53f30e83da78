import type { Deps } from '../deps.js'
import { createConsoleLink } from '../console/sessions.js'
import { AppError } from '../core/errors.js'
import { createAccount } from '../accounts/create-account.js'
import { createApiKey, keyLabel, MAX_ROLL_GRACE_HOURS, revokeApiKey, rollApiKey } from '../auth/api-keys.js'
import { ALL_SCOPES, parseStoredScopes, requestedScopes } from '../auth/scopes.js'
import { OPERATOR, recordAudit } from '../audit/record-audit.js'
import { linkBaseUrl } from '../db/public-base-url.js'
import { createEndpoint, ENDPOINT_ORDER, MAX_ENDPOINTS_PER_ACCOUNT, setWebhook } from '../webhooks/endpoints.js'
import { eventTypesOf, PAYLOAD_FORMATS, WEBHOOK_EVENT_TYPES } from '../webhooks/event-types.js'
import { formatCredits, parseCredits } from '../sms/money.js'
import { readFile } from 'node:fs/promises'
import { importChannel } from '../channel/import-channel.js'
import { setChannelOperator } from '../channel/set-operator.js'
import { seedDemo } from '../demo/seed-demo.js'
import { publishChannelChanged } from '../live/channel-events.js'
import { assignSim, listSims, unassignSim } from '../sms/sims.js'

export interface Command {
  /** One line for the command list. */
  summary: string
  /** The usage line after `npm run cli --`. */
  usage: string
  /** Each option with its meaning, for `<command> --help`. */
  options: Record<string, string>
  positionals?: boolean
  /** Longer notes for `<command> --help`. */
  notes?: string
  run(deps: Deps, flags: Record<string, string | undefined>, positionals: string[], io: CommandIo): Promise<unknown>
}

export interface CommandIo {
  /** A line for the operator on stderr, beside the JSON result on stdout. */
  notice(line: string): void
}

function required(flags: Record<string, string | undefined>, name: string): string {
  const value = flags[name]?.trim()
  if (!value) throw new AppError('VALIDATION_FAILED', `--${name} is required`)
  return value
}

export const commands: Record<string, Command> = {
  'account:create': {
    summary: 'Create an account and its first API key (printed once)',
    usage: 'account:create --name <name> [--timezone <IANA zone>]',
    options: { name: 'the account name (1 to 100 characters)', timezone: 'zone for delivery report times, default UTC' },
    async run(deps, flags) {
      const { account, apiKey } = await createAccount(deps, { name: required(flags, 'name'), timezone: flags.timezone }, OPERATOR_AUDIT)
      return { account: { uuid: account.id, name: account.name }, apiKey }
    },
  },
  'apikey:create': {
    summary: 'Issue another API key for an account (printed once)',
    usage: 'apikey:create --account <uuid> [--label <text>] [--scopes <scope,…>] [--expires-in <N>d|<N>h]',
    options: {
      account: 'the account uuid',
      label: 'what to call it (1 to 100 characters)',
      scopes: `what it may do, comma-separated, from: ${ALL_SCOPES.join(', ')} (default: all)`,
      'expires-in': 'it stops working after this long: days (30d) or hours (12h); default never',
    },
    async run(deps, flags) {
      const accountId = await existingAccount(deps, required(flags, 'account'))
      const options = {
        label: flags.label === undefined ? null : keyLabel(flags.label),
        scopes: flags.scopes === undefined ? undefined : requestedScopes(flags.scopes.split(',')),
        expiresAt:
          flags['expires-in'] === undefined ? null : new Date(deps.clock.now().getTime() + duration(flags['expires-in'], 'expires-in')),
        maxLiveKeys: deps.env.API_KEYS_PER_ACCOUNT,
      }
      const key = await createApiKey(deps, accountId, options, OPERATOR_AUDIT)
      const row = await deps.db.apiKey.findUniqueOrThrow({ where: { id: key.id } })
      return {
        id: key.id,
        prefix: key.prefix,
        apiKey: key.apiKey,
        label: row.label,
        scopes: parseStoredScopes(row.scopes),
        expiresAt: row.expiresAt?.toISOString() ?? null,
      }
    },
  },
  'apikey:revoke': {
    summary: 'Revoke an API key by its id, its visible prefix (gk_…) or the whole key',
    usage: 'apikey:revoke --key <id|prefix|key>',
    options: { key: 'the key id, its prefix, or the whole key' },
    async run(deps, flags) {
      const key = await revokeApiKey(deps, required(flags, 'key'), undefined, OPERATOR_AUDIT)
      return { id: key.id, prefix: key.prefix, revokedAt: key.revokedAt!.toISOString() }
    },
  },
  'apikey:roll': {
    summary: 'Replace an API key with a new one (printed once); the old one works for a grace period',
    usage: 'apikey:roll --key <id|prefix|key> [--grace-hours <0-720>]',
    options: {
      key: 'the key id, its prefix, or the whole key',
      'grace-hours': `how long the old key keeps working, 0 to ${MAX_ROLL_GRACE_HOURS} (default 24)`,
    },
    notes: 'The new key has the same label and scopes; an expiring key gets the same lifetime again, counted from now.',
    async run(deps, flags) {
      const grace = flags['grace-hours'] === undefined ? 24 : wholeNumber(flags['grace-hours'], 'grace-hours')
      const key = await rollApiKey(deps, required(flags, 'key'), grace, undefined, OPERATOR_AUDIT)
      return {
        id: key.id,
        prefix: key.prefix,
        apiKey: key.apiKey,
        previous: { id: key.previous.id, prefix: key.previous.prefix, expiresAt: key.previous.expiresAt.toISOString() },
      }
    },
  },
  'console:link': {
    summary: 'Print a single-use sign-in link to the account console (valid 15 minutes)',
    usage: 'console:link --account <uuid>',
    options: { account: 'the account uuid' },
    notes:
      'Prints the URL alone (not JSON); when it expires goes to stderr. Its base is PUBLIC_BASE_URL, or http://localhost:$PORT, ' +
      'when either is set; otherwise the URL the last server started on this database recorded. Open it in a browser and press Sign in.',
    async run(deps, flags, _positionals, io) {
      const account = await existingAccount(deps, required(flags, 'account'))
      const base = await linkBaseUrl(deps)
      const link = await createConsoleLink({ ...deps, env: { ...deps.env, PUBLIC_BASE_URL: base.url } }, account, OPERATOR_AUDIT)
      if (base.recordedAt)
        io.notice(
          `Under ${base.url}, which the server started at ${base.recordedAt.toISOString()} recorded (set PUBLIC_BASE_URL or PORT to choose).`,
        )
      io.notice(`The link works once, until ${link.expiresAt.toISOString()}.`)
      return link.url
    },
  },
  'webhook:set': {
    summary: "Set the URL of the account's default webhook endpoint (its oldest; created when none), and print its signing secret",
    usage: 'webhook:set --account <uuid> --url <https://…>',
    options: { account: 'the account uuid', url: 'a public http(s) URL (private addresses need WEBHOOK_ALLOW_PRIVATE_NETWORKS=true)' },
    async run(deps, flags) {
      const accountId = await existingAccount(deps, required(flags, 'account'))
      const endpoint = await setWebhook(deps, accountId, required(flags, 'url'), OPERATOR_AUDIT)
      return { url: endpoint.url, secret: endpoint.secret }
    },
  },
  'webhook:add': {
    summary: `Add one more webhook endpoint (at most ${MAX_ENDPOINTS_PER_ACCOUNT} per account), and print its id and signing secret`,
    usage: 'webhook:add --account <uuid> --url <https://…> [--events <type,…>] [--format legacy|standard]',
    options: {
      account: 'the account uuid',
      url: 'a public http(s) URL (private addresses need WEBHOOK_ALLOW_PRIVATE_NETWORKS=true)',
      events: `comma-separated event types: ${WEBHOOK_EVENT_TYPES.join(', ')} (default: all)`,
      format: `the body: ${PAYLOAD_FORMATS.join(' (the default), ')} (the Standard Webhooks envelope)`,
    },
    async run(deps, flags) {
      const accountId = await existingAccount(deps, required(flags, 'account'))
      const events = flags.events === undefined ? undefined : flags.events.split(',').map((e) => e.trim())
      const endpoint = await createEndpoint(
        deps,
        accountId,
        { url: required(flags, 'url'), eventTypes: events, payloadFormat: flags.format },
        OPERATOR_AUDIT,
      )
      return {
        id: endpoint.id,
        url: endpoint.url,
        secret: endpoint.secret,
        eventTypes: eventTypesOf(endpoint.eventTypes),
        payloadFormat: endpoint.payloadFormat,
      }
    },
  },
  'webhook:list': {
    summary: "List an account's webhook endpoints, oldest (the default) first, without their secrets",
    usage: 'webhook:list --account <uuid>',
    options: { account: 'the account uuid' },
    async run(deps, flags) {
      const accountId = await existingAccount(deps, required(flags, 'account'))
      const endpoints = await deps.db.webhookEndpoint.findMany({ where: { accountId }, orderBy: ENDPOINT_ORDER })
      return endpoints.map((e) => ({
        id: e.id,
        url: e.url,
        eventTypes: eventTypesOf(e.eventTypes),
        payloadFormat: e.payloadFormat,
        enabled: !e.disabledAt,
      }))
    },
  },
  'channel:import': {
    summary: 'Load or update a channel from an import file (docs/channel.md)',
    usage: 'channel:import <file.json> --account <uuid>',
    options: { account: 'the operator account: its API keys manage the channel (GraphQL mutations)' },
    notes:
      'Without --account the channel is imported with the operator named in the file (channel.operator_account), or none; ' +
      'a notice then says how to add one later with channel:operator.',
    positionals: true,
    async run(deps, flags, positionals, io) {
      if (positionals.length !== 1) throw new AppError('VALIDATION_FAILED', 'give exactly one file: channel:import <file.json>')
      let text: string
      try {
        text = await readFile(positionals[0]!, 'utf8')
      } catch (error) {
        throw new AppError(
          'VALIDATION_FAILED',
          `cannot read ${positionals[0]}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        )
      }
      const account = flags.account ? await existingAccount(deps, flags.account) : undefined
      const channel = await importChannel(deps, text, account)
      // Servers on the same PostgreSQL database push the new now playing to their subscribers.
      await publishChannelChanged(deps, channel.id)
      if (!channel.operatorAccountId) {
        io.notice(
          `channel:import: channel ${channel.slug} has no operator account, so no API key can manage it; ` +
            `add one with: npm run cli -- channel:operator --channel ${channel.slug} --account <uuid> (account:list shows the uuids)`,
        )
      }
      return { channel: { uuid: channel.id, slug: channel.slug } }
    },
  },
  'account:credit': {
    summary: 'Add SMS credit to an account and/or set its price per page',
    usage: 'account:credit --account <uuid> [--add <credits>] [--price-per-page <credits>]',
    options: { account: 'the account uuid', add: 'credits to add (up to 4 decimals)', 'price-per-page': 'the price of one SMS page' },
    async run(deps, flags) {
      const id = await existingAccount(deps, required(flags, 'account'))
      const add = credits(flags, 'add')
      const price = credits(flags, 'price-per-page')
      if (add === undefined && price === undefined)
        throw new AppError('VALIDATION_FAILED', 'give --add <credits> and/or --price-per-page <credits>')
      const account = await deps.db.$transaction(async (tx) => {
        const account = await tx.account.update({
          where: { id },
          data: {
            ...(add !== undefined ? { creditBalance: { increment: add } } : {}),
            ...(price !== undefined ? { pricePerPage: price } : {}),
          },
        })
        const details = {
          ...(add !== undefined ? { added: formatCredits(add) } : {}),
          ...(price !== undefined ? { pricePerPage: formatCredits(price) } : {}),
        }
        await recordAudit(tx, { accountId: id, ...OPERATOR_AUDIT, action: 'account.credit', details })
        return account
      })
      return {
        account: {
          uuid: account.id,
          creditBalance: formatCredits(account.creditBalance),
          pricePerPage: formatCredits(account.pricePerPage),
        },
      }
    },
  },

  'channel:operator': {
    summary: 'Hand a channel to the account whose API keys will manage it',
    usage: 'channel:operator --channel <uuid|slug> --account <uuid>',
    options: { channel: 'the channel uuid or slug', account: 'the operator account uuid' },
    async run(deps, flags) {
      const channel = await setChannelOperator(deps.db, required(flags, 'channel'), required(flags, 'account'))
      return { channel: { uuid: channel.id, slug: channel.slug, operator: channel.operatorAccountId } }
    },
  },
  'account:list': {
    summary: 'List accounts with their key counts and credit',
    usage: 'account:list',
    options: {},
    async run(deps) {
      const accounts = await deps.db.account.findMany({
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        select: {
          id: true,
          name: true,
          timezone: true,
          creditBalance: true,
          createdAt: true,
          _count: { select: { apiKeys: { where: { revokedAt: null } } } },
        },
      })
      return {
        accounts: accounts.map((a) => ({
          uuid: a.id,
          name: a.name,
          timezone: a.timezone,
          creditBalance: formatCredits(a.creditBalance),
          activeKeys: a._count.apiKeys,
          createdAt: a.createdAt.toISOString(),
        })),
      }
    },
  },
  'apikey:list': {
    summary: "List an account's API keys (prefixes only: keys are never stored)",
    usage: 'apikey:list --account <uuid>',
    options: { account: 'the account uuid' },
    async run(deps, flags) {
      const accountId = await existingAccount(deps, required(flags, 'account'))
      const keys = await deps.db.apiKey.findMany({ where: { accountId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] })
      return {
        keys: keys.map((k) => ({
          id: k.id,
          prefix: k.prefix,
          label: k.label,
          createdAt: k.createdAt.toISOString(),
          scopes: parseStoredScopes(k.scopes),
          revokedAt: k.revokedAt?.toISOString() ?? null,
          expiresAt: k.expiresAt?.toISOString() ?? null,
          lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
        })),
      }
    },
  },
  'channel:list': {
    summary: 'List channels with their operator accounts',
    usage: 'channel:list',
    options: {},
    async run(deps) {
      const channels = await deps.db.channel.findMany({
        orderBy: [{ slug: 'asc' }],
        select: { id: true, slug: true, name: true, timezone: true, operatorAccountId: true },
      })
      return {
        channels: channels.map((c) => ({ uuid: c.id, slug: c.slug, name: c.name, timezone: c.timezone, operator: c.operatorAccountId })),
      }
    },
  },
  'demo:seed': {
    summary: 'Create a demo account, key, groups, contacts and a channel live around now',
    usage: 'demo:seed',
    options: {},
    notes: 'Every run makes a new demo account; the demo-tv channel is refreshed around the current time and handed to it.',
    async run(deps) {
      return seedDemo(deps)
    },
  },
  'sim:assign': {
    summary: 'Give a hosted SIM (a number or a short code) to an account: its inbound texts reach that account',
    usage: 'sim:assign --account <uuid> --number <E.164 or short code>',
    options: {
      account: 'the account uuid',
      number: 'the SIM: a number (E.164, or national in DEFAULT_COUNTRY) or a short code of 3 to 8 digits',
    },
    notes: 'A SIM belongs to one account: one held by another account is refused until sim:unassign.',
    async run(deps, flags) {
      const { sim, created } = await assignSim(
        deps,
        { accountId: required(flags, 'account'), number: required(flags, 'number') },
        OPERATOR_AUDIT,
      )
      return { sim: { number: sim.number, account: sim.accountId, assignedAt: sim.createdAt.toISOString() }, created }
    },
  },
  'sim:unassign': {
    summary: 'Take a hosted SIM from its account (texts to it are then kept as unowned)',
    usage: 'sim:unassign --number <E.164 or short code>',
    options: { number: 'the SIM' },
    async run(deps, flags) {
      const sim = await unassignSim(deps, { number: required(flags, 'number') }, OPERATOR_AUDIT)
      return { sim: { number: sim.number, account: sim.accountId }, unassigned: true }
    },
  },
  'sim:list': {
    summary: 'List hosted SIMs and their accounts',
    usage: 'sim:list [--account <uuid>]',
    options: { account: "only this account's SIMs" },
    async run(deps, flags) {
      const sims = await listSims(deps, flags.account?.trim() || undefined)
      return { sims: sims.map((s) => ({ number: s.number, account: s.accountId, assignedAt: s.createdAt.toISOString() })) }
    },
  },
  'sim:inbox': {
    summary: 'List the latest SMS received over SMPP (by default those to SIMs nobody owns)',
    usage: 'sim:inbox [--outcome <UNOWNED|SUBSCRIBED|UNSUBSCRIBED|IGNORED|all>] [--limit <n>]',
    options: {
      outcome: 'which texts: UNOWNED (the default: to SIMs nobody owns), SUBSCRIBED, UNSUBSCRIBED, IGNORED, or all',
      limit: 'how many, newest first (default 50, at most 1000)',
    },
    async run(deps, flags) {
      const limit = flags.limit === undefined ? 50 : Number(flags.limit)
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new AppError('VALIDATION_FAILED', '--limit must be a whole number from 1 to 1000')
      const outcome = (flags.outcome ?? 'UNOWNED').trim()
      if (!['UNOWNED', 'SUBSCRIBED', 'UNSUBSCRIBED', 'IGNORED', 'all'].includes(outcome))
        throw new AppError('VALIDATION_FAILED', '--outcome must be UNOWNED, SUBSCRIBED, UNSUBSCRIBED, IGNORED or all')
      const texts = await deps.db.inboundSms.findMany({
        where: outcome === 'all' ? {} : { outcome },
        orderBy: [{ receivedAt: 'desc' }, { id: 'asc' }],
        take: limit,
      })
      return {
        texts: texts.map((t) => ({
          sim: t.sim,
          from: t.sender,
          text: t.text,
          outcome: t.outcome,
          account: t.accountId,
          receivedAt: t.receivedAt.toISOString(),
        })),
      }
    },
  },
}

/** The CLI's changes are the operator's; the audit log records no address for them. */
const OPERATOR_AUDIT = { actor: OPERATOR, address: null }

/** `30d` or `12h` in milliseconds; VALIDATION_FAILED otherwise. */
function duration(value: string, name: string): number {
  const match = value.trim().match(/^([1-9]\d{0,5})([dh])$/)
  if (!match) throw new AppError('VALIDATION_FAILED', `--${name} must be a number of days or hours such as 30d or 12h`)
  return Number(match[1]) * (match[2] === 'd' ? 86_400_000 : 3_600_000)
}

function wholeNumber(value: string, name: string): number {
  if (!/^\d{1,6}$/.test(value.trim())) throw new AppError('VALIDATION_FAILED', `--${name} must be a whole number`)
  return Number(value)
}

async function existingAccount(deps: Deps, id: string): Promise<string> {
  const account = await deps.db.account.findUnique({ where: { id }, select: { id: true } })
  if (!account) throw new AppError('NOT_FOUND', `no account ${id}`)
  return account.id
}

function credits(flags: Record<string, string | undefined>, name: string): bigint | undefined {
  if (flags[name] === undefined) return undefined
  const value = parseCredits(flags[name]!)
  if (value === null) throw new AppError('VALIDATION_FAILED', `--${name} must be a decimal number of credits with at most 4 decimals`)
  return value
}
