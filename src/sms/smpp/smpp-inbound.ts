import type { Deps } from '../../deps.js'
import { AppError, isUniqueViolation } from '../../core/errors.js'
import { handleInboundSms } from '../../sms-opt-in/handle-inbound-sms.js'
import { simOwner } from '../sims.js'

type InboundDeps = Pick<Deps, 'db' | 'dbKind' | 'env' | 'clock' | 'gateway' | 'logger'> & Partial<Pick<Deps, 'events'>>

export interface InboundText {
  /** The SIM (number or short code) the text was sent to. */
  sim: string
  from: string
  text: string
  /** One part of a concatenated text (UDH or sar_* TLVs). */
  concat?: { reference: number; part: number; parts: number }
}

/**
 * A text received over SMPP. A part of a concatenated text is kept until every part is in (they may
 * come to different instances); whoever removes the complete set joins it. The whole text then runs
 * `handleInboundSms` for the SIM's account, as `receiveSms` does, and is kept in InboundSms with
 * what it did. A text to a SIM nobody owns is kept as UNOWNED for the operator (`sim:inbox`).
 * Throws only when it could not be kept (the database is down): the SMSC is then told to retry.
 */
export async function receiveSmppText(deps: InboundDeps, input: InboundText): Promise<string> {
  const now = deps.clock.now()
  let text = input.text
  if (input.concat && input.concat.parts > 1) {
    const joined = await joinParts(deps, input, now)
    if (joined === null) return 'PART'
    text = joined
  }
  const accountId = await simOwner(deps.db, input.sim, deps.env.DEFAULT_COUNTRY)
  let outcome = 'UNOWNED'
  if (accountId) {
    try {
      outcome = (await handleInboundSms(deps, accountId, { to: input.sim, from: input.from, text })).action
    } catch (error) {
      // A text the opt-in code cannot take (a sender that is no mobile number): kept, not retried.
      if (!(error instanceof AppError) || error.code !== 'VALIDATION_FAILED') throw error
      deps.logger.info({ sim: input.sim, error: error.message }, 'inbound sms ignored')
      outcome = 'IGNORED'
    }
  }
  await deps.db.inboundSms.create({ data: { accountId, sim: input.sim, sender: input.from, text, outcome, receivedAt: now } })
  return outcome
}

async function joinParts(deps: InboundDeps, input: InboundText, now: Date): Promise<string | null> {
  const { reference, part, parts } = input.concat!
  const key = `${input.from}|${input.sim}|${reference}`
  try {
    await deps.db.inboundSmsPart.create({ data: { reference: key, part, parts, text: input.text, receivedAt: now } })
  } catch (error) {
    // The SMSC delivered this part again (our answer was lost): one copy is enough.
    if (!isUniqueViolation(error)) throw error
  }
  const stored = await deps.db.inboundSmsPart.findMany({ where: { reference: key }, orderBy: { part: 'asc' } })
  if (stored.length < parts) return null
  const { count } = await deps.db.inboundSmsPart.deleteMany({ where: { reference: key } })
  // Another instance took the set between our read and our delete: it handles the text.
  if (count < parts) return null
  return stored.map((p) => p.text).join('')
}
