import { randomUUID } from 'node:crypto'
import type { Deps } from '../deps.js'
import { AppError, validationError } from '../errors.js'
import { normalizeMobile } from '../messaging/mobile.js'
import { InputRules } from '../messaging/input-rules.js'
import { MAX_PAGES, segment } from './encoding.js'
import { applyStatusChange } from './record-status.js'

export interface SendSmsInput {
  to: string
  message: string
  sender?: string | null
}

/** Sender ids: up to 11 letters/digits/spaces (alphanumeric) or a phone number of up to 15 digits. */
const SENDER_PATTERN = /^(?:[A-Za-z0-9 .&-]{1,11}|\+?\d{3,15})$/

/**
 * Sends one SMS. Credits for every page are deducted atomically; without enough credit the message
 * is not sent and its report is NOCREDT (done). Returns the message id (the report reference).
 */
export async function sendSms(deps: Pick<Deps, 'db' | 'env' | 'clock' | 'gateway' | 'logger'>, accountId: string, input: SendSmsInput) {
  const { db, gateway } = deps
  const rules = new InputRules()
  const rawTo = rules.required('to', input.to, 64)
  const to = rawTo ? normalizeMobile(rawTo, deps.env.DEFAULT_COUNTRY) : null
  if (rawTo && !to) rules.fail('to', `to "${rawTo}" is not a valid mobile number`)
  if (typeof input.message !== 'string' || input.message.length === 0) rules.fail('message', 'message is required')
  else rules.storable('message', input.message)
  const sender = rules.optional('sender', input.sender, 15)
  if (sender && !SENDER_PATTERN.test(sender)) rules.fail('sender', 'sender must be up to 11 letters and digits, or a phone number')
  rules.check()
  const seg = segment(input.message)
  if (seg.pages > MAX_PAGES) throw validationError([{ field: 'message', message: `message is longer than ${MAX_PAGES} pages` }])

  const now = deps.clock.now()
  const id = randomUUID()
  const created = await db.$transaction(async (tx) => {
    const account = await tx.account.findUniqueOrThrow({ where: { id: accountId }, select: { pricePerPage: true, name: true } })
    const cost = account.pricePerPage * BigInt(seg.pages)
    const { count: paid } = await tx.account.updateMany({
      where: { id: accountId, creditBalance: { gte: cost } },
      data: { creditBalance: { decrement: cost } },
    })
    await tx.message.create({
      data: {
        id,
        accountId,
        mobile: to!,
        sender: sender || defaultSender(account.name),
        text: input.message,
        encoding: seg.encoding,
        pages: seg.pages,
        costPerPage: account.pricePerPage,
        creditsDeducted: paid ? cost : 0n,
        sandbox: gateway.sandbox,
        gateway: gateway.name,
        status: 'PENDING',
        broadcastAt: now,
        createdAt: now,
      },
    })
    await tx.messageStatusUpdate.create({ data: { messageId: id, status: 'PENDING', createdAt: now } })
    if (!paid) await applyStatusChange(tx, id, { status: 'NOCREDT', at: now })
    return { paid: paid > 0, cost }
  })
  if (!created.paid) return { id, status: 'NOCREDT' as const }

  try {
    const accepted = await gateway.submit(
      { id, to: to!, sender: sender || '', text: input.message, encoding: seg.encoding, pages: seg.pages },
      { db, now },
    )
    await db.$transaction(async (tx) => {
      await tx.message.update({ where: { id }, data: { gatewayMessageId: accepted.gatewayMessageId } })
      await applyStatusChange(tx, id, { status: 'SENT', mccmnc: accepted.mccmnc, at: deps.clock.now() })
    })
    return { id, status: 'SENT' as const }
  } catch (error) {
    if (error instanceof AppError) throw error
    deps.logger.warn({ err: error, messageId: id, gateway: gateway.name }, 'gateway refused a message')
    // Not sent: the credits go back.
    await db.$transaction(async (tx) => {
      await tx.account.update({ where: { id: accountId }, data: { creditBalance: { increment: created.cost } } })
      await tx.message.update({ where: { id }, data: { creditsDeducted: 0n } })
      await applyStatusChange(tx, id, { status: 'FAILED', carrierErrorCode: 'SUBMIT', at: deps.clock.now() })
    })
    return { id, status: 'FAILED' as const }
  }
}

const defaultSender = (accountName: string) => accountName.replace(/[^A-Za-z0-9 ]/g, '').trim().slice(0, 11) || 'SMS'
