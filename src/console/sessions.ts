// The account console's sign-in: single-use links that open server-side sessions (docs/console.md).
// Links and sessions are random 256-bit tokens; the database keeps their SHA-256 only, so a copy
// of it signs no one in.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Deps } from '../deps.js'
import { AppError, notFound } from '../core/errors.js'
import { sha256, type AuditSource, type AuthenticatedAccount } from '../auth/api-keys.js'
import { CONSOLE_SESSIONS_ENDED, type ConsoleSessionsEnded } from '../auth/credential-watch.js'
import { ALL_SCOPES } from '../auth/scopes.js'
import { recordAudit } from '../audit/record-audit.js'

/** A sign-in link works once, within this time. */
export const LINK_TTL_MS = 15 * 60_000
/** A session ends this long after it began (sign in again with a new link). */
export const SESSION_TTL_MS = 12 * 60 * 60_000

/** The session cookie; `__Host-` (Secure, no Domain, Path=/) when the service is served over https. */
export const sessionCookieName = (publicBaseUrl: string) => (publicBaseUrl.startsWith('https:') ? '__Host-console' : 'console_session')

const TOKEN = /^[A-Za-z0-9_-]{43}$/
const newToken = () => randomBytes(32).toString('base64url')
const digest = (token: string) => sha256(token).toString('hex')

/** The CSRF token of a session: derived from the session's token, so nothing more is stored. */
export const csrfTokenOf = (sessionToken: string) => createHmac('sha256', sessionToken).update('console csrf').digest('base64url')

/** Issues a sign-in link for the account: `<PUBLIC_BASE_URL>/console/sign-in?token=<token>`. */
export async function createConsoleLink({ db, clock, env }: Pick<Deps, 'db' | 'clock' | 'env'>, accountId: string, audit?: AuditSource) {
  const account = await db.account.findUnique({ where: { id: accountId }, select: { id: true } })
  if (!account) throw notFound('Account')
  const token = newToken()
  const now = clock.now()
  const expiresAt = new Date(now.getTime() + LINK_TTL_MS)
  await db.$transaction(async (tx) => {
    const link = await tx.consoleLink.create({ data: { accountId, tokenHash: digest(token), expiresAt } })
    if (audit) await recordAudit(tx, { accountId, ...audit, action: 'console.link_create', target: link.id, at: now })
  })
  // Opening the link only shows a "Sign in" button (a link preview or a mail scanner that fetches
  // it spends nothing); the request log records paths without their query.
  return { url: `${env.PUBLIC_BASE_URL}/console/sign-in?token=${token}`, expiresAt }
}

/** Why a link did not sign anyone in; the sign-in page shows it with status 400 or 410. */
export class SignInRefused extends AppError {
  constructor(
    message: string,
    readonly status: 400 | 410,
  ) {
    super('UNAUTHENTICATED', message)
  }
}

/** What opening a link shows before it is spent: the account it signs in to, or why it cannot. */
export async function checkConsoleLink({ db, clock }: Pick<Deps, 'db' | 'clock'>, token: string) {
  if (!TOKEN.test(token)) throw new SignInRefused(NOT_VALID, 400)
  const link = await db.consoleLink.findUnique({
    where: { tokenHash: digest(token) },
    select: { usedAt: true, expiresAt: true, account: { select: { name: true } } },
  })
  if (!link) throw new SignInRefused(NOT_VALID, 400)
  if (link.usedAt) throw new SignInRefused(USED, 410)
  if (link.expiresAt <= clock.now()) throw new SignInRefused(EXPIRED, 410)
  return { accountName: link.account.name }
}

const NOT_VALID = 'This sign-in link is not valid. Ask for a new one.'
const USED = 'This sign-in link was used already. Ask for a new one.'
const EXPIRED = 'This sign-in link has expired. Ask for a new one.'

/**
 * Spends a link and opens a session: one conditional update marks the link used, so of two
 * concurrent redemptions (two instances, a double click) exactly one opens a session.
 */
export async function redeemConsoleLink({ db, clock }: Pick<Deps, 'db' | 'clock'>, token: string, address: string | null = null) {
  if (!TOKEN.test(token)) throw new SignInRefused(NOT_VALID, 400)
  const now = clock.now()
  const tokenHash = digest(token)
  const { count } = await db.consoleLink.updateMany({ where: { tokenHash, usedAt: null, expiresAt: { gt: now } }, data: { usedAt: now } })
  if (count !== 1) {
    const link = await db.consoleLink.findUnique({ where: { tokenHash }, select: { usedAt: true } })
    if (!link) throw new SignInRefused(NOT_VALID, 400)
    throw new SignInRefused(link.usedAt ? USED : EXPIRED, 410)
  }
  const link = await db.consoleLink.findUniqueOrThrow({ where: { tokenHash }, select: { id: true, accountId: true } })
  const sessionToken = newToken()
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS)
  await db.$transaction(async (tx) => {
    const session = await tx.consoleSession.create({ data: { accountId: link.accountId, tokenHash: digest(sessionToken), expiresAt } })
    await recordAudit(tx, {
      accountId: link.accountId,
      actor: consoleActor(session.id),
      address,
      action: 'console.sign_in',
      target: link.id,
      at: now,
    })
  })
  return { token: sessionToken, expiresAt }
}

export interface ConsoleSession {
  id: string
  account: AuthenticatedAccount
  /** When it ends by itself: live connections opened with it end then too (src/auth/credential-watch.ts). */
  expiresAt: Date
}

/** The live session of a cookie's token, with its account; null when unknown, expired or signed out. */
export async function consoleSessionOf({ db, clock }: Pick<Deps, 'db' | 'clock'>, token: string): Promise<ConsoleSession | null> {
  if (!TOKEN.test(token)) return null
  const session = await db.consoleSession.findUnique({
    where: { tokenHash: digest(token) },
    select: { id: true, expiresAt: true, revokedAt: true, account: { select: { id: true, name: true, timezone: true } } },
  })
  if (!session || session.revokedAt || session.expiresAt <= clock.now()) return null
  // keyId is empty: a session is no API key (rate limits and logs key it by the session id).
  return {
    id: session.id,
    account: { ...session.account, keyId: '', keyPrefix: '', scopes: ALL_SCOPES, keyExpiresAt: null },
    expiresAt: session.expiresAt,
  }
}

/** How the audit log names a console session (src/audit/). */
export const consoleActor = (sessionId: string) => ({ kind: 'console_session' as const, id: sessionId, label: 'console session' })

/**
 * Signs out one session, or every session of the account (`sessionId` null). Returns how many ended.
 * Then every instance is told, so the sessions' open WebSockets and SSE streams end as well.
 */
export async function endConsoleSessions(
  { db, clock, events }: Pick<Deps, 'db' | 'clock' | 'events'>,
  accountId: string,
  sessionId: string | null,
  audit?: AuditSource,
) {
  const now = clock.now()
  const count = await db.$transaction(async (tx) => {
    const { count } = await tx.consoleSession.updateMany({
      where: { accountId, revokedAt: null, ...(sessionId ? { id: sessionId } : {}) },
      data: { revokedAt: now },
    })
    if (audit && count > 0)
      await recordAudit(tx, {
        accountId,
        ...audit,
        action: 'console.sign_out',
        target: sessionId,
        details: { everywhere: sessionId === null, sessionsEnded: count },
        at: now,
      })
    return count
  })
  if (count > 0) await events.publish(CONSOLE_SESSIONS_ENDED, { accountId, sessionId } satisfies ConsoleSessionsEnded)
  return count
}

/** Reads one cookie from a Cookie header. */
export function cookieValue(header: string | null, name: string): string | null {
  if (!header) return null
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return null
}

export interface CookieUse {
  /** The request's Cookie header. */
  cookieHeader: string | null
  /** The CSRF token it carries (X-CSRF-Token, or connection_init's csrfToken). */
  csrfToken: string | null
  origin: string | null
  /** The origins the request itself was addressed to (its URL's, or http(s)://Host). */
  requestOrigins: string[]
  /** Refuse a request without Origin (a WebSocket upgrade, which browsers always send it with). */
  originRequired: boolean
  /** Sec-Fetch-Site, when the browser sent it. */
  fetchSite?: string | null
}

/**
 * Where the console's cookie may count: its name, the service's own origins, and the one check
 * that both /graphql transports and the sign-in page make before a cookie means a session.
 */
export function sessionGate(publicBaseUrl: string) {
  const cookieName = sessionCookieName(publicBaseUrl)
  const ownOrigin = new URL(publicBaseUrl).origin
  /** The service's own origin: PUBLIC_BASE_URL's, or one the request was addressed to. */
  const isOwnOrigin = (origin: string | null, requestOrigins: string[]) =>
    origin !== null && (origin === ownOrigin || requestOrigins.includes(origin))
  return {
    cookieName,
    isOwnOrigin,
    /**
     * The session token of a request that may use the cookie: it carries the session's CSRF token
     * (which only the console page knows, and only a same-origin script can send), and its Origin
     * and Sec-Fetch-Site, when present, are the service's own. Anything else is not a session (the
     * request is then anonymous), so another origin can never act with a visitor's cookie.
     */
    tokenOf(use: CookieUse): string | null {
      const token = cookieValue(use.cookieHeader, cookieName)
      if (!token || !use.csrfToken) return null
      if (use.origin === null ? use.originRequired : !isOwnOrigin(use.origin, use.requestOrigins)) return null
      if (use.fetchSite != null && use.fetchSite !== 'same-origin') return null
      const expected = Buffer.from(csrfTokenOf(token))
      const given = Buffer.from(use.csrfToken)
      return given.length === expected.length && timingSafeEqual(given, expected) ? token : null
    },
  }
}
