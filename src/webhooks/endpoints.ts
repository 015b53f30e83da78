import type { Deps } from '../deps.js'
import { notFound, validationError } from '../core/errors.js'
import { isStorableText } from '../messaging/input-rules.js'
import { assertWebhookUrl } from './ssrf-guard.js'
import { newWebhookId, newWebhookSecret } from './signature.js'

/**
 * Registers (or replaces) the account's webhook URL. An existing secret is kept so receivers keep
 * verifying; a disabled or paused endpoint is enabled again with a clean record.
 */
export async function setWebhook({ db, env }: Pick<Deps, 'db' | 'env'>, accountId: string, rawUrl: string) {
  const url = await assertWebhookUrl(rawUrl.trim(), env.WEBHOOK_ALLOW_PRIVATE_NETWORKS)
  const existing = await db.webhookEndpoint.findUnique({ where: { accountId } })
  const secret = existing?.secret ?? newWebhookSecret()
  return db.webhookEndpoint.upsert({
    where: { accountId },
    create: { accountId, url: url.toString(), secret },
    update: { url: url.toString(), disabledAt: null, disabledReason: null, failures: 0, failingSince: null, pausedUntil: null },
  })
}

/** How long requests carry a signature from the secret before a rotation too, by default. */
export const DEFAULT_OVERLAP_HOURS = 24
/** The longest overlap a rotation may ask for: a week. */
export const MAX_OVERLAP_HOURS = 168

/**
 * Replaces the signing secret. For `overlapHours` (0 to 168) each request is signed with the new
 * and the old secret (two signatures in webhook-signature, as Standard Webhooks allows), so a
 * receiver can switch to the new secret at its own pace.
 */
export async function rotateWebhookSecret(
  { db, clock }: Pick<Deps, 'db' | 'clock'>,
  accountId: string,
  overlapHours: number = DEFAULT_OVERLAP_HOURS,
) {
  if (!Number.isInteger(overlapHours) || overlapHours < 0 || overlapHours > MAX_OVERLAP_HOURS) {
    throw validationError([{ field: 'overlapHours', message: `A whole number of hours from 0 to ${MAX_OVERLAP_HOURS}` }])
  }
  const existing = await db.webhookEndpoint.findUnique({ where: { accountId } })
  if (!existing) throw notFound('Webhook')
  const until = new Date(clock.now().getTime() + overlapHours * 3_600_000)
  return db.webhookEndpoint.update({
    where: { accountId },
    data: {
      secret: newWebhookSecret(),
      previousSecret: overlapHours > 0 ? existing.secret : null,
      previousSecretUntil: overlapHours > 0 ? until : null,
    },
  })
}

/**
 * Queues a test event: a delivery like any other (signed, retried, logged, replayable) whose body
 * is `{"test":true,...}` instead of a delivery report. NOT_FOUND without a webhook.
 */
export async function sendTestEvent({ db, clock }: Pick<Deps, 'db' | 'clock'>, accountId: string) {
  const endpoint = await db.webhookEndpoint.findUnique({ where: { accountId }, select: { accountId: true } })
  if (!endpoint) throw notFound('Webhook')
  const now = clock.now()
  const id = newWebhookId()
  return db.webhookDelivery.create({
    data: {
      id,
      accountId,
      messageId: null,
      body: JSON.stringify({
        test: true,
        id,
        message: 'A test event from the account console or the sendTestWebhook mutation',
        sentAt: now.toISOString(),
      }),
      nextAttemptAt: now,
      createdAt: now,
    },
  })
}

/** Removes the webhook; deliveries still pending fail at their next attempt and stay pollable. */
export async function removeWebhook({ db }: Pick<Deps, 'db'>, accountId: string) {
  const { count } = await db.webhookEndpoint.deleteMany({ where: { accountId } })
  if (!count) throw notFound('Webhook')
}

/** Sends a delivery again from the start of the schedule (same webhook-id, same body). */
export async function redeliver({ db, clock }: Pick<Deps, 'db' | 'clock'>, accountId: string, deliveryId: string) {
  if (!isStorableText(deliveryId)) throw notFound('Webhook delivery')
  const { count } = await db.webhookDelivery.updateMany({
    where: { id: deliveryId, accountId },
    data: {
      state: 'pending',
      attempts: 0,
      nextAttemptAt: clock.now(),
      leaseUntil: null,
      leaseOwner: null,
      finishedAt: null,
      lastError: null,
    },
  })
  if (!count) throw notFound('Webhook delivery')
  return db.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } })
}
