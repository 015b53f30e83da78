import type { SmsGateway } from './gateway.js'
import { isUniqueViolation } from '../core/errors.js'

/** Recipients that make the sandbox report a status other than DELIVRD (docs/sms.md). */
export const SANDBOX_MAGIC_NUMBERS: Record<string, string> = {
  '+254700000010': 'UNDELIV',
  '+254700000011': 'EXPIRED',
  '+254700000012': 'REJECTD',
  '+254700000013': 'UNKNOWN',
  '+254700000014': 'FAILED',
  '+254700000015': 'DND',
}

/** MCC 001 / MNC 01: the ITU test network. */
export const SANDBOX_MCCMNC = '00101'

/**
 * Accepts every message without a carrier and reports its final status after `delayMs`. The
 * report is a row in the database (ScheduledCarrierEvent), applied by the worker loop, so it
 * survives a restart and any instance may apply it.
 *
 * Idempotent per message id, like a real carrier given a client reference: a resubmission while
 * the report is scheduled hits the unique messageId (no second row), and one after the report was
 * applied finds the carrier status already on the message. Either way it answers the same id.
 */
export function createSandboxGateway({ delayMs }: { delayMs: number }): SmsGateway {
  return {
    name: 'sandbox',
    sandbox: true,
    async submit(message, { db, now }) {
      const accepted = { gatewayMessageId: `sandbox-${message.id}`, mccmnc: SANDBOX_MCCMNC }
      const reported = await db.message.findUnique({ where: { id: message.id }, select: { carrierStatus: true } })
      if (reported?.carrierStatus) return accepted
      try {
        await db.scheduledCarrierEvent.create({
          data: {
            messageId: message.id,
            carrierStatus: SANDBOX_MAGIC_NUMBERS[message.to] ?? 'DELIVRD',
            errorCode: SANDBOX_MAGIC_NUMBERS[message.to] ? '001' : '000',
            mccmnc: SANDBOX_MCCMNC,
            dueAt: new Date(now.getTime() + delayMs),
          },
        })
      } catch (error) {
        if (!isUniqueViolation(error)) throw error
      }
      return accepted
    },
  }
}
