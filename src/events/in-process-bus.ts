import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { AppError } from '../core/errors.js'
import { RESYNC, type EventBus } from './event-bus.js'
import { decodeEnvelope, encodeEnvelope } from './event-envelope.js'
import { createLocalDelivery } from './local-delivery.js'

/**
 * The SQLite bus: subscribers of this process only. Another process on the same SQLite file (the
 * CLI, a second server) does not hear these events; SQLite is the single-instance target.
 */
export function createInProcessBus(logger: Logger): EventBus {
  const local = createLocalDelivery(logger)
  const origin = randomUUID()
  let closed = false
  const publish = async (topic: string, payload: unknown) => {
    if (topic === RESYNC) throw new AppError('VALIDATION_FAILED', `"${RESYNC}" is raised by the bus itself`)
    if (closed) throw new Error('event bus closed')
    // Round-trip through JSON so subscribers see what they would see from another instance.
    const envelope = decodeEnvelope(encodeEnvelope({ origin, topic, payload }))!
    local.deliver(topic, envelope.payload)
  }
  return {
    kind: 'in-process',
    publish,
    subscribe: local.subscribe,
    isLive: () => !closed,
    ready: async () => undefined,
    eventTarget: local.eventTarget(publish),
    async close() {
      closed = true
    },
  }
}
