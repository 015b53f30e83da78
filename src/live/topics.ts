import type { Deps } from '../deps.js'

/**
 * Topics of the event bus that feed the live subscriptions (src/graphql/types/live.ts). Payloads carry
 * ids only (the bus limits an event to about 8 kB); subscribers read the rest from the database,
 * scoped to their account.
 */
export const TOPIC = {
  /** A message's status changed (committed). */
  smsStatus: 'sms.status',
  /** Something that decides a channel's now playing answer changed (import, management mutation). */
  channelChanged: 'channel.changed',
  /** Contacts joined or left a group (SMS codes, mutations), or the group was deleted. */
  groupMembership: 'group.membership',
  /** Webhook deliveries were attempted, queued (a test event) or queued again (a replay). */
  webhookDelivery: 'webhook.delivery',
} as const

/** At most this many delivery ids travel in one webhook delivery event (more are split). */
export const MAX_EVENT_DELIVERY_IDS = 100

export interface WebhookDeliveryEvent {
  accountId: string
  deliveryIds: string[]
}

export interface StatusEvent {
  accountId: string
  messageId: string
  status: string
}

export interface ChannelChangedEvent {
  channelId: string
}

/** At most this many contact ids travel in one membership event; `count` tells the full number. */
export const MAX_EVENT_CONTACT_IDS = 100

export interface MembershipEvent {
  accountId: string
  groupId: string
  kind: 'join' | 'leave' | 'deleted'
  via: 'sms' | 'api'
  contactIds: string[]
  count: number
  at: string
}

/**
 * Publishes without failing the caller: the change is committed already, and the bus delivers at
 * most once anyway (a lost event costs a subscriber one update, never a wrong answer).
 */
export async function publishQuietly(deps: Partial<Pick<Deps, 'events' | 'logger'>>, topic: string, payload: unknown): Promise<void> {
  if (!deps.events) return
  try {
    await deps.events.publish(topic, payload)
  } catch (error) {
    deps.logger?.warn({ err: error, topic }, 'live event not published')
  }
}

/**
 * For work nested in an outer transaction (an inbound SMS's autoresponse runs sendSms on it):
 * the inner "commit" is not the real one, so its events wait here until the outer commits.
 */
export function deferredEvents(deps: Partial<Pick<Deps, 'events' | 'logger'>>) {
  const queued: [string, unknown][] = []
  const events = { publish: async (topic: string, payload: unknown) => void queued.push([topic, payload]) } as unknown as Deps['events']
  return {
    events,
    async flush() {
      for (const [topic, payload] of queued.splice(0)) await publishQuietly(deps, topic, payload)
    },
  }
}
