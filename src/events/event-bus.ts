import type { PubSubEventTarget } from 'graphql-yoga'
import { Prisma } from '../generated/sqlite/client.js'

/** Raised locally (never sent) when events from other instances may have been missed: caches flush. */
export const RESYNC = 'resync'

export type EventListener = (payload: unknown) => void

/**
 * Topics with small JSON payloads, delivered to the subscribers of every instance on the same
 * database (PostgreSQL) or of this process (SQLite). Delivery is at most once: after a gap
 * (the listening connection dropped) subscribers get RESYNC instead of the missed events.
 */
export interface EventBus {
  readonly kind: 'postgresql' | 'in-process'
  /** Sends to every instance, this one included (synchronously, before the promise settles). */
  publish(topic: string, payload: unknown): Promise<void>
  /**
   * PostgreSQL: the same event as a `pg_notify(channel, text)` for the caller to run in a statement
   * of its own (the other instances hear it when that statement commits), and `deliverLocally` for
   * once it has: a writer on a hot path (the webhook dispatcher's record) saves the publish's own
   * round trip. Absent on the in-process bus: there `publish` costs no round trip.
   */
  notification?(topic: string, payload: unknown): { channel: string; text: string; deliverLocally(): void }
  /** Local listener; returns the unsubscribe function. RESYNC is a topic like any other. */
  subscribe(topic: string, listener: EventListener): () => void
  /** True while events published anywhere reach this process (in-process: always). */
  isLive(): boolean
  /** Resolves once the bus is live; starts listening if nothing subscribed yet. */
  ready(): Promise<void>
  /**
   * The bus as the EventTarget `createPubSub({ eventTarget })` of graphql-yoga expects:
   * dispatchEvent(CustomEvent) publishes `event.detail` under `event.type`, listeners receive
   * CustomEvents whose `detail` is the payload (as JSON round-tripped it).
   */
  // any: the target serves every topic map a createPubSub<...>() may declare.
  // oxlint-disable-next-line typescript/no-explicit-any
  readonly eventTarget: PubSubEventTarget<any>
  close(): Promise<void>
}

/**
 * A SELECT that sends these notifications (EventBus.notification), one row a notification, for a
 * statement of the caller's (alone, or after its data-modifying WITH queries).
 */
export function notifySelect(notifications: readonly { channel: string; text: string }[]): Prisma.Sql {
  return Prisma.sql`SELECT pg_notify(n."channel", n."text")::text AS "sent"
    FROM (VALUES ${Prisma.join(notifications.map((n) => Prisma.sql`(${n.channel}, ${n.text})`))}) AS n("channel", "text")`
}
