import type pg from 'pg'
import { PrismaClient as SqliteClient, type Prisma } from '../generated/sqlite/client.js'
import { parseDatabaseUrl, type DatabaseKind } from './connection-url.js'
import { GENERIC_ROW_CHECKS } from './row-checks.js'
import { migrationsOf } from './migrate.js'
import type { SqliteTransactionConnection } from './sqlite-connection-lock.js'
import { tracingEnabled } from '../core/tracing.js'
import { DatabaseConnectionError, isDatabaseUnavailable } from '../core/database-faults.js'
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
  /** SQLite: true when another process committed since the last call (the credential watch's; see commitProbe). */
  commitProbe?: () => boolean
  /**
   * One raw statement outside a transaction without Prisma's runtime (`directReadOf`): SQLite on
   * Prisma's connection, PostgreSQL on its pool. Reads, and single self-contained writes such as
   * the webhook claim's `UPDATE … RETURNING` (as `$queryRaw` would run them).
   */
  directRead?: DirectRead
  /** A transaction of raw statements without Prisma's runtime (`directTransactionOf`). */
  directTransaction: DirectTransaction
  /**
   * The circuit breaker's probe (src/db/breaker.ts): resolves when the database answers `SELECT 1`
   * within `timeoutMs`. PostgreSQL: on a connection of its own, outside the pool.
   */
  probe(timeoutMs: number): Promise<void>
  /**
   * The breaker opened: every statement and connection wait on the database fails now, as a fault
   * (503), and so does every new one until `resume` (PostgreSQL, src/db/interruptible-pool.ts).
   * SQLite: nothing to interrupt; its one wait is the busy timeout.
   */
  interrupt(reason: string): void
  resume(): void
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

/** The configuration's defaults: what openDatabase uses for what its caller does not give. */
const defaultEnv = parseEnv({})
const defaultTimeouts = databaseTimeouts(defaultEnv)

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
const directTypesOf = (types: typeof pg.types) => ({
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === TIMESTAMP_OID) return (value: string) => `${value.replace(' ', 'T')}Z`
    if (oid === TIMESTAMPTZ_OID) return (value: string) => new Date(value).toISOString()
    return format === 'binary' ? types.getTypeParser(oid, 'binary') : types.getTypeParser(oid, 'text')
  },
})

/** A raw statement as Prisma.Sql gives it: `sql` with `?` placeholders (SQLite), `text` with `$n` (PostgreSQL). */
export type DirectQuery = { sql: string; text: string; values: unknown[] }
type Rows = Record<string, unknown>[]
/** One raw statement's rows outside a transaction without Prisma's client runtime (see Database.directRead), or undefined: then the caller goes through Prisma. */
export type DirectRead = (query: DirectQuery, options?: DirectReadOptions) => Rows | undefined | Promise<Rows | undefined>
export interface DirectReadOptions {
  /**
   * PostgreSQL: run it as a named prepared statement (`preparedName`), parsed once per connection.
   * For statements of a few fixed shapes run on every request (the contact list); not for texts
   * that vary with their values (an IN list of n parameters).
   */
  prepared?: boolean
}

/** Named prepared statements per process at most; a text past it runs unnamed (parsed each time). */
export const MAX_PREPARED_STATEMENTS = 200
const preparedNames = new Map<string, string>()
/**
 * The name of a statement text, the same for the life of the process (node-postgres prepares a
 * name once per connection and refuses one name for two texts), or undefined once
 * MAX_PREPARED_STATEMENTS names are given: every connection then holds at most that many.
 */
export function preparedName(text: string): string | undefined {
  let name = preparedNames.get(text)
  if (name === undefined && preparedNames.size < MAX_PREPARED_STATEMENTS) {
    name = `gw_${preparedNames.size + 1}`
    preparedNames.set(text, name)
  }
  return name
}

/**
 * The direct read of both targets (used for the contact list, whose statement is already raw SQL:
 * through `$queryRaw`, Prisma's runtime cost as much CPU as the database spent on it). It declines
 * (undefined) with traces on, so that Prisma's SQL spans show the statement, and for any value but
 * a string, a number or null, which the adapters would bind unchanged. The statement is reported
 * to the query log and metrics like Prisma's.
 */
function directReadOf(kind: DatabaseKind, run: DirectRead, options: Pick<OpenOptions, 'onQuery' | 'onQueryEvent'>): DirectRead {
  return async (query, readOptions) => {
    if (tracingEnabled) return undefined
    if (!query.values.every(isDirectValue)) return undefined
    const started = performance.now()
    const rows = await run(query, readOptions)
    if (!rows) return undefined
    reportQuery(kind, query, started, options)
    return rows
  }
}

/**
 * A timestamp as the adapter itself would bind it, sent as text: a bound Date costs Prisma about
 * three times a string, and a direct statement takes strings, numbers and null only. SQLite
 * stores ISO 8601 with "+00:00" (@prisma/adapter-better-sqlite3's format), so text comparisons
 * order as the times do; PostgreSQL reads the text into its timestamp(3) column, where the zone
 * suffix of a UTC time changes nothing.
 */
export const directTimestamp = (kind: DatabaseKind, date: Date) =>
  kind === 'sqlite' ? date.toISOString().replace('Z', '+00:00') : date.toISOString()

/** What both drivers bind alike, so that a direct statement means what it means through Prisma. */
const isDirectValue = (value: unknown) => value === null || typeof value === 'string' || typeof value === 'number'

/** Runs one raw statement of a transaction and answers its rows (RETURNING rows for a write; SQLite integers as bigint). */
export type DirectStatement = (query: DirectQuery) => Promise<Rows>
/**
 * Runs `body` in one transaction; it commits when `body` resolves and rolls back when it throws.
 * `budget` bounds the wait for its turn and its run on SQLite (as Prisma's interactive transaction
 * bounds its own, the fallback's); on PostgreSQL's direct path each statement is bounded by
 * `statement_timeout` instead.
 */
export type DirectTransaction = <T>(body: (run: DirectStatement) => Promise<T>, budget?: TransactionBudget) => Promise<T>
/** How long a transaction may run, and wait for its turn (Prisma's `timeout` and `maxWait`). */
export type TransactionBudget = { timeout: number; maxWait: number }

/**
 * A transaction of raw statements through Prisma (`$queryRawUnsafe` in `$transaction`): what
 * `directTransactionOf` falls back to with traces on, so that Prisma's SQL spans show the statements.
 * `opening` runs first (PostgreSQL's fallback: GENERIC_ROW_CHECKS, as the direct path opens).
 */
export function prismaTransaction(prisma: Db, kind: DatabaseKind, opening?: string): DirectTransaction {
  return (body, budget) =>
    prisma.$transaction(async (tx) => {
      if (opening) await tx.$executeRawUnsafe(opening)
      return body((q) => tx.$queryRawUnsafe<Rows>(kind === 'sqlite' ? q.sql : q.text, ...q.values))
    }, budget)
}

/** A raw statement's rows on the transaction's connection. */
type RawRun = (query: DirectQuery) => Rows | Promise<Rows>
/** How a target opens its transaction around `body` and hands it its connection's raw runner. */
type OpenTransaction = <T>(body: (run: RawRun) => Promise<T>, budget?: TransactionBudget) => Promise<T>

/**
 * The direct transaction of both targets (used for the contact writes, src/messaging/upsert-contacts.ts,
 * whose statements are already raw SQL). Through `$queryRaw` each statement's bound values went
 * through Prisma's query compiler: a chunk of 1,000 contacts is one JSON text of about 400 kB,
 * serialised into the compiler's request, copied into its Wasm memory and back, which cost more
 * CPU than the database spent and kept tens of MiB after the request. With traces on it goes
 * through Prisma (`prismaTransaction`), so that Prisma's SQL spans show the statements. Values
 * must be strings, numbers or null (what both drivers bind alike); anything else is a bug.
 */
function directTransactionOf(
  kind: DatabaseKind,
  open: OpenTransaction,
  fallback: DirectTransaction,
  options: Pick<OpenOptions, 'onQuery' | 'onQueryEvent'>,
): DirectTransaction {
  return (body, budget) => {
    if (tracingEnabled) return fallback(body, budget)
    return open(
      (raw) =>
        body(async (query) => {
          for (const value of query.values) if (!isDirectValue(value)) throw new TypeError(`not a direct value: ${typeof value}`)
          const started = performance.now()
          const rows = await raw(query)
          reportQuery(kind, query, started, options)
          return rows
        }),
      budget,
    )
  }
}

/** A direct statement in the query log and the metrics, as Prisma reports its own. */
function reportQuery(kind: DatabaseKind, query: DirectQuery, started: number, options: Pick<OpenOptions, 'onQuery' | 'onQueryEvent'>) {
  const logged = kind === 'sqlite' ? query.sql : query.text
  options.onQuery?.(logged)
  options.onQueryEvent?.({ query: logged, duration: performance.now() - started })
}

/**
 * PostgreSQL: our own BEGIN and COMMIT on a connection of the pool Prisma uses. After a fault
 * (isDatabaseUnavailable) the connection's state is unknown, so it is dropped, which ends the
 * transaction on the server; after any other error it is rolled back and goes back to the pool.
 */
function poolTransaction(pool: pg.Pool, directTypes: ReturnType<typeof directTypesOf>): OpenTransaction {
  return async (body) => {
    const client = await pool.connect().catch((error: unknown) => {
      throw asConnectionError(error)
    })
    let drop: Error | undefined
    try {
      // The session plans every statement for its values (plan_cache_mode, below), and so it would
      // plan again each check that a foreign key runs for each row written: 20 µs a row, 450 ms of a
      // 10,000-contact add-contacts' 600 ms membership INSERT. The transaction's own statements are
      // unnamed, planned for their values whatever the mode; `auto` lets the checks (and the triggers'
      // statements) use the generic plan a key look-up needs (src/db/row-checks.ts). One round trip with the BEGIN.
      await client.query(`BEGIN; ${GENERIC_ROW_CHECKS}`)
      const result = await body(async ({ text, values }) => (await client.query({ text, values, types: directTypes })).rows as Rows)
      await client.query('COMMIT')
      return result
    } catch (error) {
      const fault = asConnectionError(error)
      if (isDatabaseUnavailable(fault)) drop = fault as Error
      else
        await client.query('ROLLBACK').catch((rollbackError: Error) => {
          drop = rollbackError
        })
      throw fault
    } finally {
      client.release(drop)
    }
  }
}

/** Socket errors node-postgres passes on as they are (the adapter would wrap them for Prisma). */
const SOCKET_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE'])
function asConnectionError(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && SOCKET_ERRORS.has(code)
    ? new DatabaseConnectionError(`database connection: ${code}`, { cause: error })
    : error
}

export interface OpenOptions {
  /** Receives every SQL statement Prisma sends (tests count them). */
  onQuery?: (sql: string) => void
  /** Receives every query event with its duration in milliseconds (metrics). */
  onQueryEvent?: (event: { query: string; duration: number }) => void
  /** PostgreSQL pool size per instance. */
  poolSize?: number
  timeouts?: Partial<DatabaseTimeouts>
  /** SQLite: the connection's page cache in MiB (SQLITE_CACHE_MIB; default 8). */
  sqliteCacheMib?: number
}

export async function openDatabase(url: string, options: OpenOptions = {}): Promise<Database> {
  const target = parseDatabaseUrl(url)
  const log = options.onQuery || options.onQueryEvent ? [{ emit: 'event' as const, level: 'query' as const }] : []
  const timeouts = { ...defaultTimeouts, ...options.timeouts }
  // maxWait: starting a transaction waits for a pool slot no longer than a plain query does.
  const transactionOptions = { timeout: timeouts.transactionMs, maxWait: timeouts.connectMs }
  let prisma: Db
  let probe: (() => boolean) | undefined
  let commits: (() => boolean) | undefined
  let directRead: DirectRead | undefined
  let directTransaction: DirectTransaction
  // Prisma's $disconnect leaves a pg.Pool handed to its adapter open: its idle connections kept a
  // finished CLI command alive for DB_IDLE_TIMEOUT_MS (10 s). Closing ends the pool too.
  let endPool = async () => {}
  let probeDatabase: (timeoutMs: number) => Promise<void>
  let interrupt: (reason: string) => void = () => {}
  let resume = () => {}
  if (target.kind === 'sqlite') {
    const cacheMib = options.sqliteCacheMib ?? defaultEnv.SQLITE_CACHE_MIB
    if (!Number.isInteger(cacheMib) || cacheMib < 1) throw new Error(`sqliteCacheMib: a whole number of MiB, at least 1 (got ${cacheMib})`)
    // Loaded here, as pg is below: a PostgreSQL start never loads better-sqlite3 (native code).
    const { CachingPrismaBetterSQLite3, commitProbe, revocationProbe, sqliteRows } = await import('./sqlite-statement-cache.js')
    // Compiled statements are reused across calls (src/db/sqlite-statement-cache.ts).
    // The page cache lives in this process, where PostgreSQL's lives in the server: 8 MiB by default,
    // half of better-sqlite3's 16 (docs/operations.md, "Memory").
    const adapter = new CachingPrismaBetterSQLite3({ url: target.file!, timeout: timeouts.sqliteBusyMs }, cacheMib)
    probe = revocationProbe(adapter)
    commits = commitProbe(adapter)
    // A direct statement (the webhook claim is a write) waits for an open transaction as Prisma's do.
    directRead = directReadOf('sqlite', ({ sql, values }) => adapter.lock.exclusive(() => sqliteRows(adapter, sql, values)), options)
    prisma = new SqliteClient({ adapter, log, transactionOptions })
    // Statements of a transaction's own callback are not held up by the connection lock.
    const transaction = prisma.$transaction.bind(prisma) as (...args: unknown[]) => Promise<unknown>
    ;(prisma as unknown as { $transaction: typeof transaction }).$transaction = (...args) =>
      adapter.lock.inTransaction(() => transaction(...args))
    const db = prisma
    // The service's own BEGIN IMMEDIATE … COMMIT on this one connection, in its turn under the
    // connection lock (src/db/sqlite-connection-lock.ts), without Prisma's interactive transaction.
    // BEGIN and COMMIT are in the query log (Prisma's adapter ran its BEGIN unlogged).
    const connection: SqliteTransactionConnection = {
      control(sql) {
        const client = adapter.client
        if (!client) throw new Error('the SQLite connection is not open')
        const started = performance.now()
        client.prepare(sql).bind([]).run()
        reportQuery('sqlite', { sql, text: sql, values: [] }, started, options)
      },
      inTransaction: () => adapter.client?.inTransaction ?? false,
    }
    const open: OpenTransaction = async (body, budget) => {
      if (!adapter.client) await db.$connect()
      return adapter.lock.transaction(
        connection,
        (statement) =>
          body(({ sql, values }) =>
            statement(() => {
              const rows = sqliteRows(adapter, sql, values)
              if (!rows) throw new Error('the SQLite connection is not open')
              return rows
            }),
          ),
        { timeoutMs: budget?.timeout ?? transactionOptions.timeout, maxWaitMs: budget?.maxWait ?? transactionOptions.maxWait },
      )
    }
    directTransaction = directTransactionOf('sqlite', open, prismaTransaction(prisma, 'sqlite'), options)
    // WAL (set by the migrator, persistent) with NORMAL sync: durable at checkpoints, much faster commits.
    await prisma.$executeRawUnsafe('PRAGMA synchronous = NORMAL')
    probeDatabase = async () => {
      await db.$queryRawUnsafe('SELECT 1')
    }
  } else {
    // Loaded here, not at the top: a SQLite start (the default) never parses pg, its Prisma adapter
    // or the PostgreSQL client (docs/operations.md, "Start-up").
    const [{ default: pg }, { PrismaPg }, { PrismaClient: PostgresClient }, { makeInterruptible, probeConnection }] = await Promise.all([
      import('pg'),
      import('@prisma/adapter-pg'),
      import('../generated/postgresql/client.js'),
      import('./interruptible-pool.js'),
    ])
    const directTypes = directTypesOf(pg.types)
    const session = {
      connectionString: target.connectionString,
      // Raw statements (readiness, the webhook claim) resolve unqualified names in the same schema.
      // statement_timeout: the server cancels a runaway statement (57014) and frees its locks.
      // jit=off: every statement here is a short OLTP one, but a plan whose cost is high on paper (the
      // far branch of a deep page, which never runs) made PostgreSQL compile it, 10 ms each time:
      // the last page of a million contacts took 12 ms with JIT and 2 ms without.
      // plan_cache_mode: a prepared statement (the contact list's, DirectReadOptions) is planned for
      // its values every time, as an unnamed one is; what preparing saves is the parse. A generic
      // plan would price LIMIT $n at a tenth of the list, and a page's plan hangs on its numbers.
      // The mode also reaches the check a foreign key runs for each row written, planned again a
      // row: a transaction that writes many such rows opens with `auto` instead (src/db/row-checks.ts:
      // the direct transaction, a group's send, a channel's import). What is left: statements of a
      // row or a few, and the sends written together outside a transaction (up to 100 a statement,
      // about 50 µs a send, where a transaction would add two round trips; docs/performance.md,
      // "Foreign key checks planned once, beyond the direct transaction").
      // max_parallel_workers_per_gather=0: no parallel plans. The list's forward branch of a page past
      // the middle is priced as a sort of the whole account, which PostgreSQL may hand to parallel
      // workers; it starts them before the branch's one-time filter says the branch never runs: the
      // last page of a million took 5 ms instead of 0.5. Parallel workers would only take the other
      // requests' cores.
      options: `-c search_path="${target.schema!.replace(/"/g, '""')}" -c statement_timeout=${timeouts.statementMs} -c jit=off -c plan_cache_mode=force_custom_plan -c max_parallel_workers_per_gather=0`,
      keepAlive: true,
    }
    const pool = new pg.Pool({
      ...session,
      max: options.poolSize ?? 10,
      // One connection stays open through quiet minutes (the idle timeout closes only those above
      // it), as the breaker's probe kept one open when it ran on the pool: the first request after
      // a pause does not pay a new connection (docs/performance.md).
      min: 1,
      // Covers both opening a connection and waiting for a free one in a full pool.
      connectionTimeoutMillis: timeouts.connectMs,
      // A frozen server never answers: the client stops waiting and the pool drops the connection.
      query_timeout: timeouts.statementMs + QUERY_TIMEOUT_MARGIN_MS,
      idleTimeoutMillis: timeouts.idleMs,
    })
    // An idle connection that breaks (server restart) is dropped by the pool; without a listener
    // its 'error' event would crash the process.
    pool.on('error', () => {})
    // Before anything holds the pool: its connect is wrapped (pool.query and the adapter use it).
    ;({ interrupt, resume } = makeInterruptible(pool))
    // The pool's first connection opens now, while the app is built, rather than in the first
    // statement (the first /readyz of a start). A failure is left to the statements and readiness to report.
    pool.connect().then(
      (client) => client.release(),
      () => {},
    )
    const prober = probeConnection(session)
    probeDatabase = prober.probe
    endPool = async () => {
      await prober.close()
      if (!pool.ended) await pool.end()
    }
    directRead = directReadOf(
      'postgresql',
      async ({ text, values }, read) =>
        (await pool.query({ name: read?.prepared ? preparedName(text) : undefined, text, values, types: directTypes })).rows as Rows,
      options,
    )
    const adapter = new PrismaPg(pool, { schema: target.schema })
    prisma = new PostgresClient({ adapter, log, transactionOptions }) as unknown as Db
    directTransaction = directTransactionOf(
      'postgresql',
      poolTransaction(pool, directTypes),
      prismaTransaction(prisma, 'postgresql', GENERIC_ROW_CHECKS),
      options,
    )
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
    commitProbe: commits,
    directRead,
    directTransaction,
    probe: probeDatabase,
    interrupt,
    resume,
  }
}
