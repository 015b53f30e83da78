import type { Deps } from '../deps.js'
import type { Db, Tx } from '../db/client.js'
import { AppError, isUniqueViolation, notFound, validationError } from '../core/errors.js'
import { simKey } from '../messaging/mobile.js'
import { OPERATOR, recordAudit } from '../audit/record-audit.js'
import type { AuditSource } from '../auth/api-keys.js'

/** SIMs change only from the command line (no API assigns them): by default, the operator's changes. */
const BY_OPERATOR: AuditSource = { actor: OPERATOR, address: null }

/** A number (E.164, or national in DEFAULT_COUNTRY) or a short code of 3 to 8 digits. */
const SIM_TEXT = /^\+?[\d\s-]{3,20}$/

function simNumber(raw: string | undefined, defaultCountry: string): string {
  const text = raw?.trim() ?? ''
  if (!SIM_TEXT.test(text)) {
    throw validationError([{ field: 'number', message: `number "${text}" is not a phone number or a short code of 3 to 8 digits` }])
  }
  const key = simKey(text, defaultCountry)
  if (!key.startsWith('+') && !/^\d{3,8}$/.test(key)) {
    throw validationError([{ field: 'number', message: `number "${text}" is not a valid phone number or a short code of 3 to 8 digits` }])
  }
  return key
}

/**
 * Gives a hosted SIM to an account. A SIM belongs to one account: assigning one that another
 * account holds is a CONFLICT (unassign it first); assigning it again to its owner changes nothing
 * and records nothing. The assignment and its audit entry (`sim.assign`) commit together.
 */
export async function assignSim(
  { db, env }: Pick<Deps, 'db' | 'env'>,
  input: { accountId: string; number: string },
  audit: AuditSource = BY_OPERATOR,
) {
  const number = simNumber(input.number, env.DEFAULT_COUNTRY)
  const taken = () => new AppError('CONFLICT', `SIM ${number} belongs to another account`)
  try {
    return await db.$transaction(async (tx) => {
      const account = await tx.account.findUnique({ where: { id: input.accountId }, select: { id: true } })
      if (!account) throw notFound('Account')
      const existing = await tx.sim.findUnique({ where: { number } })
      if (existing && existing.accountId !== account.id) throw taken()
      if (existing) return { sim: existing, created: false }
      const sim = await tx.sim.create({ data: { number, accountId: account.id } })
      await recordAudit(tx, { accountId: account.id, ...audit, action: 'sim.assign', target: number, details: { account: account.id } })
      return { sim, created: true }
    })
  } catch (error) {
    if (isUniqueViolation(error)) throw taken()
    throw error
  }
}

/**
 * Takes a SIM from its account. Its groups keep their codes; texts to it are then kept as unowned.
 * The removal and its audit entry (`sim.unassign`, in the log of the account that held it) commit
 * together; of two removals at once one wins, the other gets NOT_FOUND.
 */
export async function unassignSim({ db, env }: Pick<Deps, 'db' | 'env'>, input: { number: string }, audit: AuditSource = BY_OPERATOR) {
  const number = simNumber(input.number, env.DEFAULT_COUNTRY)
  return db.$transaction(async (tx) => {
    const sim = await tx.sim.findUnique({ where: { number } })
    if (!sim) throw notFound('SIM')
    const { count } = await tx.sim.deleteMany({ where: { number, accountId: sim.accountId } })
    if (!count) throw notFound('SIM')
    await recordAudit(tx, {
      accountId: sim.accountId,
      ...audit,
      action: 'sim.unassign',
      target: number,
      details: { account: sim.accountId },
    })
    return sim
  })
}

export async function listSims({ db }: Pick<Deps, 'db'>, accountId?: string) {
  return db.sim.findMany({ where: accountId ? { accountId } : {}, orderBy: [{ accountId: 'asc' }, { number: 'asc' }] })
}

/** The account that owns the SIM a text was sent to, or null. */
export async function simOwner(db: Db | Tx, sim: string, defaultCountry: string): Promise<string | null> {
  const row = await db.sim.findUnique({ where: { number: simKey(sim, defaultCountry) }, select: { accountId: true } })
  return row?.accountId ?? null
}

/**
 * A subscribable group's SIM must be one of its account's SIMs. Another account's SIM is always
 * refused; a SIM nobody was assigned is accepted only on the sandbox gateway, as before SIMs had
 * owners (docs/sms.md "SIMs").
 */
export async function checkGroupSim(tx: Tx, accountId: string, sim: string, gateway: 'sandbox' | 'smpp') {
  const owner = await tx.sim.findUnique({ where: { number: sim }, select: { accountId: true } })
  if (owner?.accountId === accountId) return
  if (owner || gateway !== 'sandbox') {
    throw validationError([{ field: 'subscriptionSim', message: `subscriptionSim ${sim} is not one of the account's SIMs` }])
  }
}
