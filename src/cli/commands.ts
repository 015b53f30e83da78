import type { Deps } from '../deps.js'
import { AppError } from '../errors.js'
import { createAccount } from '../accounts/create-account.js'
import { createApiKey, revokeApiKey } from '../auth/api-keys.js'

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
}
