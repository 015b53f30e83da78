import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Db } from '../db/client.js'
import type { Clock } from '../clock.js'
import { AppError, notFound } from '../errors.js'

// Key shape: gk_<12 hex: public prefix>_<43 base64url: 32 random bytes>. Only the SHA-256 is stored.
const KEY_PATTERN = /^(gk_[0-9a-f]{12})_([A-Za-z0-9_-]{43})$/

const sha256 = (value: string) => createHash('sha256').update(value).digest()

export interface IssuedKey {
  id: string
  prefix: string
  /** The whole key, shown once. */
  apiKey: string
}

export async function createApiKey({ db }: { db: Db }, accountId: string): Promise<IssuedKey> {
  const account = await db.account.findUnique({ where: { id: accountId }, select: { id: true } })
  if (!account) throw notFound('Account')
  const prefix = `gk_${randomBytes(6).toString('hex')}`
  const apiKey = `${prefix}_${randomBytes(32).toString('base64url')}`
  const row = await db.apiKey.create({ data: { accountId, prefix, hash: sha256(apiKey).toString('hex') } })
  return { id: row.id, prefix, apiKey }
}

/** Revokes by key id or by its visible prefix. */
export async function revokeApiKey({ db, clock }: { db: Db; clock: Clock }, keyOrPrefix: string) {
  const prefix = keyOrPrefix.match(KEY_PATTERN)?.[1] ?? keyOrPrefix
  const key = await db.apiKey.findFirst({ where: { OR: [{ prefix }, { id: keyOrPrefix }] } })
  if (!key) throw notFound('API key')
  return db.apiKey.update({ where: { id: key.id }, data: { revokedAt: key.revokedAt ?? clock.now() } })
}

export interface AuthenticatedAccount {
  id: string
  name: string
  timezone: string
  keyId: string
}

/** Resolves a Bearer key to its account. Every failure is the same UNAUTHENTICATED error. */
export async function authenticateApiKey(db: Db, apiKey: string): Promise<AuthenticatedAccount> {
  const match = apiKey.match(KEY_PATTERN)
  const denied = new AppError('UNAUTHENTICATED', 'A valid API key is required')
  if (!match) throw denied
  const row = await db.apiKey.findUnique({
    where: { prefix: match[1] },
    select: { id: true, hash: true, revokedAt: true, account: { select: { id: true, name: true, timezone: true } } },
  })
  const given = sha256(apiKey)
  const stored = row ? Buffer.from(row.hash, 'hex') : randomBytes(32)
  if (!timingSafeEqual(given, stored) || !row || row.revokedAt) throw denied
  return { ...row.account, keyId: row.id }
}

/** Reads `Authorization: Bearer <key>`; null when the header is absent. */
export function bearerToken(header: string | null): string | null {
  if (header === null) return null
  const match = header.match(/^Bearer\s+(\S+)\s*$/i)
  return match ? match[1]! : ''
}
