import type { Logger } from 'pino'
import { AppError } from '../core/errors.js'

/**
 * The most events one subscriber may have waiting (produced, not yet taken by its stream). A
 * subscriber that stops reading fills its socket, then this; it is then dropped. graphql-yoga's
 * Repeater would throw past 1,024 pending pushes, and that throw used to abort the fan-out to
 * every other subscriber.
 */
export const MAX_PENDING_EVENTS = 256

type Push<T> = (value: T) => Promise<unknown>
type Stop = (error?: unknown) => unknown

/**
 * A subscriber's outbox. `send` takes an event, or a function that produces it (reading the
 * database; undefined sends nothing), and sends them in order; it never throws, so one subscriber
 * cannot stop a fan-out loop. A subscriber that falls MAX_PENDING_EVENTS behind is dropped: its
 * stream ends with a RATE_LIMITED error (after the events it already has), and that is logged
 * once, at warn level.
 */
export function subscriberOutbox<T>(push: Push<T>, stop: Stop, logger: Logger, subscription: string) {
  let pending = 0
  let dropped = false
  let chain: Promise<void> = Promise.resolve()
  const release = () => {
    pending--
  }
  function send(event: T | (() => Promise<T | undefined>)) {
    if (dropped) return
    if (pending >= MAX_PENDING_EVENTS) {
      dropped = true
      logger.warn({ subscription, pending }, 'slow subscriber dropped')
      stop(
        new AppError(
          'RATE_LIMITED',
          `This subscriber fell ${pending} events behind and was dropped: read the stream as it arrives, then subscribe again`,
        ),
      )
      return
    }
    pending++
    chain = chain.then(async () => {
      try {
        const value = typeof event === 'function' ? await (event as () => Promise<T | undefined>)() : event
        if (value === undefined || dropped) return release()
        // Not awaited: push order is delivery order, and the next event must not wait for this reader.
        push(value).then(release, release)
      } catch (error) {
        release()
        logger.warn({ err: error, subscription }, 'live event not sent')
      }
    })
  }
  /** Ends the stream once the events sent so far are pushed. */
  send.end = () => {
    chain = chain.then(() => void stop())
  }
  return send
}
