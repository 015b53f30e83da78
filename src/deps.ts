import type { Logger } from 'pino'
import type { Clock } from './clock.js'
import type { Db } from './db/client.js'
import type { DatabaseKind } from './db/connection-url.js'
import type { Env } from './env.js'

/** What domain functions may use. Resolvers, the REST layer, the CLI and the cron loop all pass the same. */
export interface Deps {
  db: Db
  dbKind: DatabaseKind
  env: Env
  clock: Clock
  logger: Logger
}
