import type { ClientAddress } from './client-address.js'
import type { Credentials } from './credentials.js'

/**
 * One request on its way through the door. One object per request, filled in by the stages
 * (the client-address stage sets `address`, the credentials stage `credentials`).
 */
export interface Door {
  readonly request: Request
  readonly url: URL
  /** What @whatwg-node/server hands app.fetch next to the request (on node:http `{ req, res }`). */
  readonly server: unknown
  requestId: string
  address: ClientAddress
  credentials: Credentials
}

export type Next = (door: Door) => Promise<Response>

/** A stage: do its part, then hand the request on (or answer without doing so). */
export type Stage = (door: Door, next: Next) => Promise<Response>

/**
 * The stages as one handler, composed once at start-up: a request allocates no closures on its
 * way through. The first stage is the outermost.
 */
export function pipeline(stages: readonly Stage[], end: Next): Next {
  return stages.reduceRight<Next>((next, stage) => (door) => stage(door, next), end)
}

export const NO_ADDRESS: ClientAddress = { address: null, key: null }
export const NO_CREDENTIALS: Credentials = { token: null, session: null, sessionToken: null, verified: undefined, account: undefined }

export function withHeaders(response: Response, headers: Record<string, string> | null): Response {
  if (headers) for (const [name, value] of Object.entries(headers)) response.headers.set(name, value)
  return response
}
