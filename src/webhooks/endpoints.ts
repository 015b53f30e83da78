import type { Deps } from '../deps.js'
import type { Tx } from '../db/client.js'
import type { AuditSource } from '../auth/api-keys.js'
import { recordAudit } from '../audit/record-audit.js'
import { AppError, notFound, validationError } from '../core/errors.js'
import { isStorableText } from '../messaging/input-rules.js'
import { assertWebhookUrl } from './ssrf-guard.js'
import { newWebhookId, newWebhookSecret } from './signature.js'
import {
  bodyFor,
  eventTypesOf,
  parseEventTypes,
  parsePayloadFormat,
  storedEventTypes,
  subscribes,
  type PayloadFormat,
  WEBHOOK_EVENT_TYPES,
} from './event-types.js'

/** An account has at most this many endpoints (each one a fan-out of every update it subscribes to). */
export const MAX_ENDPOINTS_PER_ACCOUNT = 10

/** The account's endpoints in their order: oldest first, the id breaking ties. The first is the default. */
export const ENDPOINT_ORDER = [{ createdAt: 'asc' as const }, { id: 'asc' as const }]

/**
 * Who makes a change and from where (and, for pinned-time tests, when): with it, each change below
 * writes its audit entry in its own transaction, so a refused or failed change records nothing and
 * a committed one always has its entry. Without it (tests, the worker), nothing is recorded.
 */
export type ChangeAudit = AuditSource & { at?: Date }

/** The entry of a change, for recordAudit: the source's actor, address and time, then what was done. */
const entry = (audit: ChangeAudit, accountId: string, action: string, target: string | null, details: Record<string, unknown> | null) => ({
  actor: audit.actor,
  address: audit.address,
  ...(audit.at ? { at: audit.at } : {}),
  accountId,
  action,
  target,
  details,
})

/** A health record as new: enabled, no failures, not paused. */
const CLEAN_HEALTH = { disabledAt: null, disabledReason: null, failures: 0, failingSince: null, pausedUntil: null }

export interface EndpointInput {
  url: string
  /** Event type names (src/webhooks/event-types.ts); every type when absent. */
  eventTypes?: readonly string[] | null
  /** `legacy` (the default) or `standard`. */
  payloadFormat?: string | null
}

/**
 * Takes the account's row lock for the rest of the transaction (PostgreSQL; SQLite serialises
 * writers anyway), so two requests cannot both pass the cap, or both create the default endpoint.
 */
async function lockAccount(tx: Tx, accountId: string) {
  await tx.$executeRaw`UPDATE "Account" SET "id" = "id" WHERE "id" = ${accountId}`
}

/** The account's default endpoint (its oldest), or null. */
export function defaultEndpoint(db: Pick<Tx, 'webhookEndpoint'>, accountId: string) {
  return db.webhookEndpoint.findFirst({ where: { accountId }, orderBy: ENDPOINT_ORDER })
}

/** One of the account's endpoints by id; another account's answers like a missing one. */
async function ownEndpoint(db: Pick<Tx, 'webhookEndpoint'>, accountId: string, endpointId: string) {
  const endpoint = isStorableText(endpointId) ? await db.webhookEndpoint.findFirst({ where: { id: endpointId, accountId } }) : null
  if (!endpoint) throw notFound('Webhook endpoint')
  return endpoint
}

/** The endpoint named, or the account's default without a name. NOT_FOUND when there is none. */
async function endpointOrDefault(db: Pick<Tx, 'webhookEndpoint'>, accountId: string, endpointId?: string | null) {
  if (endpointId !== undefined && endpointId !== null) return ownEndpoint(db, accountId, endpointId)
  const endpoint = await defaultEndpoint(db, accountId)
  if (!endpoint) throw notFound('Webhook')
  return endpoint
}

/** Checks every part of an endpoint's settings before anything is written. */
async function checkedInput({ env }: Pick<Deps, 'env'>, input: Partial<EndpointInput>) {
  const eventTypes = input.eventTypes ? parseEventTypes(input.eventTypes) : undefined
  const payloadFormat: PayloadFormat | undefined = input.payloadFormat ? parsePayloadFormat(input.payloadFormat) : undefined
  const url =
    input.url !== undefined ? (await assertWebhookUrl(input.url.trim(), env.WEBHOOK_ALLOW_PRIVATE_NETWORKS)).toString() : undefined
  return { url, eventTypes: eventTypes && storedEventTypes(eventTypes), payloadFormat }
}

/**
 * Adds an endpoint with a secret of its own. Refused (VALIDATION_FAILED, nothing written) past
 * MAX_ENDPOINTS_PER_ACCOUNT, for a URL the SSRF guard refuses, or an unknown event type or format.
 */
export async function createEndpoint(deps: Pick<Deps, 'db' | 'env'>, accountId: string, input: EndpointInput, audit?: ChangeAudit) {
  const checked = await checkedInput(deps, input)
  return deps.db.$transaction(async (tx) => {
    await lockAccount(tx, accountId)
    if ((await tx.webhookEndpoint.count({ where: { accountId } })) >= MAX_ENDPOINTS_PER_ACCOUNT)
      throw validationError([{ field: 'url', message: `an account has at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints` }])
    const endpoint = await tx.webhookEndpoint.create({
      data: {
        accountId,
        url: checked.url!,
        secret: newWebhookSecret(),
        // Without a choice, every event type, as the one endpoint of old received.
        eventTypes: checked.eventTypes ?? storedEventTypes(WEBHOOK_EVENT_TYPES),
        payloadFormat: checked.payloadFormat ?? 'legacy',
      },
    })
    if (audit)
      await recordAudit(
        tx,
        entry(audit, accountId, 'webhook.endpoint.create', endpoint.url, {
          endpointId: endpoint.id,
          eventTypes: eventTypesOf(endpoint.eventTypes),
          payloadFormat: endpoint.payloadFormat,
        }),
      )
    return endpoint
  })
}

/**
 * Changes what is given of an endpoint's URL, event types and body format. A new URL enables a
 * disabled or paused endpoint again with a clean record (as setWebhook does); the secret is kept.
 */
export async function updateEndpoint(
  deps: Pick<Deps, 'db' | 'env'>,
  accountId: string,
  endpointId: string,
  input: Partial<EndpointInput>,
  audit?: ChangeAudit,
) {
  // Another account's endpoint is NOT_FOUND before its input is judged, as it always was.
  await ownEndpoint(deps.db, accountId, endpointId)
  const checked = await checkedInput(deps, input)
  return deps.db.$transaction(async (tx) => {
    const endpoint = await ownEndpoint(tx, accountId, endpointId)
    const updated = await tx.webhookEndpoint.update({
      where: { id: endpoint.id },
      data: {
        ...(checked.url !== undefined ? { url: checked.url, ...CLEAN_HEALTH } : {}),
        ...(checked.eventTypes !== undefined ? { eventTypes: checked.eventTypes } : {}),
        ...(checked.payloadFormat !== undefined ? { payloadFormat: checked.payloadFormat } : {}),
      },
    })
    if (audit)
      await recordAudit(
        tx,
        entry(audit, accountId, 'webhook.endpoint.update', updated.url, {
          endpointId: updated.id,
          url: checked.url ?? null,
          eventTypes: checked.eventTypes === undefined ? null : eventTypesOf(checked.eventTypes),
          payloadFormat: checked.payloadFormat ?? null,
        }),
      )
    return updated
  })
}

/** Removes an endpoint; its pending deliveries fail at their next attempt and stay in the log. */
export async function deleteEndpoint({ db }: Pick<Deps, 'db'>, accountId: string, endpointId: string, audit?: ChangeAudit) {
  return db.$transaction(async (tx) => {
    const endpoint = await ownEndpoint(tx, accountId, endpointId)
    const { count } = await tx.webhookEndpoint.deleteMany({ where: { id: endpoint.id, accountId } })
    if (!count) throw notFound('Webhook endpoint')
    if (audit) await recordAudit(tx, entry(audit, accountId, 'webhook.endpoint.delete', endpoint.url, { endpointId: endpoint.id }))
    return endpoint
  })
}

/**
 * Registers (or replaces) the URL of the account's default endpoint, its oldest, creating it
 * (every event type, the legacy body) when the account has none. An existing secret is kept so
 * receivers keep verifying; a disabled or paused endpoint is enabled again with a clean record.
 */
export async function setWebhook(deps: Pick<Deps, 'db' | 'env'>, accountId: string, rawUrl: string, audit?: ChangeAudit) {
  const { url } = await checkedInput(deps, { url: rawUrl })
  return deps.db.$transaction(async (tx) => {
    await lockAccount(tx, accountId)
    const existing = await defaultEndpoint(tx, accountId)
    const endpoint = existing
      ? await tx.webhookEndpoint.update({ where: { id: existing.id }, data: { url: url!, ...CLEAN_HEALTH } })
      : await tx.webhookEndpoint.create({
          data: {
            accountId,
            url: url!,
            secret: newWebhookSecret(),
            eventTypes: storedEventTypes(WEBHOOK_EVENT_TYPES),
            payloadFormat: 'legacy',
          },
        })
    if (audit) await recordAudit(tx, entry(audit, accountId, 'webhook.set', endpoint.url, { endpointId: endpoint.id }))
    return endpoint
  })
}

/** How long requests carry a signature from the secret before a rotation too, by default. */
export const DEFAULT_OVERLAP_HOURS = 24
/** The longest overlap a rotation may ask for: a week. */
export const MAX_OVERLAP_HOURS = 168

/**
 * Replaces the signing secret of an endpoint (the default one without `endpointId`). For
 * `overlapHours` (0 to 168) each request is signed with the new and the old secret (two
 * signatures in webhook-signature, as Standard Webhooks allows), so a receiver can switch to the
 * new secret at its own pace.
 */
export async function rotateWebhookSecret(
  { db, clock }: Pick<Deps, 'db' | 'clock'>,
  accountId: string,
  overlapHours: number = DEFAULT_OVERLAP_HOURS,
  endpointId?: string | null,
  audit?: ChangeAudit,
) {
  if (!Number.isInteger(overlapHours) || overlapHours < 0 || overlapHours > MAX_OVERLAP_HOURS) {
    throw validationError([{ field: 'overlapHours', message: `A whole number of hours from 0 to ${MAX_OVERLAP_HOURS}` }])
  }
  const until = new Date(clock.now().getTime() + overlapHours * 3_600_000)
  return db.$transaction(async (tx) => {
    const existing = await endpointOrDefault(tx, accountId, endpointId)
    const endpoint = await tx.webhookEndpoint.update({
      where: { id: existing.id },
      data: {
        secret: newWebhookSecret(),
        previousSecret: overlapHours > 0 ? existing.secret : null,
        previousSecretUntil: overlapHours > 0 ? until : null,
      },
    })
    if (audit)
      await recordAudit(tx, entry(audit, accountId, 'webhook.rotate_secret', endpoint.url, { endpointId: endpoint.id, overlapHours }))
    return endpoint
  })
}

/**
 * Queues a test event to an endpoint (the default one without `endpointId`): a delivery like any
 * other (signed, retried, logged, replayable) whose legacy body is `{"test":true,...}` (in the
 * Standard Webhooks envelope, type `test`, for an endpoint that asked for it). NOT_FOUND without
 * an endpoint; VALIDATION_FAILED for an endpoint not subscribed to `test`.
 */
export async function sendTestEvent({ db, clock }: Pick<Deps, 'db' | 'clock'>, accountId: string, endpointId?: string | null) {
  const endpoint = await endpointOrDefault(db, accountId, endpointId)
  if (!subscribes(endpoint.eventTypes, 'test'))
    throw validationError([{ field: 'endpointId', message: 'this endpoint is not subscribed to test events' }])
  const now = clock.now()
  const id = newWebhookId()
  const data = {
    test: true,
    id,
    message: 'A test event from the account console or the sendTestWebhook mutation',
    sentAt: now.toISOString(),
  }
  return db.webhookDelivery.create({
    data: {
      id,
      accountId,
      endpointId: endpoint.id,
      eventType: 'test',
      messageId: null,
      body: bodyFor(endpoint.payloadFormat, 'test', now, data),
      nextAttemptAt: now,
      createdAt: now,
    },
  })
}

/**
 * Removes the account's default endpoint (the next oldest, if any, becomes the default); its
 * pending deliveries fail at their next attempt and stay pollable.
 */
export async function removeWebhook({ db }: Pick<Deps, 'db'>, accountId: string, audit?: ChangeAudit) {
  await db.$transaction(async (tx) => {
    const existing = await defaultEndpoint(tx, accountId)
    if (!existing) throw notFound('Webhook')
    const { count } = await tx.webhookEndpoint.deleteMany({ where: { id: existing.id } })
    if (!count) throw notFound('Webhook')
    if (audit) await recordAudit(tx, entry(audit, accountId, 'webhook.remove', existing.url, { endpointId: existing.id }))
  })
}

/** What sending a delivery again resets: a new round of the retry schedule, from now. */
const again = (now: Date) => ({
  state: 'pending',
  attempts: 0,
  nextAttemptAt: now,
  leaseUntil: null,
  leaseOwner: null,
  finishedAt: null,
  lastError: null,
})

/**
 * Sends a delivery again from the start of the schedule (same webhook-id, same body). Its attempts
 * keep their numbers: the next one follows the last (attemptsTotal), it is not "#1" again.
 */
export async function redeliver({ db, clock }: Pick<Deps, 'db' | 'clock'>, accountId: string, deliveryId: string) {
  if (!isStorableText(deliveryId)) throw notFound('Webhook delivery')
  const { count } = await db.webhookDelivery.updateMany({ where: { id: deliveryId, accountId }, data: again(clock.now()) })
  if (!count) throw notFound('Webhook delivery')
  return db.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } })
}

/** At most this many deliveries go back into the outbox per recovery (the answer says whether more are left). */
export const MAX_RECOVERED = 10_000

/**
 * "Recover every failed delivery since": puts the account's deliveries that failed at or after
 * `since` (their `finishedAt`) back into the outbox, each from the start of the retry schedule with
 * its own webhook-id and body, oldest first. They are then claimed like any other delivery, within
 * the per-endpoint limits and round-robin of the dispatcher. Only deliveries whose endpoint still
 * exists and is enabled go back (`endpointId` narrows it to one endpoint): the others would fail
 * again at once. At most MAX_RECOVERED per call; `more` tells whether another call is needed.
 */
export async function recoverFailedDeliveries(
  { db, clock }: Pick<Deps, 'db' | 'clock'>,
  accountId: string,
  since: Date,
  endpointId?: string | null,
  audit?: ChangeAudit,
) {
  if (Number.isNaN(since.getTime())) throw validationError([{ field: 'since', message: 'a date-time' }])
  const now = clock.now()
  if (since > now) throw validationError([{ field: 'since', message: 'not in the future' }])
  const endpoint = endpointId !== undefined && endpointId !== null ? await ownEndpoint(db, accountId, endpointId) : null
  if (endpoint?.disabledAt)
    throw new AppError('VALIDATION_FAILED', 'the endpoint is disabled: enable it (set its URL) first', [
      { field: 'endpointId', message: 'the endpoint is disabled' },
    ])
  const where = {
    accountId,
    state: 'failed',
    finishedAt: { gte: since },
    endpoint: { disabledAt: null, ...(endpoint ? { id: endpoint.id } : {}) },
  }
  return db.$transaction(async (tx) => {
    const picked = await tx.webhookDelivery.findMany({
      where,
      select: { id: true },
      orderBy: [{ finishedAt: 'asc' }, { id: 'asc' }],
      take: MAX_RECOVERED + 1,
    })
    const ids = picked.slice(0, MAX_RECOVERED).map((d) => d.id)
    // In chunks: SQLite binds at most 32,766 values a statement.
    for (let i = 0; i < ids.length; i += 1000)
      await tx.webhookDelivery.updateMany({ where: { id: { in: ids.slice(i, i + 1000) }, state: 'failed' }, data: again(now) })
    if (audit)
      await recordAudit(
        tx,
        entry(audit, accountId, 'webhook.deliveries.recover', null, {
          since: since.toISOString(),
          endpointId: endpoint?.id ?? null,
          recovered: ids.length,
        }),
      )
    return { ids, more: picked.length > MAX_RECOVERED }
  })
}
