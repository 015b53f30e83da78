import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { Prisma } from '../generated/sqlite/client.js'
import type { Db, DirectRead, Tx } from '../db/client.js'
import type { DatabaseKind } from '../db/connection-url.js'
import { readDirect } from '../db/read-direct.js'
import type { Clock } from '../core/clock.js'
import { AppError, notFound, validationError } from '../core/errors.js'
import { isStorableText } from '../messaging/input-rules.js'
import type { EventBus } from '../events/event-bus.js'
import { API_KEY_REVOKED, type ApiKeyRevoked } from './api-key-revoked.js'
import { ALL_SCOPES, parseStoredScopes, storedScopes, type Scope } from './scopes.js'
import { recordAudit, type AuditActor } from '../audit/record-audit.js'

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

/** Who asks for a key change and from where, for the audit log (src/audit/). */
export interface AuditSource {
  actor: AuditActor
  address: string | null
}

export interface NewKeyOptions {
  /** Already checked (keyLabel); null: none. */
  label?: string | null
  /** Already checked (requestedScopes); every scope when not given. */
  scopes?: readonly Scope[]
  /** When it stops working; null or absent: never. Must lie ahead. */
  expiresAt?: Date | null
  /**
   * API_KEYS_PER_ACCOUNT (the API's and the CLI's apikey:create): an account holding that many
   * unrevoked keys gets CONFLICT and nothing changes. The count and the insert run in one
   * transaction, and on PostgreSQL the account's row is locked first, so two concurrent creations
   * cannot both take the last place.
   */
  maxLiveKeys?: number
}

/** The longest a rolled key's predecessor keeps working. */
export const MAX_ROLL_GRACE_HOURS = 720

/** An expiry for a new key: VALIDATION_FAILED (field `expiresAt`) unless it lies ahead of `now`. */
function futureExpiry(expiresAt: Date | null | undefined, now: Date): Date | null {
  if (!expiresAt) return null
  if (Number.isNaN(expiresAt.getTime()) || expiresAt <= now)
    throw validationError([{ field: 'expiresAt', message: 'An expiry must lie in the future' }])
  return expiresAt
}

const newKeyMaterial = () => {
  const prefix = `gk_${randomBytes(6).toString('hex')}`
  const apiKey = `${prefix}_${randomBytes(32).toString('base64url')}`
  return { prefix, apiKey, hash: sha256(apiKey).toString('hex') }
}

/** The refusal past API_KEYS_PER_ACCOUNT: nothing is created; revoking a key makes room. */
export const tooManyKeys = (max: number) =>
  new AppError('CONFLICT', `The account already has ${max} live API keys, the most it may hold; revoke one before creating another`)

/** Issues a key for the account; with `audit`, the key and its audit entry commit together. */
export async function createApiKey(
  { db, clock, dbKind }: { db: Db; clock?: Clock; dbKind?: DatabaseKind },
  accountId: string,
  options: NewKeyOptions = {},
  audit?: AuditSource,
): Promise<IssuedKey> {
  const now = clock?.now() ?? new Date()
  const expiresAt = futureExpiry(options.expiresAt, now)
  const { maxLiveKeys } = options
  return db.$transaction(async (tx) => {
    if (dbKind === 'postgresql') {
      const locked = await tx.$queryRaw<unknown[]>`SELECT 1 FROM "Account" WHERE "id" = ${accountId} FOR UPDATE`
      if (locked.length === 0) throw notFound('Account')
    } else {
      const account = await tx.account.findUnique({ where: { id: accountId }, select: { id: true } })
      if (!account) throw notFound('Account')
    }
    if (maxLiveKeys !== undefined && (await tx.apiKey.count({ where: { accountId, revokedAt: null } })) >= maxLiveKeys)
      throw tooManyKeys(maxLiveKeys)
    return insertApiKey(tx, accountId, { label: options.label, scopes: options.scopes, expiresAt }, now, audit)
  })
}

/**
 * Inserts a key, and with `audit` its entry, in the caller's transaction (the account exists, the
 * expiry is checked): createApiKey, and createAccount for an account's first key.
 */
export async function insertApiKey(
  tx: Tx,
  accountId: string,
  options: Pick<NewKeyOptions, 'label' | 'scopes'> & { expiresAt: Date | null },
  now: Date,
  audit?: AuditSource,
): Promise<IssuedKey> {
  const scopes = storedScopes(options.scopes ?? ALL_SCOPES)
  const { prefix, apiKey, hash } = newKeyMaterial()
  const { expiresAt } = options
  const row = await tx.apiKey.create({ data: { accountId, prefix, label: options.label ?? null, hash, scopes, expiresAt } })
  if (audit)
    await recordAudit(tx, {
      accountId,
      ...audit,
      action: 'apikey.create',
      target: prefix,
      details: { label: row.label, scopes: scopes.split(','), expiresAt: expiresAt?.toISOString() ?? null },
      at: now,
    })
  return { id: row.id, prefix, apiKey }
}

/**
 * Replaces a key: a new key with the same label and scopes (and, when the old one had an expiry,
 * the same lifetime counted from now), while the old one keeps working `graceHours` more (0: it
 * stops at once; never later than its own expiry). Every instance drops the old key from its cache,
 * so the shortened life holds from its next request.
 */
export async function rollApiKey(
  { db, clock, events }: { db: Db; clock: Clock; events: EventBus },
  keyOrPrefix: string,
  graceHours: number,
  /** Only a key of this account (the API's and the console's rollApiKey); the CLI passes none. */
  accountId?: string,
  audit?: AuditSource,
): Promise<IssuedKey & { previous: { id: string; prefix: string; expiresAt: Date } }> {
  if (!Number.isInteger(graceHours) || graceHours < 0 || graceHours > MAX_ROLL_GRACE_HOURS)
    throw validationError([{ field: 'graceHours', message: `A whole number of hours from 0 to ${MAX_ROLL_GRACE_HOURS}` }])
  const now = clock.now()
  const old = await findKey(db, keyOrPrefix, accountId)
  if (old.revokedAt || (old.expiresAt && old.expiresAt <= now))
    throw validationError([{ field: 'id', message: 'This key no longer works (revoked or expired): make a new one' }])
  const graceEnd = new Date(now.getTime() + graceHours * 3_600_000)
  const oldExpiresAt = old.expiresAt && old.expiresAt < graceEnd ? old.expiresAt : graceEnd
  const expiresAt = old.expiresAt ? new Date(now.getTime() + (old.expiresAt.getTime() - old.createdAt.getTime())) : null
  const { prefix, apiKey, hash } = newKeyMaterial()
  const row = await db.$transaction(async (tx) => {
    // Conditional: of two concurrent rolls of one key, one wins; the other finds it changed.
    const { count } = await tx.apiKey.updateMany({
      where: { id: old.id, revokedAt: null, expiresAt: old.expiresAt },
      data: { expiresAt: oldExpiresAt },
    })
    if (count !== 1) throw new AppError('CONFLICT', 'The key changed while it was being rolled; try again')
    const row = await tx.apiKey.create({
      data: {
        accountId: old.accountId,
        prefix,
        hash,
        label: old.label,
        scopes: old.scopes,
        expiresAt,
        rolledFromId: old.id,
        createdAt: now,
      },
    })
    if (audit)
      await recordAudit(tx, {
        accountId: old.accountId,
        ...audit,
        action: 'apikey.roll',
        target: old.prefix,
        details: { newKey: prefix, graceHours, oldKeyExpiresAt: oldExpiresAt.toISOString() },
        at: now,
      })
    return row
  })
  await events.publish(API_KEY_REVOKED, { id: old.id, prefix: old.prefix } satisfies ApiKeyRevoked)
  return { id: row.id, prefix, apiKey, previous: { id: old.id, prefix: old.prefix, expiresAt: oldExpiresAt } }
}

/** A key by id, visible prefix or whole key (of the account, when given); NOT_FOUND otherwise. */
async function findKey(db: Db, keyOrPrefix: string, accountId?: string) {
  const prefix = keyOrPrefix.match(KEY_PATTERN)?.[1] ?? keyOrPrefix
  if (!isStorableText(keyOrPrefix)) throw notFound('API key')
  const key = await db.apiKey.findFirst({ where: { OR: [{ prefix }, { id: keyOrPrefix }], ...(accountId ? { accountId } : {}) } })
  if (!key) throw notFound('API key')
  return key
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
  audit?: AuditSource,
) {
  const key = await findKey(db, keyOrPrefix, accountId)
  const now = clock.now()
  const revoked = await db.$transaction(async (tx) => {
    const revoked = await tx.apiKey.update({ where: { id: key.id }, data: { revokedAt: key.revokedAt ?? now } })
    // Revoking again changes nothing, and records nothing.
    if (audit && !key.revokedAt)
      await recordAudit(tx, { accountId: key.accountId, ...audit, action: 'apikey.revoke', target: key.prefix, at: now })
    return revoked
  })
  await events.publish(API_KEY_REVOKED, { id: revoked.id, prefix: revoked.prefix } satisfies ApiKeyRevoked)
  return revoked
}

export interface AuthenticatedAccount {
  id: string
  name: string
  timezone: string
  /** The key's id; '' for a console session. */
  keyId: string
  /** The key's visible prefix; '' for a console session. */
  keyPrefix: string
  /** What the key may do (a console session: every scope). */
  scopes: readonly Scope[]
  /** When the key stops working (ms since the epoch); null: never. */
  keyExpiresAt: number | null
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
  prefix: string
  scopes: string
  expiresAt: Date | string | number | bigint | null
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
 * A key whose expiry (expiresAt) is not after `now` is refused like a revoked one.
 */
export async function authenticateApiKey(
  db: Db,
  apiKey: string,
  directRead?: DirectRead,
  now: Date = new Date(),
): Promise<AuthenticatedAccount> {
  const prefix = apiKeyPrefix(apiKey)
  if (!prefix) throw unauthenticated()
  const [row] = (await readDirect({ db, directRead })(Prisma.sql`
    SELECT k."id", k."hash", k."revokedAt" IS NOT NULL AS "revoked", k."prefix", k."scopes", k."expiresAt", a."id" AS "accountId", a."name", a."timezone"
    FROM "ApiKey" k JOIN "Account" a ON a."id" = k."accountId"
    WHERE k."prefix" = ${prefix}`)) as unknown as KeyRow[]
  const given = sha256(apiKey)
  const stored = row ? Buffer.from(row.hash, 'hex') : randomBytes(32)
  // SQLite answers the boolean as 0/1, PostgreSQL as a boolean.
  if (!timingSafeEqual(given, stored) || !row || Number(row.revoked) !== 0) throw unauthenticated()
  // SQLite answers the timestamp as its stored text (or a number), PostgreSQL as a Date.
  const keyExpiresAt =
    row.expiresAt === null ? null : new Date(typeof row.expiresAt === 'bigint' ? Number(row.expiresAt) : row.expiresAt).getTime()
  if (keyExpiresAt !== null && !(keyExpiresAt > now.getTime())) throw unauthenticated()
  return {
    id: row.accountId,
    name: row.name,
    timezone: row.timezone,
    keyId: row.id,
    keyPrefix: row.prefix,
    scopes: parseStoredScopes(row.scopes),
    keyExpiresAt,
  }
}

/** Reads `Authorization: Bearer <key>`; null when the header is absent. */
export function bearerToken(header: string | null): string | null {
  if (header === null) return null
  const match = header.match(/^Bearer\s+(\S+)\s*$/i)
  return match ? match[1]! : ''
}
