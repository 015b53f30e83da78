import type { Db } from '../db/client.js'

/** What a gateway is handed. */
export interface OutgoingSms {
  id: string
  to: string
  sender: string
  text: string
  encoding: 'GSM_7' | 'UCS_2'
  pages: number
}

export interface GatewayContext {
  db: Db
  now: Date
}

/**
 * The seam to a carrier. A connector (SMPP bind, HTTP aggregator) implements `submit` and reports
 * what happens next through `recordCarrierStatus` (src/sms/record-status.ts) with the id it
 * returned here. Nothing else in the service knows which gateway is in use. See docs/sms.md.
 */
export interface SmsGateway {
  readonly name: string
  /** Messages through this gateway are marked `sandbox: true`. */
  readonly sandbox: boolean
  /** Resolves once the carrier accepted the message; throws when it refused it. */
  submit(message: OutgoingSms, context: GatewayContext): Promise<{ gatewayMessageId: string; mccmnc?: string }>
}
