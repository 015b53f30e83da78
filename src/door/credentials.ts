import type { Deps } from '../deps.js'
import { AppError } from '../core/errors.js'
import { apiKeyPrefix, type AuthenticatedAccount } from '../auth/api-keys.js'
import { consoleSessionOf, type ConsoleSession } from '../console/sessions.js'

/** Who is calling, as the credentials stage found it; the budget stage and the context take it from here. */
export interface Credentials {
  /** The Bearer token as sent (null: none). */
  token: string | null
  /** The console session of a cookie that passed the session gate. */
  session: ConsoleSession | null
  /** The session cookie's token (a WebSocket checks it again before each operation). */
  sessionToken: string | null
  /** The account the context will use: the key's or session's lookup, reused (undefined: not looked up here). */
  verified: Promise<AuthenticatedAccount | null> | undefined
  /** Its settled value: null for a token that is no live key, undefined when not looked up or on a database fault. */
  account: AuthenticatedAccount | null | undefined
}

/**
 * The credentials stage, shared by the HTTP and WebSocket doors. A key is looked up through the key
 * cache (revocations reach it at once on every instance), a console session in the database (its
 * sign-out and expiry likewise). A database fault while checking a session rejects (the door
 * answers 503); while checking a key it leaves `account` undefined and `verified` rejecting, so
 * the request is budgeted like a key and its context answers the 503.
 */
export function createCredentialsStage(deps: Pick<Deps, 'db' | 'clock' | 'apiKeyCache' | 'env'>) {
  /** The account of `token` when it is a live API key, else null; malformed tokens need no lookup. */
  function verifyKey(token: string): Promise<AuthenticatedAccount | null> {
    if (!apiKeyPrefix(token)) return Promise.resolve(null)
    return deps.apiKeyCache.authenticate(token).catch((error) => {
      if (error instanceof AppError && error.code === 'UNAUTHENTICATED') return null
      throw error
    })
  }

  /**
   * `lookUpKey` false: the key is left to the context (in-process callers without an address, which
   * no budget counts; the carrier connector's token, which is no key).
   */
  async function credentials(token: string | null, sessionToken: string | null, lookUpKey: boolean): Promise<Credentials> {
    if (!token && sessionToken) {
      const session = await consoleSessionOf(deps, sessionToken)
      if (session) return { token, session, sessionToken, verified: Promise.resolve(session.account), account: session.account }
    }
    const verified = token && lookUpKey && token !== deps.env.CARRIER_CONNECTOR_TOKEN ? verifyKey(token) : undefined
    const account = verified && (await verified.catch(() => undefined))
    return { token, session: null, sessionToken: null, verified, account }
  }

  return { verifyKey, credentials }
}
