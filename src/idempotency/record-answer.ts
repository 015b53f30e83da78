import type { Deps } from '../deps.js'
import type { Claim, StoredAnswer } from './claim-key.js'

// Only the claim this request still owns: after a take-over the record is another request's.
const owned = (claim: Claim) => ({
  accountId: claim.accountId,
  key: claim.key,
  fingerprint: claim.fingerprint,
  createdAt: claim.createdAt,
  state: 'running',
})

/** Keeps the answer for replay and ends the claim. false when the claim was taken over meanwhile. */
export async function recordAnswer({ db }: Pick<Deps, 'db'>, claim: Claim, answer: StoredAnswer): Promise<boolean> {
  const { count } = await db.idempotencyRecord.updateMany({
    where: owned(claim),
    data: { state: 'done', status: answer.status, headers: JSON.stringify(answer.headers), body: answer.body },
  })
  return count === 1
}

/** Gives the key back (the answer is not kept), so a retry runs the request again. */
export async function releaseClaim({ db }: Pick<Deps, 'db'>, claim: Claim): Promise<void> {
  await db.idempotencyRecord.deleteMany({ where: owned(claim) })
}
