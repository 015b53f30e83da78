import type { Deps } from '../deps.js'
import { Prisma } from '../generated/sqlite/client.js'
import { applyStatusChange } from './record-status.js'
import { mapCarrierStatus } from './delivery-status.js'
import { publishStatusChanges, statusChanges } from '../live/status-events.js'

/**
 * Applies carrier events that have come due (the sandbox's delayed reports). Claimed with a lease
 * so that several instances never apply one twice; a claim left by a dead process is taken over
 * when its lease runs out.
 */
export async function applyDueCarrierEvents(
  deps: Pick<Deps, 'db' | 'dbKind' | 'clock' | 'env' | 'directTransaction'> & Partial<Pick<Deps, 'events' | 'logger'>>,
  owner: string,
  limit = 500,
): Promise<number> {
  const { db } = deps
  const now = deps.clock.now()
  const due = { dueAt: { lte: now }, OR: [{ leaseUntil: null }, { leaseUntil: { lt: now } }] }
  const candidates = await db.scheduledCarrierEvent.findMany({ where: due, orderBy: { dueAt: 'asc' }, take: limit, select: { id: true } })
  if (!candidates.length) return 0
  const token = `${owner}:${now.getTime()}:${Math.random().toString(36).slice(2)}`
  await db.scheduledCarrierEvent.updateMany({
    where: { id: { in: candidates.map((c) => c.id) }, ...due },
    data: { leaseOwner: token, leaseUntil: new Date(now.getTime() + deps.env.WORKER_LEASE_MS) },
  })
  const claimed = await db.scheduledCarrierEvent.findMany({ where: { leaseOwner: token } })
  for (const event of claimed) {
    const changes = statusChanges()
    // Applying the report and removing the event are one transaction: a crash between the two
    // would otherwise apply the report again after the lease (a second status row and webhook).
    await deps
      .directTransaction(async (run) => {
        const deleted = await run(
          Prisma.sql`DELETE FROM "ScheduledCarrierEvent" WHERE "id" = ${event.id} AND "leaseOwner" = ${token} RETURNING "id"`,
        )
        if (!deleted.length) return
        await applyStatusChange(
          { run, kind: deps.dbKind },
          event.messageId,
          {
            status: mapCarrierStatus(event.carrierStatus),
            carrierStatus: event.carrierStatus,
            carrierErrorCode: event.errorCode,
            mccmnc: event.mccmnc,
            at: deps.clock.now(),
          },
          changes,
        )
      })
      .then(() => publishStatusChanges(deps, changes))
      // The message is gone (account deleted): the event has nothing left to report.
      .catch(() => db.scheduledCarrierEvent.deleteMany({ where: { id: event.id } }))
  }
  return claimed.length
}
