import type { Deps } from '../deps.js'
import type { Tx } from '../db/client.js'
import { notFound, validationError } from '../core/errors.js'
import { textProblem } from '../messaging/input-rules.js'
import { isFinal, mapCarrierStatus, type DeliveryStatus } from './delivery-status.js'
import { deliveryReport } from './delivery-report.js'
import { publishStatusChanges, statusChanges } from '../live/status-events.js'
import type { StatusEvent } from '../live/topics.js'
import { currentTraceparent, tracingEnabled } from '../core/tracing.js'
import { newWebhookId } from '../webhooks/signature.js'
import { bodyFor, subscribes } from '../webhooks/event-types.js'
import { ENDPOINT_ORDER } from '../webhooks/endpoints.js'

export interface StatusChange {
  status: DeliveryStatus
  carrierStatus?: string | null
  carrierErrorCode?: string | null
  mccmnc?: string | null
  at: Date
}

/**
 * Applies one status change to a message, records it in the history and writes a delivery to the
 * outbox for each of the account's enabled endpoints subscribed to `message.status`: all in the
 * caller's transaction.
 * Only real changes count: a final status is final (a late ENROUTE after DELIVRD, or an UNDELIV
 * after DELIVRD, is ignored), a repeat of the current status is ignored, and so is any carrier
 * report on a message whose credits were refunded. Each applied change makes one webhook
 * delivery, so a reporter could otherwise make any number of them from one paid message.
 * Returns false when ignored. An applied change is appended to `changes`, which the caller
 * publishes once its transaction has committed (src/live/status-events.ts).
 */
export async function applyStatusChange(tx: Tx, messageId: string, change: StatusChange, changes?: StatusEvent[]): Promise<boolean> {
  const current = await tx.message.findUnique({
    where: { id: messageId },
    select: {
      status: true,
      done: true,
      submission: { select: { state: true } },
      account: {
        select: {
          timezone: true,
          webhooks: { where: { disabledAt: null }, select: { id: true, eventTypes: true, payloadFormat: true }, orderBy: ENDPOINT_ORDER },
        },
      },
    },
  })
  if (!current) throw notFound('Message')
  if (current.done || current.status === change.status) return false
  // A carrier report for a message refunded as never submitted (it reached the carrier after all)
  // cannot undo the refund; the message stays FAILED so balance and report agree.
  if (change.carrierStatus && current.submission?.state === 'refunded') return false
  const final = isFinal(change.status)
  const message = await tx.message.update({
    where: { id: messageId },
    data: {
      status: change.status,
      done: final,
      doneAt: final ? change.at : null,
      ...(change.carrierStatus !== undefined ? { carrierStatus: change.carrierStatus } : {}),
      ...(change.carrierErrorCode !== undefined ? { carrierErrorCode: change.carrierErrorCode } : {}),
      ...(change.mccmnc ? { mccmnc: change.mccmnc } : {}),
    },
  })
  await tx.messageStatusUpdate.create({
    data: {
      messageId,
      status: change.status,
      carrierStatus: change.carrierStatus ?? null,
      carrierErrorCode: change.carrierErrorCode ?? null,
      createdAt: change.at,
    },
  })
  changes?.push({ accountId: message.accountId, messageId, status: change.status })
  // One delivery per enabled endpoint subscribed to status updates, each in the body it asked for.
  const endpoints = current.account.webhooks.filter((e) => subscribes(e.eventTypes, 'message.status'))
  if (endpoints.length) {
    const report = deliveryReport(message, current.account.timezone)
    // The request (or worker tick) that caused the update: each attempt's span links back to it.
    const traceparent = tracingEnabled ? currentTraceparent() : null
    await tx.webhookDelivery.createMany({
      data: endpoints.map((endpoint) => ({
        id: newWebhookId(),
        accountId: message.accountId,
        endpointId: endpoint.id,
        eventType: 'message.status',
        messageId,
        body: bodyFor(endpoint.payloadFormat, 'message.status', change.at, report),
        nextAttemptAt: change.at,
        createdAt: change.at,
        traceparent,
      })),
    })
  }
  return true
}

export interface CarrierReport {
  /** Our message id, or the gateway's id with the gateway name. */
  messageId?: string
  gateway?: string | null
  gatewayMessageId?: string | null
  /** The carrier's raw status (SMPP stat or one of the documented codes). */
  status: string
  errorCode?: string | null
  mccmnc?: string | null
  at?: Date
}

/** The connector entry point for status changes. `accountId` scopes the lookup when given. */
export async function recordCarrierStatus(
  deps: Pick<Deps, 'db' | 'clock'> & Partial<Pick<Deps, 'events' | 'logger'>>,
  report: CarrierReport,
  accountId?: string,
) {
  const { db, clock } = deps
  // Text no database can store or compare (NUL, lone surrogates) is refused before any query.
  const details = (['messageId', 'gateway', 'gatewayMessageId', 'status', 'errorCode', 'mccmnc'] as const).flatMap((field) => {
    const problem = typeof report[field] === 'string' ? textProblem(report[field]) : null
    return problem ? [{ field, message: `${field} ${problem}` }] : []
  })
  if (details.length) throw validationError(details)
  const status = mapCarrierStatus(report.status)
  const where = report.messageId
    ? { id: report.messageId }
    : { gateway: report.gateway ?? '', gatewayMessageId: report.gatewayMessageId ?? '' }
  const changes = statusChanges()
  const result = await db.$transaction(async (tx) => {
    const message = await tx.message.findFirst({ where: { ...where, ...(accountId ? { accountId } : {}) }, select: { id: true } })
    if (!message) throw notFound('Message')
    const applied = await applyStatusChange(
      tx,
      message.id,
      {
        status,
        carrierStatus: report.status.trim().toUpperCase(),
        carrierErrorCode: report.errorCode ?? null,
        mccmnc: report.mccmnc,
        at: report.at ?? clock.now(),
      },
      changes,
    )
    return { messageId: message.id, status, applied }
  })
  await publishStatusChanges(deps, changes)
  return result
}
