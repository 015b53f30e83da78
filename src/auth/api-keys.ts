import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { Prisma } from '../generated/sqlite/client.js'
import type { Db, DirectRead } from '../db/client.js'
import type { DatabaseKind } from '../db/connection-url.js'
import { readDirect } from '../db/read-direct.js'
import type { Clock } from '../core/clock.js'
import { AppError, notFound, validationError } from '../core/errors.js'
import { isStorableText } from '../messaging/input-rules.js'
import type { EventBus } from '../events/event-bus.js'
import { API_KEY_REVOKED, type ApiKeyRevoked } from './api-key-revoked.js'

// Key shape: gk_<12 hex: public prefix>_<43 base64url: 32 random bytes>. Only the SHA-256 is stored.
const KEY_PATTERN = /^(gk_[0-9a-f]{12})_([A-Za-z0-9_-]{43})$/

export const sha256 = (value: string) => createHash('sha256').update(value).digest()

export interface IssuedKey {
  id: string
  prefix: string
  /** The whole key, shown once. */
  apiKey: string
}

/** The longest label a key may carry. */
export const MAX_KEY_LABEL = 100

/** A key's label, trimmed; VALIDATION_FAILED (field `label`) when empty, too long or not storable text. */
export function keyLabel(raw: string): string {
  const label = raw.trim()
  const problem = !label
    ? 'A label is required'
    : label.length > MAX_KEY_LABEL
      ? `At most ${MAX_KEY_LABEL} characters`
      : !isStorableText(label)
        ? 'Contains characters that cannot be stored'
        : null
  if (problem) throw validationError([{ field: 'label', message: problem }])
  return label
}

/** The refusal past API_KEYS_PER_ACCOUNT: nothing is created; revoking a key makes room. */
export const tooManyKeys = (max: number) =>
  new AppError('CONFLICT', `The account already has ${max} live API keys, the most it may hold; revoke one before creating another`)

/**
 * Issues a key. With `maxLiveKeys` (API_KEYS_PER_ACCOUNT: the API's and the CLI's apikey:create),
 * an account holding that many unrevoked keys gets CONFLICT and nothing changes: the count and the
 * insert run in one transaction, and on PostgreSQL the account's row is locked first, so two
 * concurrent creations cannot both take the last place.
 */
export async function createApiKey(
  { db, dbKind }: { db: Db; dbKind?: DatabaseKind },
  accountId: string,
  label: string | null = null,
  maxLiveKeys?: number,
): Promise<IssuedKey> {
  const prefix = `gk_${randomBytes(6).toString('hex')}`
  const apiKey = `${prefix}_${randomBytes(32).toString('base64url')}`
  const row = await db.$transaction(async (tx) => {
    if (dbKind === 'postgresql') {
      const locked = await tx.$queryRaw<unknown[]>`SELECT 1 FROM "Account" WHERE "id" = ${accountId} FOR UPDATE`
      if (locked.length === 0) throw notFound('Account')
    } else {
      const account = await tx.account.findUnique({ where: { id: accountId }, select: { id: true } })
      if (!account) throw notFound('Account')
    }
    if (maxLiveKeys !== undefined && (await tx.apiKey.count({ where: { accountId, revokedAt: null } })) >= maxLiveKeys)
      throw tooManyKeys(maxLiveKeys)
    return tx.apiKey.create({ data: { accountId, prefix, label, hash: sha256(apiKey).toString('hex') } })
  })
  return { id: row.id, prefix, apiKey }
}

/**
 * Revokes by key id or by its visible prefix, then tells every instance to drop the key from its
 * cache. Revoking again publishes again: the way to retry when the publish failed after the commit.
 */
export async function revokeApiKey(
  { db, clock, events }: { db: Db; clock: Clock; events: EventBus },
  keyOrPrefix: string,
  /** Only a key of this account (the API's and the console's revokeApiKey); the CLI passes none. */
  accountId?: string,
) {
  const prefix = keyOrPrefix.match(KEY_PATTERN)?.[1] ?? keyOrPrefix
  if (!isStorableText(keyOrPrefix)) throw notFound('API key')
  const key = await db.apiKey.findFirst({ where: { OR: [{ prefix }, { id: keyOrPrefix }], ...(accountId ? { accountId } : {}) } })
  if (!key) throw notFound('API key')
  const revoked = await db.apiKey.update({ where: { id: key.id }, data: { revokedAt: key.revokedAt ?? clock.now() } })
  await events.publish(API_KEY_REVOKED, { id: revoked.id, prefix: revoked.prefix } satisfies ApiKeyRevoked)
  return revoked
}

export interface AuthenticatedAccount {
  id: string
  name: string
  timezone: string
  keyId: string
}

/** The visible prefix of a well-formed key; null for anything else. */
export function apiKeyPrefix(apiKey: string): string | null {
  return apiKey.match(KEY_PATTERN)?.[1] ?? null
}

export const unauthenticated = () => new AppError('UNAUTHENTICATED', 'A valid API key is required')

interface KeyRow {
  id: string
  hash: string
  revoked: boolean | number | bigint
  accountId: string
  name: string
  timezone: string
}

/**
 * Resolves a Bearer key to its account with one statement (Prisma's findUnique with the account
 * relation sends two without the relationJoins preview), run directly where `directRead` is given
 * (Database.directRead): through Prisma's runtime the lookup cost 232 µs of CPU on SQLite and
 * 447 on PostgreSQL, directly 50 and 192 (`npm run bench -- api-key-cache`; docs/performance.md,
 * "A key's lookup and its lastUsedAt without Prisma's runtime"). Every failure is the same
 * UNAUTHENTICATED error; the hash comparison is constant-time and runs for unknown prefixes too.
 */
export async function authenticateApiKey(db: Db, apiKey: string, directRead?: DirectRead): Promise<AuthenticatedAccount> {
  const prefix = apiKeyPrefix(apiKey)
  if (!prefix) throw unauthenticated()
  const [row] = (await readDirect({ db, directRead })(Prisma.sql`
    SELECT k."id", k."hash", k."revokedAt" IS NOT NULL AS "revoked", a."id" AS "accountId", a."name", a."timezone"
    FROM "ApiKey" k JOIN "Account" a ON a."id" = k."accountId"
    WHERE k."prefix" = ${prefix}`)) as unknown as KeyRow[]
  const given = sha256(apiKey)
  const stored = row ? Buffer.from(row.hash, 'hex') : randomBytes(32)
  // SQLite answers the boolean as 0/1, PostgreSQL as a boolean.
  if (!timingSafeEqual(given, stored) || !row || Number(row.revoked) !== 0) throw unauthenticated()
  return { id: row.accountId, name: row.name, timezone: row.timezone, keyId: row.id }
}

/** Reads `Authorization: Bearer <key>`; null when the header is absent. */
export function bearerToken(header: string | null): string | null {
  if (header === null) return null
  const match = header.match(/^Bearer\s+(\S+)\s*$/i)
  return match ? match[1]! : ''
}
