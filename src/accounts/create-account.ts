import type { Db } from '../db/client.js'
import { validationError } from '../core/errors.js'
import { insertApiKey, type AuditSource } from '../auth/api-keys.js'
import { recordAudit } from '../audit/record-audit.js'

/**
 * Makes an account and its first key (every scope). With `audit` (the CLI), the account, the key
 * and their entries (`account.create`, `apikey.create`) commit together, in one transaction.
 */
export async function createAccount({ db }: { db: Db }, input: { name: string; timezone?: string }, audit?: AuditSource) {
  const name = input.name.trim()
  if (!name || name.length > 100) throw validationError([{ field: 'name', message: 'name must be 1 to 100 characters' }])
  const timezone = input.timezone ?? 'UTC'
  if (!isTimeZone(timezone)) throw validationError([{ field: 'timezone', message: `unknown time zone ${timezone}` }])
  return db.$transaction(async (tx) => {
    const account = await tx.account.create({ data: { name, timezone } })
    if (audit) await recordAudit(tx, { accountId: account.id, ...audit, action: 'account.create', details: { name, timezone } })
    const key = await insertApiKey(tx, account.id, { expiresAt: null }, new Date(), audit)
    return { account, apiKey: key.apiKey }
  })
}

export function isTimeZone(zone: string): boolean {
  try {
    // Intl throws a RangeError for a zone it does not know: the construction is the check.
    // oxlint-disable-next-line no-new
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
    return true
  } catch {
    return false
  }
}
