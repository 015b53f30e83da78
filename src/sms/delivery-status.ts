import { validationError } from '../core/errors.js'

/** The ten documented delivery status codes. */
export const DELIVERY_STATUSES = [
  'DELIVRD',
  'UNDELIV',
  'EXPIRED',
  'REJECTD',
  'UNKNOWN',
  'PENDING',
  'FAILED',
  'NOCREDT',
  'DND',
  'SENT',
] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

/** Every status but PENDING and SENT ends the report (`done: true`). */
export const isFinal = (status: DeliveryStatus) => status !== 'PENDING' && status !== 'SENT'

/**
 * Raw carrier statuses and what they report. SMPP delivery receipts carry `stat:` values; HTTP
 * aggregators mostly reuse them. See docs/sms.md.
 */
export const CARRIER_STATUS_MAP: Record<string, DeliveryStatus> = {
  DELIVRD: 'DELIVRD',
  DELIVERED: 'DELIVRD',
  UNDELIV: 'UNDELIV',
  UNDELIVERABLE: 'UNDELIV',
  EXPIRED: 'EXPIRED',
  REJECTD: 'REJECTD',
  REJECTED: 'REJECTD',
  UNKNOWN: 'UNKNOWN',
  ACCEPTD: 'SENT',
  ACCEPTED: 'SENT',
  ENROUTE: 'SENT',
  SENT: 'SENT',
  DELETED: 'FAILED',
  FAILED: 'FAILED',
  PENDING: 'PENDING',
  NOCREDT: 'NOCREDT',
  DND: 'DND',
}

export function mapCarrierStatus(raw: string): DeliveryStatus {
  const status = CARRIER_STATUS_MAP[raw.trim().toUpperCase()]
  if (!status) throw validationError([{ field: 'status', message: `unknown carrier status ${raw}` }])
  return status
}
