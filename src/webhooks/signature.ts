import { createHmac, randomBytes } from 'node:crypto'
import { timeOrderedId } from '../db/time-ordered-id.js'

/**
 * A delivery's webhook-id: the same on every attempt. 32 hex digits of a time-ordered UUID, so
 * that a burst of deliveries lands together at the end of the table's key (docs/decisions.md).
 */
export const newWebhookId = () => `msg_${timeOrderedId().replace(/-/g, '')}`

/** A Standard Webhooks secret: whsec_ + base64 of 24 random bytes. */
export const newWebhookSecret = () => `whsec_${randomBytes(24).toString('base64')}`

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with the secret's decoded bytes. */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`
}
