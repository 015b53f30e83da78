import { clientAddressOf } from '../client-address.js'
import type { Stage } from '../pipeline.js'

/** Who the client is by address: the socket's peer, or behind a trusted proxy (TRUST_PROXY) the last X-Forwarded-For hop. */
export function clientAddressStage(trustProxy: boolean): Stage {
  return function clientAddress(door, next) {
    door.address = clientAddressOf(
      trustProxy,
      door.request.headers.get('x-forwarded-for'),
      (door.server as { req?: { socket?: { remoteAddress?: string } } } | undefined)?.req?.socket?.remoteAddress,
    )
    return next(door)
  }
}
