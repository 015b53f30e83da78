import http, { type IncomingMessage, type OutgoingHttpHeaders } from 'node:http'
import https from 'node:https'
import type { Deps } from '../deps.js'
import { directTimestamp } from '../db/client.js'
import { timeOrderedId } from '../db/time-ordered-id.js'
import { jsonTexts } from '../db/json-texts.js'
import { Prisma, type WebhookEndpoint } from '../generated/sqlite/client.js'
import { isIP } from 'node:net'
import { guardedLookup, isPublicAddress, NOT_PUBLIC } from './ssrf-guard.js'
import { sign } from './signature.js'
import { nextAttemptAt, parseRetryAfter } from './retry-schedule.js'
import { recordEndpointHealth, type EndpointSnapshot } from './endpoint-health.js'
import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import { inSpan, linkTo, tracingEnabled } from '../core/tracing.js'
import { notifySelect } from '../events/event-bus.js'
import { MAX_EVENT_DELIVERY_IDS, publishQuietly, TOPIC, type WebhookDeliveryEvent } from '../live/topics.js'

/** The default claim (WORKER_LEASE_MS); requests time out at half the lease at most, so a live claim never expires under a running attempt. */
export const LEASE_MS = 60_000
export const TIMEOUT_MS = 10_000

const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 64 }), https: new https.Agent({ keepAlive: true, maxSockets: 64 }) }

export interface DispatchOptions {
  /** Names this dispatcher in claims (instance id). */
  owner: string
  /** Deliveries claimed per batch. */
  batchSize?: number
  /** Concurrent POSTs. */
  concurrency?: number
  random?: () => number
  /** Request timeout; 10 s or half the lease, whichever is shorter, unless a test shortens it. */
  timeoutMs?: number
  /** Claim lease; WORKER_LEASE_MS by default. */
  leaseMs?: number
  /** Deliveries of one endpoint in flight at once on this instance (WEBHOOK_ENDPOINT_CONCURRENCY). */
  perEndpoint?: number
}

export interface DispatchResult {
  claimed: number
  delivered: number
  retrying: number
  failed: number
}

/** At most this many of one endpoint's deliveries are in flight at once on one instance (WEBHOOK_ENDPOINT_CONCURRENCY's default). */
export const PER_ENDPOINT = 10

/** What one instance has in flight: per endpoint, and per account (all its endpoints together). */
export interface InFlight {
  endpoints: ReadonlyMap<string, number>
  accounts: ReadonlyMap<string, number>
}

const NOTHING_IN_FLIGHT: InFlight = { endpoints: new Map(), accounts: new Map() }

/**
 * An account's endpoints together have at most this many times `perEndpoint` deliveries in flight
 * on one instance: an account that points all of its endpoints at a receiver that never answers
 * holds a share of the slots, never all of them.
 */
export const ACCOUNT_SHARE = 2

/**
 * Claims up to `limit` due deliveries for `owner` with a lease, fairly:
 * - an endpoint has at most `perEndpoint` deliveries in flight on this instance, and an account's
 *   endpoints together ACCOUNT_SHARE times that (`inFlight` counts what this instance already
 *   sends), so a receiver that never answers holds a few slots, never the worker. Counted per
 *   instance, not from the leases in the database: a killed instance's leases would otherwise
 *   block its endpoints until they expire;
 * - the candidates are taken round-robin over the endpoints (every endpoint's oldest due delivery
 *   before anyone's second), so one endpoint's backlog does not fill a batch, nor delay another
 *   endpoint of the same account;
 * - an endpoint that keeps failing is paused (`pausedUntil`, see recordOutcomes) and skipped.
 * The claim itself is one UPDATE per batch: under concurrency exactly one claimer wins each row
 * (PostgreSQL: the candidates are locked as they are read, SKIP LOCKED, and the UPDATE leases those
 * it picked; SQLite serialises writers, and its UPDATE is conditional). A claim left by a dead
 * process is free again when its lease runs out.
 */
export async function claimDueDeliveries(
  deps: StatementDeps,
  owner: string,
  limit: number,
  leaseMs = LEASE_MS,
  perEndpoint = PER_ENDPOINT,
  inFlight: InFlight = NOTHING_IN_FLIGHT,
): Promise<Claimed[]> {
  const now = deps.clock.now()
  const at = directTimestamp(deps.dbKind, now)
  const perAccount = perEndpoint * ACCOUNT_SHARE
  // Endpoints and accounts whose every slot this instance already uses; paused ones are left out by the query.
  const fullEndpoints = [...inFlight.endpoints].filter(([, n]) => n >= perEndpoint).map(([id]) => id)
  const fullAccounts = [...inFlight.accounts].filter(([, n]) => n >= perAccount).map(([id]) => id)
  const token = `${owner}:${now.getTime()}:${Math.random().toString(36).slice(2, 10)}`
  const leaseUntil = directTimestamp(deps.dbKind, new Date(now.getTime() + leaseMs))
  // PostgreSQL: the function of claimAtOnce (through Prisma, too, with traces on).
  const texts = (ids: string[]) => Prisma.sql`ARRAY(${jsonTexts('postgresql', ids)})`
  const due =
    deps.dbKind === 'postgresql'
      ? Prisma.sql`
    SELECT * FROM "webhook_due_candidates"(CAST(${at} AS timestamp(3)), CAST(${limit * 4} AS integer), ${texts(fullEndpoints)}, ${texts(fullAccounts)})`
      : Prisma.sql`
    SELECT d."id", d."accountId", d."endpointId", d."nextAttemptAt" FROM "WebhookDelivery" d
    WHERE d."state" = 'pending' AND d."nextAttemptAt" <= ${at} AND (d."leaseUntil" IS NULL OR d."leaseUntil" < ${at})
      ${fullEndpoints.length ? Prisma.sql`AND (d."endpointId" IS NULL OR d."endpointId" NOT IN (${Prisma.join(fullEndpoints)}))` : Prisma.empty}
      ${fullAccounts.length ? Prisma.sql`AND d."accountId" NOT IN (${Prisma.join(fullAccounts)})` : Prisma.empty}
      AND NOT EXISTS (SELECT 1 FROM "WebhookEndpoint" e WHERE e."id" = d."endpointId" AND e."pausedUntil" > ${at})
    ORDER BY d."nextAttemptAt" LIMIT ${limit * 4}`
  if (deps.dbKind === 'postgresql') {
    const claimed = await claimAtOnce(deps, due, token, at, leaseUntil, limit, perEndpoint, perAccount, inFlight)
    if (claimed) return claimed
  }
  // Raw statements without Prisma's runtime (rowsOf): this path runs for every few deliveries, and
  // through the query builder its statements cost more CPU than the POSTs themselves (bench/webhook-dispatch.ts).
  const candidates = await rowsOf<Candidate>(deps, due)
  const picked = roundRobin(candidates, limit, perEndpoint, perAccount, inFlight)
  if (!picked.length) return []
  // One conditional UPDATE: under concurrency exactly one claimer wins each row.
  const won = await rowsOf<{
    id: string
    accountId: string
    endpointId: string | null
    body: string
    attempts: number | bigint
    attemptsTotal: number | bigint
    traceparent: string | null
  }>(
    deps,
    Prisma.sql`
    UPDATE "WebhookDelivery" SET "leaseOwner" = ${token}, "leaseUntil" = ${leaseUntil}
    WHERE "id" IN (${Prisma.join(picked)}) AND "state" = 'pending' AND ("leaseUntil" IS NULL OR "leaseUntil" < ${at})
    RETURNING "id", "accountId", "endpointId", "body", "attempts", "attemptsTotal", "traceparent"`,
  )
  if (!won.length) return []
  const ids = [...new Set(won.flatMap((d) => (d.endpointId ? [d.endpointId] : [])))]
  const endpoints = ids.length
    ? await rowsOf<Record<keyof ClaimedEndpoint, unknown>>(
        deps,
        Prisma.sql`
    SELECT "id", "accountId", "url", "secret", "previousSecret", "previousSecretUntil", "disabledAt", "disabledReason", "failures", "pausedUntil"
    FROM "WebhookEndpoint" WHERE "id" IN (${Prisma.join(ids)})`,
      )
    : []
  const byId = new Map(endpoints.map((e) => [e.id as string, endpointOf(e)]))
  // In the round-robin order (RETURNING follows no order).
  const order = new Map(picked.map((id, i) => [id, i]))
  return won
    .map((d) => ({
      ...d,
      attempts: Number(d.attempts),
      attemptsTotal: Number(d.attemptsTotal),
      endpoint: (d.endpointId && byId.get(d.endpointId)) || null,
    }))
    .sort((x, y) => order.get(x.id)! - order.get(y.id)!)
}

/**
 * PostgreSQL: the claim as one statement, where it was three round trips (the candidates, the
 * conditional UPDATE, the endpoints). The candidates come from "webhook_due_candidates"
 * (prisma/postgresql/migrations/20261207040000_webhook_claim_plan), whose own planner settings
 * walk the ("state", "nextAttemptAt") index in order and stop after its LIMIT whatever the
 * statistics: planned here, a table not analysed since a burst made PostgreSQL read and sort
 * every due row for each claim. It locks them as it reads them (`FOR UPDATE SKIP LOCKED`): two
 * instances claiming at once take different rows instead of the same ones, and the UPDATE needs
 * no condition but the ids (they stay locked until it commits), which keeps its plan on the
 * primary key whatever the statistics too. The round-robin of `roundRobin` is
 * done by window functions: each candidate's round is its rank in its endpoint's queue (a
 * delivery whose endpoint was removed is a queue of its own), the endpoints taking turns in the
 * order of their oldest candidate; a candidate passes while its endpoint has room (`perEndpoint`
 * less what this instance has in flight) and its account too (`perAccount`, counted over the
 * account's candidates in that same order). The claimed rows come back with their endpoints, in
 * that order. undefined when the direct path declines (traces on): the caller claims its other way.
 */
async function claimAtOnce(
  deps: StatementDeps,
  due: Prisma.Sql,
  token: string,
  at: string,
  leaseUntil: string,
  limit: number,
  perEndpoint: number,
  perAccount: number,
  inFlight: InFlight,
): Promise<Claimed[] | undefined> {
  if (!deps.directRead) return undefined
  const int = (n: number) => Prisma.sql`CAST(${n} AS integer)`
  const busy = (counts: ReadonlyMap<string, number>, name: string, key: string) =>
    counts.size
      ? Prisma.sql`LEFT JOIN (VALUES ${Prisma.join([...counts].map(([id, n]) => Prisma.sql`(${id}, ${int(n)})`))}) AS ${Prisma.raw(name)}("id", "n")
          ON ${Prisma.raw(name)}."id" = ${Prisma.raw(key)}`
      : Prisma.empty
  const used = (counts: ReadonlyMap<string, number>, name: string) =>
    counts.size ? Prisma.sql`coalesce(${Prisma.raw(name)}."n", 0)` : Prisma.sql`0`
  const rows = await deps.directRead(Prisma.sql`
    WITH "candidates" AS (${due}),
    "rounds" AS (
      SELECT c."id", c."accountId", c."endpointId", coalesce(c."endpointId", c."id") AS "queue",
        row_number() OVER (PARTITION BY coalesce(c."endpointId", c."id") ORDER BY c."nextAttemptAt", c."id") AS "round",
        min(c."nextAttemptAt") OVER (PARTITION BY coalesce(c."endpointId", c."id")) AS "first"
      FROM "candidates" c
    ),
    "seated" AS (
      SELECT r.*, row_number() OVER (PARTITION BY r."accountId" ORDER BY r."round", r."first", r."queue") AS "seat"
      FROM "rounds" r ${busy(inFlight.endpoints, 'ue', 'r."endpointId"')}
      WHERE r."round" <= CASE WHEN r."endpointId" IS NULL THEN 1 ELSE ${int(perEndpoint)} - ${used(inFlight.endpoints, 'ue')} END
    ),
    "picked" AS (
      SELECT s."id", row_number() OVER (ORDER BY s."round", s."first", s."queue") AS "turn"
      FROM "seated" s ${busy(inFlight.accounts, 'ua', 's."accountId"')}
      WHERE s."seat" <= ${int(perAccount)} - ${used(inFlight.accounts, 'ua')}
      ORDER BY s."round", s."first", s."queue" LIMIT ${int(limit)}
    ),
    "won" AS (
      UPDATE "WebhookDelivery" w SET "leaseOwner" = ${token}, "leaseUntil" = ${leaseUntil}
      WHERE w."id" = ANY (ARRAY(SELECT p."id" FROM "picked" p))
      RETURNING w."id", w."accountId", w."endpointId", w."body", w."attempts", w."attemptsTotal", w."traceparent"
    )
    SELECT won.*, p."turn", e."id" AS "e_id", e."accountId" AS "e_accountId", e."url" AS "e_url", e."secret" AS "e_secret",
      e."previousSecret" AS "e_previousSecret", e."previousSecretUntil" AS "e_previousSecretUntil", e."disabledAt" AS "e_disabledAt",
      e."disabledReason" AS "e_disabledReason", e."failures" AS "e_failures", e."pausedUntil" AS "e_pausedUntil"
    FROM "won" won JOIN "picked" p ON p."id" = won."id" LEFT JOIN "WebhookEndpoint" e ON e."id" = won."endpointId"
    ORDER BY p."turn"`)
  if (!rows) return undefined
  return rows.map((row) => ({
    id: row.id as string,
    accountId: row.accountId as string,
    endpointId: (row.endpointId as string | null) ?? null,
    body: row.body as string,
    attempts: Number(row.attempts),
    attemptsTotal: Number(row.attemptsTotal),
    traceparent: (row.traceparent as string | null) ?? null,
    endpoint:
      row.e_id === null || row.e_id === undefined
        ? null
        : endpointOf({
            id: row.e_id,
            accountId: row.e_accountId,
            url: row.e_url,
            secret: row.e_secret,
            previousSecret: row.e_previousSecret,
            previousSecretUntil: row.e_previousSecretUntil,
            disabledAt: row.e_disabledAt,
            disabledReason: row.e_disabledReason,
            failures: row.e_failures,
            pausedUntil: row.e_pausedUntil,
          }),
  }))
}

interface Candidate {
  id: string
  accountId: string
  endpointId: string | null
}

/** What the dispatcher's statements need: the direct paths, and Prisma where they decline. */
type StatementDeps = Pick<Deps, 'db' | 'dbKind' | 'clock' | 'directRead' | 'directTransaction'>
type DispatchDeps = StatementDeps & Pick<Deps, 'env' | 'logger'>

/**
 * One raw statement outside a transaction: directly (Database.directRead) where it can, through
 * Prisma where it declines (traces on). A failure is not run again: the claim is a write.
 */
async function rowsOf<T>(deps: StatementDeps, statement: Prisma.Sql): Promise<T[]> {
  const rows = await deps.directRead?.(statement)
  return (rows ?? (await deps.db.$queryRaw<T[]>(statement))) as T[]
}

/** A raw row's time (ISO text from either database, a Date through Prisma) as a Date. */
const dateOf = (value: unknown) => (value === null || value === undefined ? null : new Date(value as string | Date))

function endpointOf(row: Record<keyof ClaimedEndpoint, unknown>): ClaimedEndpoint {
  return {
    id: row.id as string,
    accountId: row.accountId as string,
    url: row.url as string,
    secret: row.secret as string,
    previousSecret: (row.previousSecret as string | null) ?? null,
    previousSecretUntil: dateOf(row.previousSecretUntil),
    disabledAt: dateOf(row.disabledAt),
    disabledReason: (row.disabledReason as string | null) ?? null,
    failures: Number(row.failures),
    pausedUntil: dateOf(row.pausedUntil),
  }
}

/**
 * Ids in rounds: each endpoint's first (oldest) candidate, then each one's second, ...; at most
 * what is left of its endpoint's and its account's room each. A delivery whose endpoint was
 * removed is a round of its own (it fails without a request).
 */
function roundRobin(candidates: Candidate[], limit: number, perEndpoint: number, perAccount: number, inFlight: InFlight): string[] {
  const queues = new Map<string, { accountId: string; room: number; ids: string[] }>()
  for (const c of candidates) {
    const key = c.endpointId ?? `removed:${c.id}`
    let queue = queues.get(key)
    if (!queue) {
      const room = c.endpointId ? perEndpoint - (inFlight.endpoints.get(c.endpointId) ?? 0) : 1
      queue = { accountId: c.accountId, room, ids: [] }
      queues.set(key, queue)
    }
    queue.ids.push(c.id)
  }
  const accountRoom = new Map<string, number>()
  const picked: string[] = []
  for (let round = 0; picked.length < limit; round++) {
    let any = false
    for (const queue of queues.values()) {
      if (round >= queue.ids.length || round >= queue.room) continue
      const left = accountRoom.get(queue.accountId) ?? perAccount - (inFlight.accounts.get(queue.accountId) ?? 0)
      if (left <= 0) continue
      accountRoom.set(queue.accountId, left - 1)
      any = true
      picked.push(queue.ids[round]!)
      if (picked.length === limit) break
    }
    if (!any) break
  }
  return picked
}

/** A claimed delivery with its endpoint (null once the endpoint was removed). */
interface Claimed {
  id: string
  accountId: string
  endpointId: string | null
  body: string
  /** Attempts in this round of the schedule. */
  attempts: number
  /** Every attempt so far, replays included: the next one is numbered one more. */
  attemptsTotal: number
  traceparent: string | null
  endpoint: ClaimedEndpoint | null
}

/** What a POST and its record read of the endpoint. */
type ClaimedEndpoint = Pick<
  WebhookEndpoint,
  | 'id'
  | 'accountId'
  | 'url'
  | 'secret'
  | 'previousSecret'
  | 'previousSecretUntil'
  | 'disabledAt'
  | 'disabledReason'
  | 'failures'
  | 'pausedUntil'
>

interface Outcome {
  delivery: Claimed
  url: string
  statusCode: number | null
  durationMs: number
  error: string | null
  /** 2xx */
  ok: boolean
  /** 410 Gone: the endpoint is switched off. */
  gone: boolean
  retryAfterMs: number
  /** The request's headers as sent, one "name: value" a line; null when none was sent. */
  requestHeaders: string | null
  /** What was kept of the answer (docs/security.md): its headers, its body, and whether more came. */
  responseHeaders: string | null
  responseBody: string | null
  responseTruncated: boolean
}

/**
 * One POST. With traces on it is a span of its own, a new trace linked to the work that caused the
 * report (the delivery's stored traceparent), and the HTTP instrumentation sends the receiver a
 * `traceparent` of that span.
 */
function attempt(deps: Pick<Deps, 'env' | 'clock'>, delivery: Claimed, timeoutMs: number): Promise<Outcome> {
  if (!tracingEnabled) return post(deps, delivery, timeoutMs)
  const options = {
    root: true,
    kind: SpanKind.PRODUCER,
    links: linkTo(delivery.traceparent),
    attributes: { 'webhook.id': delivery.id, 'webhook.attempt': delivery.attemptsTotal + 1 },
  }
  return inSpan('webhook attempt', options, async (span) => {
    const outcome = await post(deps, delivery, timeoutMs)
    if (outcome.statusCode !== null) span.setAttribute('http.response.status_code', outcome.statusCode)
    if (!outcome.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error ?? undefined })
    return outcome
  })
}

async function post(deps: Pick<Deps, 'env' | 'clock'>, delivery: Claimed, timeoutMs: number): Promise<Outcome> {
  const endpoint = delivery.endpoint
  const base = {
    delivery,
    statusCode: null,
    durationMs: 0,
    ok: false,
    gone: false,
    retryAfterMs: 0,
    requestHeaders: null,
    responseHeaders: null,
    responseBody: null,
    responseTruncated: false,
  }
  if (!endpoint) return { ...base, url: '', error: 'no webhook registered' }
  if (endpoint.disabledAt)
    return { ...base, url: endpoint.url, error: `webhook disabled: ${endpoint.disabledReason ?? 'it answered 410 Gone'}` }
  // got skips the lookup for an address literal, so those are checked here.
  const host = new URL(endpoint.url).hostname.replace(/^\[|\]$/g, '')
  if (isIP(host) && !deps.env.WEBHOOK_ALLOW_PRIVATE_NETWORKS && !isPublicAddress(host)) {
    return { ...base, url: endpoint.url, error: NOT_PUBLIC }
  }
  const timestamp = Math.floor(deps.clock.now().getTime() / 1000)
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'sms-channel-gateway-webhooks/1',
    'webhook-id': delivery.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatures(endpoint, delivery, timestamp, deps.clock.now()),
  }
  const sent = { ...base, url: endpoint.url, requestHeaders: headerLines(Object.entries(headers)) }
  const started = performance.now()
  try {
    const response = await postBounded(
      endpoint.url,
      delivery.body,
      headers,
      timeoutMs,
      guardedLookup(deps.env.WEBHOOK_ALLOW_PRIVATE_NETWORKS),
    )
    const statusCode = response.statusCode
    const ok = statusCode >= 200 && statusCode < 300
    const kept = keptAnswer(response)
    return {
      ...sent,
      ...kept,
      statusCode,
      durationMs: Math.round(performance.now() - started),
      ok,
      gone: statusCode === 410,
      error: ok ? null : statusCode >= 300 && statusCode < 400 ? `redirect (${statusCode}) not followed` : `HTTP ${statusCode}`,
      retryAfterMs: parseRetryAfter(response.headers['retry-after'] as string | undefined, deps.clock.now()),
    }
  } catch (error) {
    const e = error as { code?: string; message: string }
    const message = e.code === 'ETIMEDOUT' ? `timed out after ${timeoutMs} ms` : e.message
    return { ...sent, durationMs: Math.round(performance.now() - started), error: message }
  }
}

/**
 * The webhook-signature header: the current secret's signature, and during a rotation's overlap the
 * previous secret's too, space-separated (Standard Webhooks: a receiver accepts any one it can verify).
 */
function signatures(
  endpoint: { secret: string; previousSecret: string | null; previousSecretUntil: Date | null },
  delivery: Claimed,
  timestamp: number,
  now: Date,
): string {
  const current = sign(endpoint.secret, delivery.id, timestamp, delivery.body)
  if (!endpoint.previousSecret || !endpoint.previousSecretUntil || endpoint.previousSecretUntil <= now) return current
  return `${current} ${sign(endpoint.previousSecret, delivery.id, timestamp, delivery.body)}`
}

/** The most of a receiver's answer that is read: past it the connection is cut. */
export const MAX_RESPONSE_BYTES = 64 * 1024
/** The most of an answer's body kept in the attempt log (of what was read). */
export const MAX_LOGGED_BODY_BYTES = 4 * 1024
/** The most of an answer's headers kept in the attempt log, as "name: value" lines. */
export const MAX_LOGGED_HEADER_BYTES = 2 * 1024

interface Answer {
  statusCode: number
  headers: Record<string, string | string[] | undefined>
  rawHeaders: string[]
  /** The first MAX_LOGGED_BODY_BYTES of the body. */
  body: Buffer
  /** More body came than `body` holds (or the read was cut). */
  more: boolean
}

/**
 * POSTs and resolves with the status, the headers and the start of the body once the body has
 * ended, MAX_RESPONSE_BYTES were read (the connection is then cut), or the request's time ran out
 * after the status had come (the answer counts; the body is what came). Before the status, the
 * time running out rejects with ETIMEDOUT. node:http itself, not a client library: redirects are
 * not followed, nothing is retried, the body is never decompressed (no accept-encoding is sent),
 * and what a library adds per request (got merged its options and wrapped the socket's stream for
 * every POST) cost more CPU than the rest of the dispatcher (docs/performance.md). The module's
 * `request` is looked up at each call, so that the HTTP instrumentation's patch (traces on) applies.
 */
function postBounded(
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  lookup: ReturnType<typeof guardedLookup>,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const secure = url.startsWith('https:')
    const requestHeaders: OutgoingHttpHeaders = { ...headers, 'content-length': Buffer.byteLength(body) }
    const options = { method: 'POST', headers: requestHeaders, agent: secure ? agents.https : agents.http, lookup }
    const request = secure ? https.request(url, options) : http.request(url, options)
    const chunks: Buffer[] = []
    let kept = 0
    let read = 0
    let answer: Omit<Answer, 'body' | 'more'> | null = null
    let settled = false
    const timer = setTimeout(
      () => request.destroy(Object.assign(new Error(`timed out after ${timeoutMs} ms`), { code: 'ETIMEDOUT' })),
      timeoutMs,
    )
    const finish = (cut: boolean) => {
      clearTimeout(timer)
      if (settled || !answer) return
      settled = true
      resolve({ ...answer, body: Buffer.concat(chunks), more: cut || read > kept })
    }
    request.once('response', (response: IncomingMessage) => {
      answer = { statusCode: response.statusCode ?? 0, headers: response.headers, rawHeaders: response.rawHeaders }
      response.on('data', (chunk: Buffer) => {
        read += chunk.length
        if (kept < MAX_LOGGED_BODY_BYTES) {
          const part = chunk.subarray(0, MAX_LOGGED_BODY_BYTES - kept)
          chunks.push(part)
          kept += part.length
        }
        if (read > MAX_RESPONSE_BYTES) {
          finish(true)
          response.destroy()
        }
      })
      response.once('end', () => finish(false))
      // Cut after the answer (the time ran out while the body trickled in, the receiver closed): the status counts.
      response.once('close', () => finish(!response.complete))
      response.on('error', () => finish(true))
    })
    request.on('error', (error) => {
      if (answer) return finish(true)
      clearTimeout(timer)
      if (settled) return
      settled = true
      reject(error)
    })
    request.end(body)
  })
}

/** "name: value" lines, cut at MAX_LOGGED_HEADER_BYTES on a line's end; whether some were left out. */
function headerLines(pairs: [string, string][]): string {
  return boundedHeaderLines(pairs).text
}

function boundedHeaderLines(pairs: [string, string][]): { text: string; cut: boolean } {
  let text = ''
  let bytes = 0
  for (const [name, value] of pairs) {
    const line = `${text ? '\n' : ''}${name}: ${value}`
    const size = Buffer.byteLength(line)
    if (bytes + size > MAX_LOGGED_HEADER_BYTES) return { text, cut: true }
    text += line
    bytes += size
  }
  return { text, cut: false }
}

/** Stateless between calls (no `stream` option): one for every answer. */
const utf8 = new TextDecoder('utf-8', { fatal: false })

/** What the attempt log keeps of an answer: text any database stores (a NUL becomes U+FFFD). */
function keptAnswer(answer: Answer) {
  const pairs: [string, string][] = []
  for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2) pairs.push([answer.rawHeaders[i]!, answer.rawHeaders[i + 1]!])
  const headers = boundedHeaderLines(pairs)
  // A character cut at the bound decodes as U+FFFD.
  const body = utf8.decode(answer.body).replace(/\0/g, '\uFFFD')
  return {
    responseHeaders: headers.text.replace(/\0/g, '\uFFFD'),
    responseBody: body,
    responseTruncated: answer.more || headers.cut,
  }
}

/**
 * One batch: claim, POST concurrently, and record each attempt and its delivery's new state as
 * that POST completes. A POST's slot is freed only once its result is committed, so a process
 * killed mid-batch sends again at most the deliveries in flight (<= concurrency), not the batch.
 * Results that complete together share one commit (one connection, not one per POST: the API's
 * requests share the pool).
 */
export async function dispatchBatch(deps: DispatchDeps, options: DispatchOptions): Promise<DispatchResult> {
  const leaseMs = options.leaseMs ?? deps.env.WORKER_LEASE_MS
  const claimed = await claimDueDeliveries(
    deps,
    options.owner,
    options.batchSize ?? 200,
    leaseMs,
    options.perEndpoint ?? deps.env.WEBHOOK_ENDPOINT_CONCURRENCY,
  )
  const result: DispatchResult = { claimed: claimed.length, delivered: 0, retrying: 0, failed: 0 }
  if (!claimed.length) return result
  const timeoutMs = options.timeoutMs ?? Math.min(TIMEOUT_MS, Math.floor(leaseMs / 2))
  const record = groupCommit<Outcome>((outcomes) => recordOutcomes(deps, outcomes, options))
  await mapLimit(claimed, options.concurrency ?? 50, async (d) => {
    const outcome = await attempt(deps, d, timeoutMs)
    await record(outcome)
    if (outcome.ok) result.delivered++
    else if (nextFor(outcome, deps.clock.now(), options)) result.retrying++
    else result.failed++
  })
  return result
}

/**
 * The worker's dispatcher: keeps up to `concurrency` POSTs in flight and claims more as each one is
 * recorded, instead of waiting for a whole batch. A receiver that never answers therefore holds
 * only its endpoint's few slots (PER_ENDPOINT) for its timeout, while every other account's
 * deliveries keep flowing, and the worker's tick (SMS submissions, carrier events) is never held
 * up by a slow receiver: `pump()` returns once its claim has started the POSTs.
 */
export function createDispatcher(deps: DispatchDeps, options: DispatchOptions) {
  const concurrency = options.concurrency ?? 50
  const leaseMs = options.leaseMs ?? deps.env.WORKER_LEASE_MS
  const timeoutMs = options.timeoutMs ?? Math.min(TIMEOUT_MS, Math.floor(leaseMs / 2))
  const record = groupCommit<Outcome>((outcomes) => recordOutcomes(deps, outcomes, options), RECORD_LINGER_MS)
  const claimBatch = Math.max(1, Math.ceil(concurrency / 10))
  let active = 0
  /** POSTs in flight on this instance, per endpoint and per account. */
  const inFlight = { endpoints: new Map<string, number>(), accounts: new Map<string, number>() }
  const add = (counts: Map<string, number>, key: string | null, n: number) => {
    if (key === null) return
    const left = (counts.get(key) ?? 0) + n
    if (left > 0) counts.set(key, left)
    else counts.delete(key)
  }
  let stopped = false
  let claiming: Promise<number> | null = null
  let again = false
  const settled = new Set<() => void>()

  function start(delivery: Claimed) {
    active++
    add(inFlight.endpoints, delivery.endpointId, 1)
    add(inFlight.accounts, delivery.accountId, 1)
    void attempt(deps, delivery, timeoutMs)
      .then(record)
      // Not recorded (the database went away): the lease runs out and the delivery is sent again.
      .catch((error) => deps.logger.warn({ err: error, deliveryId: delivery.id }, 'webhook attempt not recorded'))
      .finally(() => {
        active--
        add(inFlight.endpoints, delivery.endpointId, -1)
        add(inFlight.accounts, delivery.accountId, -1)
        // A claim is a few statements whatever its size: claim once a tenth of the slots are free
        // (or none is busy), not once per finished POST. The tick claims whatever is free each second.
        if (!stopped && (concurrency - active >= claimBatch || active === 0))
          pump().catch((error) => deps.logger.warn({ err: error }, 'webhook claim failed'))
        if (active === 0) for (const done of settled) done()
      })
  }

  /** Claims for the free slots until no call came in meanwhile; returns how many it started. */
  async function claimRounds(): Promise<number> {
    let started = 0
    do {
      again = false
      const free = concurrency - active
      if (free <= 0 || stopped) break
      const claimed = await claimDueDeliveries(
        deps,
        options.owner,
        free,
        leaseMs,
        options.perEndpoint ?? deps.env.WEBHOOK_ENDPOINT_CONCURRENCY,
        inFlight,
      )
      for (const delivery of claimed) start(delivery)
      started += claimed.length
    } while (again)
    return started
  }

  /** Claims due deliveries for the free slots and starts them; one claim at a time, calls meanwhile make it go round again. */
  function pump(): Promise<number> {
    if (claiming) {
      again = true
      return claiming
    }
    // Cleared in a `.finally` callback, which always runs after this assignment. Cleared inside
    // the async function instead, a call with every slot taken (which returns before its first
    // await) cleared it before it was set, and the settled promise then stood for a claim in
    // progress for ever: the dispatcher never claimed again.
    const run = claimRounds().finally(() => {
      if (claiming === run) claiming = null
    })
    claiming = run
    return run
  }

  return {
    pump,
    /** POSTs in flight now. */
    get active() {
      return active
    },
    /** Stops claiming; resolves once the POSTs in flight are recorded. */
    async stop() {
      stopped = true
      await claiming?.catch(() => undefined)
      if (active) await new Promise<void>((resolve) => settled.add(resolve))
    },
  }
}

export type Dispatcher = ReturnType<typeof createDispatcher>

/** When a failed delivery is tried next; null when it is finished (delivered, 410, no endpoint, schedule spent). */
function nextFor(o: Outcome, now: Date, options: DispatchOptions): Date | null {
  if (o.ok || o.gone || !o.delivery.endpoint) return null
  return nextAttemptAt(o.delivery.attempts + 1, now, options.random, o.retryAfterMs)
}

/** Writes attempts and the deliveries' new states (and a 410's disabling) in one transaction. */
async function recordOutcomes(
  deps: Pick<Deps, 'db' | 'dbKind' | 'clock' | 'logger' | 'directRead' | 'directTransaction'> & Partial<Pick<Deps, 'events'>>,
  outcomes: Outcome[],
  options: DispatchOptions,
) {
  const now = deps.clock.now()
  const at = directTimestamp(deps.dbKind, now)
  const disabled: { accountId: string; endpointId: string; reason: string }[] = []
  // Raw statements, like the claim's: they run once per commit of a few POSTs.
  const attempts = Prisma.sql`
    INSERT INTO "WebhookAttempt" ("id", "deliveryId", "attempt", "url", "statusCode", "durationMs", "error",
      "requestHeaders", "responseHeaders", "responseBody", "responseTruncated", "createdAt")
    VALUES ${Prisma.join(
      outcomes.map(
        (o) =>
          Prisma.sql`(${timeOrderedId()}, ${o.delivery.id}, ${o.delivery.attemptsTotal + 1}, ${o.url}, ${o.statusCode}, ${o.durationMs}, ${o.error},
            ${o.requestHeaders}, ${o.responseHeaders}, ${o.responseBody}, ${o.responseTruncated ? Prisma.sql`TRUE` : Prisma.sql`FALSE`}, ${at})`,
      ),
    )}`
  const delivered = outcomes.filter((o) => o.ok)
  const markDelivered = delivered.length
    ? Prisma.sql`
        UPDATE "WebhookDelivery"
        SET "state" = 'delivered', "attempts" = "attempts" + 1, "attemptsTotal" = "attemptsTotal" + 1, "finishedAt" = ${at}, "leaseUntil" = NULL, "lastError" = NULL
        WHERE "id" IN (${Prisma.join(delivered.map((o) => o.delivery.id))})`
    : null
  // The console's delivery log follows these (the webhookDeliveryUpdates subscription).
  const byAccount = new Map<string, string[]>()
  for (const o of outcomes) {
    const ids = byAccount.get(o.delivery.accountId)
    if (ids) ids.push(o.delivery.id)
    else byAccount.set(o.delivery.accountId, [o.delivery.id])
  }
  const events: WebhookDeliveryEvent[] = []
  for (const [accountId, ids] of byAccount)
    for (let i = 0; i < ids.length; i += MAX_EVENT_DELIVERY_IDS)
      events.push({ accountId, deliveryIds: ids.slice(i, i + MAX_EVENT_DELIVERY_IDS) })
  let published = false
  // The usual commit, every POST answered 2xx by a healthy endpoint: without Prisma's runtime,
  // whose CPU capped one instance's rate; on PostgreSQL one statement (deliveredAtOnce), on
  // SQLite the two statements in one transaction (Database.directTransaction).
  const healthy = outcomes.every((o) => o.ok && !o.delivery.endpoint?.failures && !o.delivery.endpoint?.pausedUntil)
  const atOnce = healthy && markDelivered ? await deliveredAtOnce(deps, attempts, markDelivered, events) : null
  if (atOnce) published = atOnce.published
  else if (healthy)
    await deps.directTransaction(async (run) => {
      await run(attempts)
      if (markDelivered) await run(markDelivered)
    })
  else
    await deps.db.$transaction(async (tx) => {
      await tx.$executeRaw(attempts)
      if (markDelivered) await tx.$executeRaw(markDelivered)
      for (const o of outcomes.filter((o) => !o.ok)) {
        const failures = o.delivery.attempts + 1
        const next = nextFor(o, now, options)
        await tx.webhookDelivery.update({
          where: { id: o.delivery.id },
          data: next
            ? { attempts: failures, attemptsTotal: o.delivery.attemptsTotal + 1, nextAttemptAt: next, leaseUntil: null, lastError: o.error }
            : {
                state: 'failed',
                attempts: failures,
                attemptsTotal: o.delivery.attemptsTotal + 1,
                finishedAt: now,
                leaseUntil: null,
                lastError: o.error,
              },
        })
      }
      const gone = [...new Set(outcomes.flatMap((o) => (o.gone && o.delivery.endpointId ? [o.delivery.endpointId] : [])))]
      if (gone.length)
        await tx.webhookEndpoint.updateMany({
          where: { id: { in: gone } },
          data: { disabledAt: now, disabledReason: 'it answered 410 Gone' },
        })
      // The endpoints' health: attempts that reached (or tried to reach) a live endpoint count.
      const byEndpoint = new Map<string, { snapshot: EndpointSnapshot & { accountId: string }; ok: number; failed: number }>()
      for (const o of outcomes) {
        const endpoint = o.delivery.endpoint
        if (!endpoint || endpoint.disabledAt || o.gone) continue
        const entry = byEndpoint.get(endpoint.id) ?? { snapshot: endpoint, ok: 0, failed: 0 }
        if (o.ok) entry.ok++
        else entry.failed++
        byEndpoint.set(endpoint.id, entry)
      }
      for (const [endpointId, { snapshot, ok, failed }] of byEndpoint) {
        const reason = await recordEndpointHealth(tx, endpointId, snapshot, { ok, failed }, now)
        if (reason) disabled.push({ accountId: snapshot.accountId, endpointId, reason })
      }
    })
  for (const { accountId, endpointId, reason } of disabled) deps.logger.warn({ accountId, endpointId, reason }, 'webhook endpoint disabled')
  // Together rather than one round trip after another: the slots of these POSTs wait for this.
  if (!published) await Promise.all(events.map((event) => publishQuietly(deps, TOPIC.webhookDelivery, event)))
  for (const o of outcomes.filter((o) => !o.ok))
    deps.logger.info({ deliveryId: o.delivery.id, status: o.statusCode, error: o.error }, 'webhook attempt failed')
}

/**
 * PostgreSQL: the attempts' INSERT, the deliveries' UPDATE and the delivery log's NOTIFYs
 * (EventBus.notification) as one statement, two data-modifying WITH queries and a SELECT of the
 * notifications: one round trip, atomic on its own, where BEGIN, INSERT, UPDATE, COMMIT and a
 * publish through Prisma were five (docs/performance.md). The other instances hear the events
 * when it commits, this one's subscribers right after. null where it does not apply (SQLite,
 * traces on: Database.directRead declines); the caller then writes and publishes its own way.
 */
async function deliveredAtOnce(
  deps: Pick<Deps, 'dbKind' | 'directRead' | 'logger'> & Partial<Pick<Deps, 'events'>>,
  attempts: Prisma.Sql,
  delivered: Prisma.Sql,
  events: WebhookDeliveryEvent[],
): Promise<{ published: boolean } | null> {
  if (deps.dbKind !== 'postgresql' || !deps.directRead) return null
  const bus = deps.events
  let notifications: { channel: string; text: string; deliverLocally(): void }[] | null = null
  if (bus?.notification)
    try {
      notifications = events.map((event) => bus.notification!(TOPIC.webhookDelivery, event))
    } catch (error) {
      // As publishQuietly: an event that cannot be sent is logged, the record goes on without it.
      deps.logger.warn({ err: error, topic: TOPIC.webhookDelivery }, 'live event not published')
      notifications = []
    }
  const select = notifications?.length ? notifySelect(notifications) : Prisma.sql`SELECT 1 AS "sent"`
  const rows = await deps.directRead(Prisma.sql`WITH "attempts" AS (${attempts}), "delivered" AS (${delivered}) ${select}`)
  if (!rows) return null
  for (const n of notifications ?? []) n.deliverLocally()
  return { published: notifications !== null }
}

/**
 * How long the continuous dispatcher lets finished attempts gather before it records them: POSTs
 * answered within these milliseconds share one commit instead of one each.
 */
export const RECORD_LINGER_MS = 3

/**
 * Group commit: `record(item)` resolves once a write including `item` has committed. One write
 * runs at a time; items arriving meanwhile go into the next one together. With `lingerMs`, the
 * first item of a group waits that long for others.
 */
function groupCommit<T>(write: (items: T[]) => Promise<void>, lingerMs = 0) {
  let queue: { item: T; done: (error?: unknown) => void }[] = []
  let running = false
  const drain = async () => {
    running = true
    if (lingerMs) await new Promise((resolve) => setTimeout(resolve, lingerMs))
    while (queue.length) {
      const group = queue
      queue = []
      try {
        await write(group.map((q) => q.item))
        for (const q of group) q.done()
      } catch (error) {
        for (const q of group) q.done(error)
      }
    }
    running = false
  }
  return (item: T) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ item, done: (error) => (error === undefined ? resolve() : reject(error)) })
      if (!running) void drain()
    })
}

/** Batches until nothing is due or the time budget is spent (one worker tick). */
export async function dispatchDueDeliveries(deps: DispatchDeps, options: DispatchOptions & { budgetMs?: number }): Promise<DispatchResult> {
  const total: DispatchResult = { claimed: 0, delivered: 0, retrying: 0, failed: 0 }
  const started = Date.now()
  const batchSize = options.batchSize ?? 200
  for (;;) {
    const r = await dispatchBatch(deps, options)
    total.claimed += r.claimed
    total.delivered += r.delivered
    total.retrying += r.retrying
    total.failed += r.failed
    if (r.claimed < batchSize || Date.now() - started > (options.budgetMs ?? 5_000)) return total
  }
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++
        results[i] = await fn(items[i]!)
      }
    }),
  )
  return results
}
