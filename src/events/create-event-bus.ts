import type { Logger } from 'pino'
import type { Db } from '../db/client.js'
import { parseDatabaseUrl } from '../db/connection-url.js'
import { channelNameFor } from './channel-name.js'
import type { EventBus } from './event-bus.js'
import { createInProcessBus } from './in-process-bus.js'
import { createPostgresBus } from './postgres-bus.js'

/** PostgreSQL: LISTEN/NOTIFY across every instance on the schema. SQLite: this process only. */
export function createEventBus({
  databaseUrl,
  db,
  logger,
  connectTimeoutMs,
}: {
  databaseUrl: string
  db: Db
  logger: Logger
  connectTimeoutMs?: number
}): EventBus {
  const target = parseDatabaseUrl(databaseUrl)
  if (target.kind === 'sqlite') return createInProcessBus(logger)
  return createPostgresBus({
    connectionString: target.connectionString!,
    channel: channelNameFor(target.schema!),
    db,
    logger,
    connectTimeoutMs,
  })
}
