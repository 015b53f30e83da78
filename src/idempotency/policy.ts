/** How long an Idempotency-Key is remembered per account (the contract's 24 h). */
export const RETENTION_MS = 24 * 60 * 60 * 1000

/**
 * How long a running request holds its key before another may take it over. Short, so a key whose
 * request died with its process is usable again soon; a live request renews it (keep-lease.ts).
 */
export const LEASE_MS = 60_000

// Response headers that describe one transfer or one request, not the answer: never replayed.
const NOT_REPLAYED = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date', 'x-request-id', 'set-cookie'])

/** The headers kept with an answer to send again on a replay. */
export function replayableHeaders(headers: Headers): Record<string, string> {
  const kept: Record<string, string> = {}
  headers.forEach((value, name) => {
    if (!NOT_REPLAYED.has(name)) kept[name] = value
  })
  return kept
}

// GraphQL answers 200 even when the database failed; these codes mark such a server-side fault.
const FAULT_CODES = new Set(['INTERNAL', 'SERVICE_UNAVAILABLE'])

/**
 * Which answers are kept for replay. Every answer the handler gave, errors included (a 422 stays a
 * 422 on a retry, as with Stripe), except server faults: a 5xx, or a GraphQL answer carrying an
 * INTERNAL or SERVICE_UNAVAILABLE error. Those changed nothing (a failed request writes nothing), so
 * the key is released and a retry runs again and may succeed.
 */
export function isKeptAnswer(status: number, body: string, api: 'rest' | 'graphql'): boolean {
  if (status >= 500) return false
  if (api === 'rest') return true
  try {
    const parsed = JSON.parse(body) as { errors?: { extensions?: { code?: unknown } }[] }
    return !parsed.errors?.some((e) => FAULT_CODES.has(String(e?.extensions?.code)))
  } catch {
    return true
  }
}
