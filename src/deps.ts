import type { Logger } from 'pino'
import { systemClock, type Clock } from './clock.js'
import { createLogger } from './logger.js'
import { createSandboxGateway } from './sms/sandbox-gateway.js'
import { createChannelCache } from './channel/queries.js'
import type { Db } from './db/client.js'
import type { DatabaseKind } from './db/connection-url.js'
import type { Env } from './env.js'
import type { SmsGateway } from './sms/gateway.js'

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
}

/** The one place Deps are assembled: server, CLI, tests and benchmarks pass overrides only. */
export function createDeps(
  database: { prisma: Db; kind: DatabaseKind },
  env: Env,
  overrides: Partial<Omit<Deps, 'db' | 'dbKind' | 'env'>> = {},
): Deps {
  return {
    db: database.prisma,
    dbKind: database.kind,
    env,
    clock: overrides.clock ?? systemClock,
    logger: overrides.logger ?? createLogger(env.LOG_LEVEL),
    gateway: overrides.gateway ?? createSandboxGateway({ delayMs: env.SANDBOX_DELIVERY_DELAY_MS }),
    channelCache: overrides.channelCache ?? createChannelCache(env.CHANNEL_CACHE_MS),
  }
}
