import type { Deps } from '../deps.js'
import type { Db, Tx } from '../db/client.js'
import { AppError, isUniqueViolation, notFound, validationError } from '../core/errors.js'
import { simKey } from '../messaging/mobile.js'

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
 * account holds is a CONFLICT (unassign it first); assigning it again to its owner changes nothing.
 */
export async function assignSim({ db, env }: Pick<Deps, 'db' | 'env'>, input: { accountId: string; number: string }) {
  const number = simNumber(input.number, env.DEFAULT_COUNTRY)
  const account = await db.account.findUnique({ where: { id: input.accountId }, select: { id: true } })
  if (!account) throw notFound('Account')
  const existing = await db.sim.findUnique({ where: { number } })
  if (existing && existing.accountId !== account.id) throw new AppError('CONFLICT', `SIM ${number} belongs to another account`)
  if (existing) return { sim: existing, created: false }
  try {
    return { sim: await db.sim.create({ data: { number, accountId: account.id } }), created: true }
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError('CONFLICT', `SIM ${number} belongs to another account`)
    throw error
  }
}

/** Takes a SIM from its account. Its groups keep their codes; texts to it are then kept as unowned. */
export async function unassignSim({ db, env }: Pick<Deps, 'db' | 'env'>, input: { number: string }) {
  const number = simNumber(input.number, env.DEFAULT_COUNTRY)
  const sim = await db.sim.findUnique({ where: { number } })
  if (!sim) throw notFound('SIM')
  await db.sim.deleteMany({ where: { number } })
  return sim
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
