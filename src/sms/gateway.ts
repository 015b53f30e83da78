import type { Db, DirectRead, DirectTransaction } from '../db/client.js'
import type { DatabaseKind } from '../db/connection-url.js'

/** What a gateway is handed. */
export interface OutgoingSms {
  /**
   * Our message id, sent to the carrier as the client reference. The same id may be submitted
   * again after a crash (the first attempt's answer was never recorded): see `SmsGateway.submit`.
   */
  id: string
  to: string
  sender: string
  text: string
  encoding: 'GSM_7' | 'UCS_2'
  pages: number
}

export interface GatewayContext {
  db: Db
  dbKind: DatabaseKind
  /** Raw statements without Prisma's runtime (Database.directRead; src/sms/sql.ts statementOf). */
  directRead?: DirectRead
  /**
   * The caller's transactions of raw statements (Database.directTransaction, or one on the caller's
   * own transaction): an SMPP connector records its parts in them, with the other records of the
   * turn (src/db/turn-transaction.ts). Without it, one statement at a time (directRead).
   */
  directTransaction?: DirectTransaction
  now: Date
  /**
   * The message was written by this same call (sendSms) and never submitted before: there is no
   * earlier attempt's state to look for (an SMPP connector's part rows).
   */
  fresh?: boolean
}

/**
 * Thrown by a gateway when the submit may succeed later (connection lost, carrier busy, timeout):
 * the submission is retried with backoff until its deadline. Anything else thrown is a refusal:
 * the credits go back and the message is FAILED at once.
 */
export class TransientGatewayError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'TransientGatewayError'
  }
}

/** What a gateway answers for an accepted message. */
export interface SubmitAccepted {
  gatewayMessageId: string
  mccmnc?: string
  /**
   * A final carrier status to record with SENT, when the gateway knows the carrier will never report
   * one: an SMPP part that went out but whose answer was lost (docs/sms.md "Crashes") is UNKNOWN.
   */
  finalReport?: { status: string; errorCode: string }
}

/** What an operator or a probe sees of a gateway's connection (`/readyz`, `/metrics`). */
export interface GatewayHealth {
  /** `bound` when the gateway can take messages now (always for the sandbox). */
  state: string
  bound: boolean
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
  /**
   * Resolves once the carrier accepted the message; throws when it refused it (a
   * `TransientGatewayError` when worth retrying). Must be idempotent per `message.id`: a second
   * submit of an id the carrier already has answers the first gateway id and sends nothing more
   * (SMPP: check by client reference before submit_sm; HTTP: pass the id as the idempotency key).
   */
  submit(message: OutgoingSms, context: GatewayContext): Promise<SubmitAccepted>
  /** The connection's state; absent: always able to take messages. */
  health?(): GatewayHealth
  /** Background work of the connector (the worker tick): reports that waited for their message. */
  sweep?(): Promise<number>
  /** Closes the connection cleanly (SIGTERM): an SMPP unbind. */
  stop?(): Promise<void>
}
