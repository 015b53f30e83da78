import type { Prisma } from '../generated/sqlite/client.js'
import type { Db, DirectRead } from './client.js'

/** A raw statement's rows. */
export type Read = (statement: Prisma.Sql) => Promise<Record<string, unknown>[]>

/**
 * A raw statement's reader: directly (no Prisma runtime: Database.directRead), prepared on
 * PostgreSQL (for statements of a few fixed shapes, each parsed once per connection); where it
 * declines or fails, through Prisma, whose errors the service classifies (a busy or broken
 * database answers 503). Not for a write that must not run twice: a failed direct run is run again
 * through Prisma.
 */
export function readDirect({ db, directRead }: { db: Db; directRead?: DirectRead | undefined }): Read {
  return async (statement) => {
    let rows: Record<string, unknown>[] | undefined
    if (directRead) {
      try {
        rows = await directRead(statement, { prepared: true })
      } catch {
        rows = undefined
      }
    }
    return rows ?? (await db.$queryRaw<Record<string, unknown>[]>(statement))
  }
}
