import { PrismaPg } from '@prisma/adapter-pg'
import pg from 'pg'
import { PrismaClient as SqliteClient, type Prisma } from '../generated/sqlite/client.js'
import { PrismaClient as PostgresClient } from '../generated/postgresql/client.js'
import { parseDatabaseUrl, type DatabaseKind } from './connection-url.js'
import { migrationsOf } from './migrate.js'
import { CachingPrismaBetterSQLite3, revocationProbe, sqliteRows } from './sqlite-statement-cache.js'
import { tracingEnabled } from '../core/tracing.js'
import { parseEnv, type Env } from '../core/env.js'

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
  /**
   * SQLite: true when another process may have revoked an API key since the last call (synchronous,
   * microseconds; see revocationProbe). PostgreSQL tells every instance through LISTEN/NOTIFY instead.
   */
  revocationProbe?: () => boolean
  /** Raw read-only statements without Prisma's runtime (`directReadOf`): SQLite on Prisma's connection, PostgreSQL on its pool. */
  directRead?: DirectRead
}

/** Every wait on the database is bounded, so a stopped or frozen database answers 503, never hangs. */
export interface DatabaseTimeouts {
  connectMs: number
  statementMs: number
  idleMs: number
  transactionMs: number
  sqliteBusyMs: number
}

export function databaseTimeouts(env: Env): DatabaseTimeouts {
  return {
    connectMs: env.DB_CONNECT_TIMEOUT_MS,
    statementMs: env.DB_STATEMENT_TIMEOUT_MS,
    idleMs: env.DB_IDLE_TIMEOUT_MS,
    transactionMs: env.DB_TRANSACTION_TIMEOUT_MS,
    sqliteBusyMs: env.SQLITE_BUSY_TIMEOUT_MS,
  }
}

const defaultTimeouts = databaseTimeouts(parseEnv({}))

/**
 * The client gives up this much after statement_timeout: a live server cancels first (SQLSTATE
 * 57014, a clear error) and the client-side timer only fires when the server does not answer at all.
 */
const QUERY_TIMEOUT_MARGIN_MS = 1000

// Direct reads (`directReadOf`) on PostgreSQL answer as Prisma's raw queries do where it matters to their callers:
// a `timestamp(3)` column (UTC by the schema's convention) as ISO text with its zone, never a Date
// built in the process's local time zone (pg's default parser).
const TIMESTAMP_OID = 1114
const TIMESTAMPTZ_OID = 1184
const directTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === TIMESTAMP_OID) return (value: string) => `${value.replace(' ', 'T')}Z`
    if (oid === TIMESTAMPTZ_OID) return (value: string) => new Date(value).toISOString()
    return format === 'binary' ? pg.types.getTypeParser(oid, 'binary') : pg.types.getTypeParser(oid, 'text')
  },
}

/** A raw statement as Prisma.Sql gives it: `sql` with `?` placeholders (SQLite), `text` with `$n` (PostgreSQL). */
export type DirectQuery = { sql: string; text: string; values: unknown[] }
type Rows = Record<string, unknown>[]
/** A raw read-only statement's rows without Prisma's client runtime, or undefined: then the caller goes through Prisma. */
export type DirectRead = (query: DirectQuery) => Rows | undefined | Promise<Rows | undefined>

/**
 * The direct read of both targets (used for the contact list, whose statement is already raw SQL:
 * through `$queryRaw`, Prisma's runtime cost as much CPU as the database spent on it). It declines
 * (undefined) with traces on, so that Prisma's SQL spans show the statement, and for any value but
 * a string, a number or null, which the adapters would bind unchanged. The statement is reported
 * to the query log and metrics like Prisma's.
 */
function directReadOf(kind: DatabaseKind, run: DirectRead, options: Pick<OpenOptions, 'onQuery' | 'onQueryEvent'>): DirectRead {
  return async (query) => {
    if (tracingEnabled) return undefined
    for (const value of query.values) if (value !== null && typeof value !== 'string' && typeof value !== 'number') return undefined
    const started = performance.now()
    const rows = await run(query)
    if (!rows) return undefined
    const logged = kind === 'sqlite' ? query.sql : query.text
    options.onQuery?.(logged)
    options.onQueryEvent?.({ query: logged, duration: performance.now() - started })
    return rows
  }
}

export interface OpenOptions {
  /** Receives every SQL statement Prisma sends (tests count them). */
  onQuery?: (sql: string) => void
  /** Receives every query event with its duration in milliseconds (metrics). */
  onQueryEvent?: (event: { query: string; duration: number }) => void
  /** PostgreSQL pool size per instance. */
  poolSize?: number
  timeouts?: Partial<DatabaseTimeouts>
}

export async function openDatabase(url: string, options: OpenOptions = {}): Promise<Database> {
  const target = parseDatabaseUrl(url)
  const log = options.onQuery || options.onQueryEvent ? [{ emit: 'event' as const, level: 'query' as const }] : []
  const timeouts = { ...defaultTimeouts, ...options.timeouts }
  // maxWait: starting a transaction waits for a pool slot no longer than a plain query does.
  const transactionOptions = { timeout: timeouts.transactionMs, maxWait: timeouts.connectMs }
  let prisma: Db
  let probe: (() => boolean) | undefined
  let directRead: DirectRead | undefined
  // Prisma's $disconnect leaves a pg.Pool handed to its adapter open: its idle connections kept a
  // finished CLI command alive for DB_IDLE_TIMEOUT_MS (10 s). Closing ends the pool too.
  let endPool = async () => {}
  if (target.kind === 'sqlite') {
    // Compiled statements are reused across calls (src/db/sqlite-statement-cache.ts).
    const adapter = new CachingPrismaBetterSQLite3({ url: target.file!, timeout: timeouts.sqliteBusyMs })
    probe = revocationProbe(adapter)
    directRead = directReadOf('sqlite', ({ sql, values }) => sqliteRows(adapter, sql, values), options)
    prisma = new SqliteClient({ adapter, log, transactionOptions })
    // WAL (set by the migrator, persistent) with NORMAL sync: durable at checkpoints, much faster commits.
    await prisma.$executeRawUnsafe('PRAGMA synchronous = NORMAL')
  } else {
    const pool = new pg.Pool({
      connectionString: target.connectionString,
      max: options.poolSize ?? 10,
      // Raw statements (readiness, the webhook claim) resolve unqualified names in the same schema.
      // statement_timeout: the server cancels a runaway statement (57014) and frees its locks.
      options: `-c search_path="${target.schema!.replace(/"/g, '""')}" -c statement_timeout=${timeouts.statementMs}`,
      // Covers both opening a connection and waiting for a free one in a full pool.
      connectionTimeoutMillis: timeouts.connectMs,
      // A frozen server never answers: the client stops waiting and the pool drops the connection.
      query_timeout: timeouts.statementMs + QUERY_TIMEOUT_MARGIN_MS,
      idleTimeoutMillis: timeouts.idleMs,
      keepAlive: true,
    })
    // An idle connection that breaks (server restart) is dropped by the pool; without a listener
    // its 'error' event would crash the process.
    pool.on('error', () => {})
    endPool = async () => {
      if (!pool.ended) await pool.end()
    }
    directRead = directReadOf(
      'postgresql',
      async ({ text, values }) => (await pool.query({ text, values, types: directTypes })).rows as Rows,
      options,
    )
    const adapter = new PrismaPg(pool, { schema: target.schema })
    prisma = new PostgresClient({ adapter, log, transactionOptions }) as unknown as Db
  }
  if (options.onQuery) {
    const onQuery = options.onQuery
    ;(prisma as unknown as { $on(e: 'query', cb: (ev: { query: string }) => void): void }).$on('query', (ev) => onQuery(ev.query))
  }
  if (options.onQueryEvent)
    (prisma as unknown as { $on(e: 'query', cb: (ev: { query: string; duration: number }) => void): void }).$on(
      'query',
      options.onQueryEvent,
    )
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
    async close() {
      await prisma.$disconnect()
      await endPool()
    },
    revocationProbe: probe,
    directRead,
  }
}
