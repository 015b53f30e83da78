import type { Logger } from 'pino'
import { systemClock, type Clock } from './core/clock.js'
import { createLogger } from './core/logger.js'
import { createSandboxGateway } from './sms/sandbox-gateway.js'
import { createChannelCache } from './channel/queries.js'
import { prismaTransaction, type Database, type Db, type DirectRead, type DirectTransaction } from './db/client.js'
import type { DatabaseKind } from './db/connection-url.js'
import type { Env } from './core/env.js'
import type { SmsGateway } from './sms/gateway.js'
import type { EventBus } from './events/event-bus.js'
import { createEventBus } from './events/create-event-bus.js'
import { createApiKeyCache, type ApiKeyCache } from './auth/api-key-cache.js'

/** What domain functions may use. Resolvers, the REST layer, the CLI and the cron loop all pass the same. */
export interface Deps {
  db: Db
  dbKind: DatabaseKind
  env: Env
  clock: Clock
  logger: Logger
  /** Where outgoing SMS go (the sandbox unless a connector is configured). */
  gateway: SmsGateway
  /** Channel lookups and snapshots shared by requests for CHANNEL_CACHE_MS. */
  channelCache: ReturnType<typeof createChannelCache>
  /** Events for every instance on the database (PostgreSQL) or this process (SQLite). */
  events: EventBus
  /** Verified API keys remembered for API_KEY_CACHE_MS; revocations arrive through `events`. */
  apiKeyCache: ApiKeyCache
  /** SQLite: true when another process committed since the last call (Database.commitProbe; the credential watch's). */
  commitProbe?: () => boolean
  /** Hot raw reads without Prisma's runtime (Database.directRead). */
  directRead?: DirectRead
  /** Raw statements in one transaction without Prisma's runtime (Database.directTransaction). */
  directTransaction: DirectTransaction
}

/**
 * 30 s on both: revocations reach every process at once, on PostgreSQL through LISTEN/NOTIFY, on
 * SQLite (whose events stay in their process) through a per-request probe of the database file
 * (Database.revocationProbe). The time bounds only what nothing announces.
 */
export const DEFAULT_API_KEY_CACHE_MS = { postgresql: 30_000, sqlite: 30_000 } as const

/**
 * The one place Deps are assembled: server, CLI, tests and benchmarks pass overrides only.
 * The event bus created here is closed by `database.close()` (wrapped below), so every entry
 * point that closes its database (server shutdown, CLI, test kit) also ends the listening
 * connection without knowing about it. An overridden bus belongs to the caller.
 */
export function createDeps(
  database: Pick<Database, 'prisma' | 'kind' | 'revocationProbe' | 'directRead'> &
    Partial<Pick<Database, 'close' | 'directTransaction' | 'commitProbe'>>,
  env: Env,
  overrides: Partial<Omit<Deps, 'db' | 'dbKind' | 'env'>> = {},
): Deps {
  const logger = overrides.logger ?? createLogger(env.LOG_LEVEL)
  const events =
    overrides.events ??
    createEventBus({ databaseUrl: env.DATABASE_URL, db: database.prisma, logger, connectTimeoutMs: env.DB_CONNECT_TIMEOUT_MS })
  if (!overrides.events && database.close) {
    const closeDatabase = database.close
    database.close = async () => {
      await events.close()
      await closeDatabase()
    }
  }
  return {
    db: database.prisma,
    dbKind: database.kind,
    env,
    clock: overrides.clock ?? systemClock,
    logger,
    gateway: overrides.gateway ?? createSandboxGateway({ delayMs: env.SANDBOX_DELIVERY_DELAY_MS }),
    channelCache: overrides.channelCache ?? createChannelCache(env.CHANNEL_CACHE_MS),
    events,
    apiKeyCache:
      overrides.apiKeyCache ??
      createApiKeyCache({
        db: database.prisma,
        direct: database.directRead && { read: database.directRead, kind: database.kind },
        events,
        ttlMs: env.API_KEY_CACHE_MS ?? DEFAULT_API_KEY_CACHE_MS[database.kind],
        revocations: database.revocationProbe,
        clock: overrides.clock ?? systemClock,
      }),
    commitProbe: database.commitProbe,
    directRead: database.directRead,
    directTransaction: database.directTransaction ?? prismaTransaction(database.prisma, database.kind),
  }
}
