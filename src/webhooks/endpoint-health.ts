import type { Tx } from '../db/client.js'

/**
 * After this many failures in a row an endpoint is paused between claims. Attempts that fail
 * together (one commit of the dispatcher, as when a receiver stops answering every request in
 * flight) count as one: a burst of concurrent timeouts must not pause an endpoint for minutes.
 */
export const PAUSE_AFTER_FAILURES = 5
/** ...and only once its failures have lasted this long: a short burst (a stall, a restart) never pauses it. */
export const PAUSE_AFTER_MS = 60_000
/** The first pause; each further failure doubles it, up to MAX_PAUSE_MS. */
export const FIRST_PAUSE_MS = 5_000
export const MAX_PAUSE_MS = 10 * 60_000
/** An endpoint that has failed every attempt for this long is disabled (as Svix does after days). */
export const DISABLE_AFTER_MS = 5 * 24 * 60 * 60_000

export interface EndpointSnapshot {
  failures: number
  pausedUntil: Date | null
}

/** How long an endpoint with `failures` failures in a row is skipped by the claim. */
export function pauseFor(failures: number): number {
  if (failures < PAUSE_AFTER_FAILURES) return 0
  return Math.min(MAX_PAUSE_MS, FIRST_PAUSE_MS * 2 ** Math.min(20, failures - PAUSE_AFTER_FAILURES))
}

/**
 * Records what one endpoint's attempts (those of one commit) say about it: any 2xx makes it
 * healthy again; only failures add to its run, pause it once the run is long enough, and disable it
 * once the run is DISABLE_AFTER_MS old. Returns the reason when this disabled it.
 */
export async function recordEndpointHealth(
  tx: Tx,
  endpointId: string,
  snapshot: EndpointSnapshot,
  outcome: { ok: number; failed: number },
  now: Date,
) {
  if (outcome.ok) {
    if (snapshot.failures || snapshot.pausedUntil) {
      await tx.webhookEndpoint.updateMany({ where: { id: endpointId }, data: { failures: 0, failingSince: null, pausedUntil: null } })
    }
    return null
  }
  const current = await tx.webhookEndpoint.findUnique({
    where: { id: endpointId },
    select: { failures: true, failingSince: true, disabledAt: true },
  })
  if (!current || current.disabledAt) return null
  const failures = current.failures + 1
  const failingSince = current.failingSince ?? now
  const pause = now.getTime() - failingSince.getTime() >= PAUSE_AFTER_MS ? pauseFor(failures) : 0
  const disable = now.getTime() - failingSince.getTime() >= DISABLE_AFTER_MS
  const reason = disable ? `every attempt failed since ${failingSince.toISOString()}` : null
  await tx.webhookEndpoint.update({
    where: { id: endpointId },
    data: {
      failures,
      failingSince,
      pausedUntil: pause ? new Date(now.getTime() + pause) : null,
      ...(reason ? { disabledAt: now, disabledReason: reason } : {}),
    },
  })
  return reason
}
