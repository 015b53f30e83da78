import type { Deps } from '../deps.js'
import { AppError, knownAppError } from '../core/errors.js'
import { bearerToken } from '../auth/api-keys.js'
import { parseIdempotencyKey } from './idempotency-key.js'
import { readBodyBytes } from '../http/read-body.js'
import { isMutationRequest } from './graphql-mutation.js'
import { requestFingerprint } from './fingerprint.js'
import { claimIdempotencyKey, type Claim, type StoredAnswer } from './claim-key.js'
import { recordAnswer, releaseClaim } from './record-answer.js'
import { keepLease } from './keep-lease.js'
import { LEASE_MS, isKeptAnswer, replayableHeaders } from './policy.js'
import { layerErrorResponse } from './layer-error.js'
import { AnswerResponse } from '../http/answer-response.js'

export interface IdempotentRequest {
  request: Request
  url: URL
  requestId: string
}

type Handle = (request: Request) => Promise<Response>

// Statuses whose responses may not have a body (the Response constructor refuses one).
const NULL_BODY = new Set([101, 204, 205, 304])

// /api/channels.m3u is a channel path too.
const CHANNEL_PATH = /^\/api\/(channels|programs)([/.]|$)/

/**
 * The Idempotency-Key layer around the REST and GraphQL dispatch. It applies to an authenticated
 * POST under /api (the messaging API), or to POST /graphql selecting a mutation, carrying the header; everything else
 * goes to `handle` untouched (an unauthenticated request fails 401 there, as without the header).
 *
 * Applied: the key is checked (400), the body read within BODY_LIMIT_BYTES (413) and fingerprinted,
 * the key claimed (409 CONFLICT while the first request runs, 422 IDEMPOTENCY_KEY_REUSED for a
 * different request, a replay of the kept answer with `Idempotency-Replayed: true`), then the
 * request runs and its answer is kept (policy.ts says which). Refusals write nothing.
 */
export async function withIdempotencyKey(
  deps: Deps,
  { request, url, requestId }: IdempotentRequest,
  { leaseMs = LEASE_MS }: { leaseMs?: number },
  handle: Handle,
): Promise<Response> {
  const raw = request.headers.get('idempotency-key')
  // The messaging API only: the channel API (/api/channels, /api/programs) is public and read-only,
  // has no POST route and answers its own error shape.
  const api = url.pathname === '/graphql' ? 'graphql' : url.pathname.startsWith('/api/') && !CHANNEL_PATH.test(url.pathname) ? 'rest' : null
  const token = bearerToken(request.headers.get('authorization'))
  if (raw === null || request.method !== 'POST' || !api || !token) return handle(request)

  let prepared: { request: Request; claim: Claim } | { request: Request; pass: true } | { replay: StoredAnswer }
  try {
    prepared = await prepare(deps, { request, url, raw, token, api, leaseMs })
  } catch (error) {
    const known = knownAppError(error)
    if (!known) throw error
    return layerErrorResponse(known, api, requestId)
  }
  if ('replay' in prepared) return replay(prepared.replay)
  if ('pass' in prepared) return handle(prepared.request)

  const { claim } = prepared
  const stopLease = keepLease(deps, claim, leaseMs)
  let response: Response
  let body: string
  try {
    response = await handle(prepared.request)
    body = await response.text()
  } catch (error) {
    stopLease()
    await releaseClaim(deps, claim).catch((e: unknown) => deps.logger.warn({ err: e, requestId }, 'could not release an Idempotency-Key'))
    throw error
  }
  stopLease()
  try {
    if (isKeptAnswer(response.status, body, api)) {
      // Bounded storage: an answer too large, or past the account's budget, is not kept; the key
      // still records that the request ran, so a retry is refused (409) instead of running again.
      const keep = await fitsBudget(deps, claim.accountId, body)
      const answer = keep
        ? { status: response.status, headers: replayableHeaders(response.headers), body }
        : { status: response.status, headers: {}, body: null }
      const kept = await recordAnswer(deps, claim, answer)
      if (!kept) deps.logger.warn({ requestId }, 'Idempotency-Key was taken over before its answer was kept')
    } else {
      await releaseClaim(deps, claim)
    }
  } catch (error) {
    // The request itself succeeded: answer it. The record stays running until its lease passes,
    // then a retry runs again.
    deps.logger.error({ err: error, requestId }, 'could not keep the answer of an Idempotency-Key')
  }
  return new AnswerResponse(NULL_BODY.has(response.status) ? null : body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  })
}

/**
 * Whether an answer may be kept: at most IDEMPOTENCY_MAX_ANSWER_BYTES, and the account's kept
 * answers (within their 24 h) stay within IDEMPOTENCY_ACCOUNT_BUDGET_BYTES. Sizes are in
 * characters, as both databases measure text.
 */
async function fitsBudget({ db, env }: Pick<Deps, 'db' | 'env'>, accountId: string, body: string): Promise<boolean> {
  if (body.length > env.IDEMPOTENCY_MAX_ANSWER_BYTES) return false
  const [row] = await db.$queryRaw<{ kept: bigint | number | null }[]>`
    SELECT SUM(LENGTH("body")) AS "kept" FROM "IdempotencyRecord" WHERE "accountId" = ${accountId} AND "body" IS NOT NULL`
  return Number(row?.kept ?? 0) + body.length <= env.IDEMPOTENCY_ACCOUNT_BUDGET_BYTES
}

async function prepare(
  deps: Deps,
  input: { request: Request; url: URL; raw: string; token: string; api: 'rest' | 'graphql'; leaseMs: number },
): Promise<{ request: Request; claim: Claim } | { request: Request; pass: true } | { replay: StoredAnswer }> {
  const { request, url, api } = input
  let accountId: string
  try {
    accountId = (await deps.apiKeyCache.authenticate(input.token)).id
  } catch (error) {
    if (error instanceof AppError && error.code === 'UNAUTHENTICATED') return { request, pass: true }
    throw error
  }
  const key = parseIdempotencyKey(input.raw)
  const bytes = await readBodyBytes(request, deps.env.BODY_LIMIT_BYTES)
  // The body was read here; the handler gets a new Request with the same bytes.
  const again = new Request(request.url, {
    method: request.method,
    headers: request.headers,
    body: bytes.byteLength ? bytes : undefined,
    signal: request.signal,
  })
  if (api === 'graphql' && !isMutationRequest(request.headers.get('content-type'), url, bytes)) return { request: again, pass: true }
  const fingerprint = requestFingerprint(request.method, url.pathname + url.search, bytes, request.headers.get('content-type'))
  const outcome = await claimIdempotencyKey(deps, { accountId, key, fingerprint }, input.leaseMs)
  return outcome.kind === 'replay' ? { replay: outcome.answer } : { request: again, claim: outcome.claim }
}

function replay(answer: StoredAnswer): Response {
  return new AnswerResponse(NULL_BODY.has(answer.status) ? null : answer.body, {
    status: answer.status,
    headers: { ...answer.headers, 'Idempotency-Replayed': 'true' },
  })
}
