import { createHmac, randomBytes, randomUUID } from 'node:crypto'

/** A delivery's webhook-id: the same on every attempt. */
export const newWebhookId = () => `msg_${randomUUID().replace(/-/g, '')}`

/** A Standard Webhooks secret: whsec_ + base64 of 24 random bytes. */
export const newWebhookSecret = () => `whsec_${randomBytes(24).toString('base64')}`

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with the secret's decoded bytes. */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`
}
