import type { Deps } from '../deps.js'
import { AppError } from '../errors.js'
import { createAccount } from '../accounts/create-account.js'
import { createApiKey, revokeApiKey } from '../auth/api-keys.js'
import { setWebhook } from '../webhooks/endpoints.js'
import { formatCredits, parseCredits } from '../sms/money.js'
import { readFile } from 'node:fs/promises'
import { importChannel } from '../channel/import-channel.js'

export interface Command {
  options: string[]
  positionals?: boolean
  run(deps: Deps, flags: Record<string, string | undefined>, positionals: string[]): Promise<unknown>
}

function required(flags: Record<string, string | undefined>, name: string): string {
  const value = flags[name]?.trim()
  if (!value) throw new AppError('VALIDATION_FAILED', `--${name} is required`)
  return value
}

export const commands: Record<string, Command> = {
  'account:create': {
    options: ['name', 'timezone'],
    async run(deps, flags) {
      const { account, apiKey } = await createAccount(deps, { name: required(flags, 'name'), timezone: flags.timezone })
      return { account: { uuid: account.id, name: account.name }, apiKey }
    },
  },
  'apikey:create': {
    options: ['account'],
    async run(deps, flags) {
      const key = await createApiKey(deps, required(flags, 'account'))
      return { id: key.id, prefix: key.prefix, apiKey: key.apiKey }
    },
  },
  'apikey:revoke': {
    options: ['key'],
    async run(deps, flags) {
      const key = await revokeApiKey(deps, required(flags, 'key'))
      return { id: key.id, prefix: key.prefix, revokedAt: key.revokedAt!.toISOString() }
    },
  },
  'webhook:set': {
    options: ['account', 'url'],
    async run(deps, flags) {
      const endpoint = await setWebhook(deps, await existingAccount(deps, required(flags, 'account')), required(flags, 'url'))
      return { url: endpoint.url, secret: endpoint.secret }
    },
  },
  'channel:import': {
    options: ['account'],
    positionals: true,
    async run(deps, flags, positionals) {
      if (positionals.length !== 1) throw new AppError('VALIDATION_FAILED', 'give exactly one file: channel:import <file.json>')
      let text: string
      try {
        text = await readFile(positionals[0]!, 'utf8')
      } catch (error) {
        throw new AppError('VALIDATION_FAILED', `cannot read ${positionals[0]}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
      }
      const account = flags.account ? await existingAccount(deps, flags.account) : undefined
      const channel = await importChannel(deps, text, account)
      return { channel: { uuid: channel.id, slug: channel.slug } }
    },
  },
  'account:credit': {
    options: ['account', 'add', 'price-per-page'],
    async run(deps, flags) {
      const id = await existingAccount(deps, required(flags, 'account'))
      const add = credits(flags, 'add')
      const price = credits(flags, 'price-per-page')
      if (add === undefined && price === undefined) throw new AppError('VALIDATION_FAILED', 'give --add <credits> and/or --price-per-page <credits>')
      const account = await deps.db.account.update({
        where: { id },
        data: { ...(add !== undefined ? { creditBalance: { increment: add } } : {}), ...(price !== undefined ? { pricePerPage: price } : {}) },
      })
      return { account: { uuid: account.id, creditBalance: formatCredits(account.creditBalance), pricePerPage: formatCredits(account.pricePerPage) } }
    },
  },
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
