import type { Deps } from '../deps.js'
import { AppError, isUniqueViolation } from '../core/errors.js'
import { LEASE_MS, RETENTION_MS } from './policy.js'

export interface KeyedRequest {
  accountId: string
  key: string
  fingerprint: string
}

/** A running record this request owns; `createdAt` tells it apart from a later take-over. */
export interface Claim extends KeyedRequest {
  createdAt: Date
}

export interface StoredAnswer {
  status: number
  headers: Record<string, string>
  body: string | null
}

export type ClaimOutcome = { kind: 'claimed'; claim: Claim } | { kind: 'replay'; answer: StoredAnswer }

/**
 * Claims an Idempotency-Key for one request, or says why not. The primary key (accountId, key)
 * decides races on both databases: of two concurrent inserts one fails with a unique violation and
 * that request then sees the other's running record (409 CONFLICT).
 *
 * An expired record (past 24 h) counts as absent; a running one whose lease passed belongs to a
 * request that died and is taken over. Both are replaced with a conditional update on the values
 * just read, so of two requests taking over the same record only one wins.
 */
export async function claimIdempotencyKey(
  { db, clock }: Pick<Deps, 'db' | 'clock'>,
  request: KeyedRequest,
  leaseMs = LEASE_MS,
): Promise<ClaimOutcome> {
  const { accountId, key, fingerprint } = request
  // A few rounds cover a record purged or taken over between our insert and our read.
  for (let attempt = 0; attempt < 3; attempt++) {
    const now = clock.now()
    const fresh = {
      fingerprint,
      state: 'running',
      status: null,
      headers: null,
      body: null,
      leaseUntil: new Date(now.getTime() + leaseMs),
      createdAt: now,
      expiresAt: new Date(now.getTime() + RETENTION_MS),
    }
    const claimed: ClaimOutcome = { kind: 'claimed', claim: { accountId, key, fingerprint, createdAt: now } }
    try {
      await db.idempotencyRecord.create({ data: { accountId, key, ...fresh } })
      return claimed
    } catch (error) {
      if (!isUniqueViolation(error)) throw error
    }
    const existing = await db.idempotencyRecord.findUnique({ where: { accountId_key: { accountId, key } } })
    if (!existing) continue
    if (existing.expiresAt > now) {
      if (existing.fingerprint !== fingerprint) {
        throw new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request')
      }
      if (existing.state === 'done') {
        if (existing.body === null) {
          throw new AppError(
            'CONFLICT',
            `The request with this Idempotency-Key already ran (status ${existing.status}), but its answer was not kept: answers over the size limit, or past the account's budget of kept answers, are not (docs/api.md). Read the result with a query`,
          )
        }
        return {
          kind: 'replay',
          answer: { status: existing.status ?? 200, headers: JSON.parse(existing.headers ?? '{}'), body: existing.body },
        }
      }
      if (existing.leaseUntil > now) {
        throw new AppError('CONFLICT', 'A request with this Idempotency-Key is still being processed; retry later')
      }
    }
    const { count } = await db.idempotencyRecord.updateMany({
      where: { accountId, key, state: existing.state, createdAt: existing.createdAt, leaseUntil: existing.leaseUntil },
      data: fresh,
    })
    if (count === 1) return claimed
  }
  throw new AppError('CONFLICT', 'A request with this Idempotency-Key is still being processed; retry later')
}
