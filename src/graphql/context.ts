import { createHash, timingSafeEqual } from 'node:crypto'
import type { Deps } from '../deps.js'
import { bearerToken, unauthenticated, type AuthenticatedAccount } from '../auth/api-keys.js'
import { AppError } from '../core/errors.js'

export interface Context {
  deps: Deps
  requestId: string
  /**
   * The request's Idempotency-Key header as sent (null when absent). The idempotency layer checks
   * its form and replays answers; domain writes that must survive a crash (sendSms) also keep it.
   */
  idempotencyKey: string | null
  /** The account of the request's Bearer key; throws UNAUTHENTICATED. Looked up once per request. */
  account(): Promise<AuthenticatedAccount>
  /** Throws FORBIDDEN unless the Bearer token is the carrier connector's (CARRIER_CONNECTOR_TOKEN). */
  assertConnector(): void
  /** The account console session making the request (its cookie, with its CSRF token); null for API keys. */
  consoleSessionId: string | null
  /** The client's address as the door saw it (the peer, or behind TRUST_PROXY the last forwarded hop); null when unknown. */
  clientAddress: string | null
}

/** `verified`: the key's account, already looked up at the door (null: not a key). */
export function createContext(
  deps: Deps,
  request: Request,
  requestId: string,
  verified?: Promise<AuthenticatedAccount | null>,
  consoleSessionId: string | null = null,
  clientAddress: string | null = null,
): Context {
  let pending: Promise<AuthenticatedAccount> | undefined
  return {
    deps,
    requestId,
    consoleSessionId,
    clientAddress,
    idempotencyKey: request.headers.get('idempotency-key'),
    account() {
      pending ??= (async () => {
        if (verified) {
          const account = await verified
          if (!account) throw unauthenticated()
          return account
        }
        const token = bearerToken(request.headers.get('authorization'))
        if (!token) throw new AppError('UNAUTHENTICATED', 'A valid API key is required')
        return deps.apiKeyCache.authenticate(token)
      })()
      return pending
    },
    assertConnector() {
      const expected = deps.env.CARRIER_CONNECTOR_TOKEN
      const token = bearerToken(request.headers.get('authorization'))
      if (!token) throw new AppError('UNAUTHENTICATED', 'The carrier connector token is required')
      const digest = (value: string) => createHash('sha256').update(value).digest()
      if (expected === undefined || !timingSafeEqual(digest(token), digest(expected))) {
        throw new AppError('FORBIDDEN', 'Only a carrier connector (CARRIER_CONNECTOR_TOKEN) may report carrier statuses')
      }
    },
  }
}
