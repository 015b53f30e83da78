import type { Deps } from '../deps.js'
import { notFound } from '../core/errors.js'
import { isStorableText } from '../messaging/input-rules.js'
import { assertWebhookUrl } from './ssrf-guard.js'
import { newWebhookSecret } from './signature.js'

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

export async function rotateWebhookSecret({ db }: Pick<Deps, 'db'>, accountId: string) {
  const existing = await db.webhookEndpoint.findUnique({ where: { accountId } })
  if (!existing) throw notFound('Webhook')
  return db.webhookEndpoint.update({ where: { accountId }, data: { secret: newWebhookSecret() } })
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
