import { PrismaBetterSQLite3 } from '@prisma/adapter-better-sqlite3'
import { PrismaPg } from '@prisma/adapter-pg'
import pg from 'pg'
import { PrismaClient as SqliteClient, type Prisma } from '../generated/sqlite/client.js'
import { PrismaClient as PostgresClient } from '../generated/postgresql/client.js'
import { parseDatabaseUrl, type DatabaseKind } from './connection-url.js'
import { migrationsOf } from './migrate.js'

/**
 * Both targets are generated from one datamodel, so their clients have the same API;
 * the SQLite client's type serves as the one both are used through.
 */
export type Db = SqliteClient
export type Tx = Prisma.TransactionClient

export interface Database {
  prisma: Db
  kind: DatabaseKind
  /** true when the database answers and every checked-in migration is applied. */
  ready(): Promise<boolean>
  close(): Promise<void>
}

export interface OpenOptions {
  /** Receives every SQL statement Prisma sends (tests count them). */
  onQuery?: (sql: string) => void
  /** Receives every query event with its duration in milliseconds (metrics). */
  onQueryEvent?: (event: { query: string; duration: number }) => void
  /** PostgreSQL pool size per instance. */
  poolSize?: number
}

export async function openDatabase(url: string, options: OpenOptions = {}): Promise<Database> {
  const target = parseDatabaseUrl(url)
  const log = options.onQuery || options.onQueryEvent ? [{ emit: 'event' as const, level: 'query' as const }] : []
  let prisma: Db
  if (target.kind === 'sqlite') {
    const adapter = new PrismaBetterSQLite3({ url: target.file!, timeout: 10_000 })
    prisma = new SqliteClient({ adapter, log })
    // WAL (set by the migrator, persistent) with NORMAL sync: durable at checkpoints, much faster commits.
    await prisma.$executeRawUnsafe('PRAGMA synchronous = NORMAL')
  } else {
    const pool = new pg.Pool({
      connectionString: target.connectionString,
      max: options.poolSize ?? 10,
      // Raw statements (readiness, the webhook claim) resolve unqualified names in the same schema.
      options: `-c search_path="${target.schema!.replace(/"/g, '""')}"`,
    })
    const adapter = new PrismaPg(pool, { schema: target.schema })
    prisma = new PostgresClient({ adapter, log }) as unknown as Db
  }
  if (options.onQuery) {
    const onQuery = options.onQuery
    ;(prisma as unknown as { $on(e: 'query', cb: (ev: { query: string }) => void): void }).$on('query', (ev) => onQuery(ev.query))
  }
  if (options.onQueryEvent) (prisma as unknown as { $on(e: 'query', cb: (ev: { query: string; duration: number }) => void): void }).$on('query', options.onQueryEvent)
  const expected = migrationsOf(target.kind).map((m) => m.name)
  return {
    prisma,
    kind: target.kind,
    async ready() {
      try {
        const rows = await prisma.$queryRawUnsafe<{ migration_name: string }[]>(
          `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
        )
        const applied = new Set(rows.map((r) => r.migration_name))
        return expected.every((name) => applied.has(name))
      } catch {
        return false
      }
    },
    close: () => prisma.$disconnect(),
  }
}
