import { clientKey } from '../http/rate-limit.js'

/** Who the client is, as far as its address goes: what budgets and subscription caps count by. */
export interface ClientAddress {
  /** The peer of the socket, or behind a trusted proxy the hop it saw last; null for in-process callers. */
  address: string | null
  /** The address's budget key (IPv4 per address, IPv6 per /64: clientKey); null without an address. */
  key: string | null
}

const NONE: ClientAddress = { address: null, key: null }

/**
 * The client-address stage, shared by both doors: an HTTP request (X-Forwarded-For and the
 * socket's peer) and a WebSocket upgrade (the same headers on the IncomingMessage).
 */
export function clientAddressOf(trustProxy: boolean, forwardedFor: string | null | undefined, peer: string | undefined): ClientAddress {
  let address = peer
  if (trustProxy) {
    const last = forwardedFor?.split(',').at(-1)?.trim()
    if (last) address = last
  }
  if (!address) return NONE
  // An address that does not parse (never from a socket) is its own key, so it is still counted.
  return { address, key: clientKey(address) ?? address }
}
