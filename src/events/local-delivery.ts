import type { Logger } from 'pino'
import type { PubSubEventTarget } from 'graphql-yoga'
import type { EventListener } from './event-bus.js'

/**
 * The subscribers of one process: a plain EventTarget of CustomEvents (what Yoga's createPubSub
 * listens to), plus the adapter whose dispatchEvent sends through the bus instead.
 */
export function createLocalDelivery(logger: Logger) {
  const target = new EventTarget()
  return {
    deliver(topic: string, payload: unknown) {
      target.dispatchEvent(new CustomEvent(topic, { detail: payload }))
    },
    subscribe(topic: string, listener: EventListener) {
      const handler = (event: Event) => {
        // An EventTarget would turn a throwing listener into an uncaught exception: log it instead.
        try {
          listener((event as CustomEvent).detail)
        } catch (error) {
          logger.error({ err: error, topic }, 'event listener failed')
        }
      }
      target.addEventListener(topic, handler)
      return () => target.removeEventListener(topic, handler)
    },
    /** dispatchEvent publishes (fire and forget: Yoga's publish is synchronous); listening is local. */
    // any: as EventBus.eventTarget, every topic map createPubSub may declare.
    // oxlint-disable-next-line typescript/no-explicit-any
    eventTarget(publish: (topic: string, payload: unknown) => Promise<void>): PubSubEventTarget<any> {
      return {
        addEventListener: target.addEventListener.bind(target),
        removeEventListener: target.removeEventListener.bind(target),
        dispatchEvent(event: Event) {
          publish(event.type, (event as CustomEvent).detail).catch((error) =>
            logger.error({ err: error, topic: event.type }, 'event publish failed'),
          )
          return true
        },
        // oxlint-disable-next-line typescript/no-explicit-any
      } as PubSubEventTarget<any>
    },
  }
}
