// What an API key may do (docs/security.md, "Restricted keys"). A key holds scopes, chosen when it
// is made; every GraphQL field (and so every REST route, which runs a GraphQL document) names the
// one it needs (src/graphql/field-scopes.ts). Console sessions hold every scope.
import { validationError } from '../core/errors.js'

export const SCOPES = {
  read: 'Read the account: contacts, groups, messages, delivery reports, the webhook and its deliveries.',
  'contacts:write': 'Create, change and delete contacts and groups, and their memberships.',
  'sms:send': 'Send SMS.',
  'sms:receive': 'Report SMS received on hosted SIMs (SIM connectors: opt-in and opt-out codes).',
  'webhooks:manage': 'Set, rotate, test, redeliver and remove the webhook.',
  'channels:manage': 'Operate channels: import, live broadcasts, episode feeds, cancelled airings.',
  admin: 'Manage API keys, make console sign-in links, end console sessions, read the audit log.',
} as const

export type Scope = keyof typeof SCOPES

export const ALL_SCOPES = Object.keys(SCOPES) as Scope[]

export const isScope = (value: string): value is Scope => Object.hasOwn(SCOPES, value)

/** The stored form: scope names in SCOPES order, separated by commas. */
export const storedScopes = (scopes: Iterable<Scope>) => {
  const set = new Set(scopes)
  return ALL_SCOPES.filter((s) => set.has(s)).join(',')
}

/** A stored scopes text read back; names this version does not know are dropped (never granted). */
export const parseStoredScopes = (text: string): Scope[] => text.split(',').filter(isScope)

/**
 * The scopes asked for when a key is made: at least one, each known, duplicates ignored.
 * VALIDATION_FAILED (field `scopes`) otherwise.
 */
export function requestedScopes(raw: readonly string[]): Scope[] {
  const names = raw.map((s) => s.trim()).filter(Boolean)
  const unknown = names.filter((s) => !isScope(s))
  if (unknown.length)
    throw validationError([
      { field: 'scopes', message: `Unknown scope ${unknown.map((s) => JSON.stringify(s)).join(', ')}; known: ${ALL_SCOPES.join(', ')}` },
    ])
  if (!names.length) throw validationError([{ field: 'scopes', message: 'At least one scope is required' }])
  return parseStoredScopes(storedScopes(names as Scope[]))
}
