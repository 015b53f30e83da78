import { PrismaBetterSQLite3 } from '@prisma/adapter-better-sqlite3'
import type BetterSqlite3 from 'better-sqlite3'
import { SqliteConnectionLock } from './sqlite-connection-lock.js'

type SqlDriverAdapter = Awaited<ReturnType<PrismaBetterSQLite3['connect']>>

/** Distinct SQL texts kept prepared per connection; the service sends a few dozen. */
export const STATEMENT_CACHE_SIZE = 256

/**
 * Prisma's better-sqlite3 adapter prepares every statement again on every call
 * (`client.prepare(sql).bind(args)`), and preparing a list page costs as much as running it. This
 * factory hands the adapter a connection whose `prepare` answers from a per-connection cache of
 * compiled statements, least recently used out past `size`.
 *
 * A better-sqlite3 statement can be bound only once, so the cache returns a small view that keeps
 * the arguments and passes them on each call, with the members the adapter uses: `bind`, `reader`,
 * `run`, `columns`, `raw().all()`. Statements stay valid across schema changes (SQLite recompiles
 * a prepared statement whose schema changed), and a connection runs one statement at a time.
 * SQLite also recompiles one whose plan read a bound value, every time that parameter is bound
 * again: a lone `LIMIT ?` is one, so the pages write their LIMIT into the text (row-count.ts).
 */
export class CachingPrismaBetterSQLite3 extends PrismaBetterSQLite3 {
  /**
   * `pageCacheMib`: each connection's page cache (`PRAGMA cache_size`), held in this process's
   * memory; better-sqlite3's build defaults it to 16 MiB (docs/operations.md, "Memory").
   */
  constructor(
    config: ConstructorParameters<typeof PrismaBetterSQLite3>[0],
    private readonly pageCacheMib: number,
    private readonly size = STATEMENT_CACHE_SIZE,
  ) {
    super(config)
  }

  /** The connection Prisma uses, once it has connected: for synchronous probes between its statements. */
  client: BetterSqlite3.Database | null = null

  /** Keeps statements outside a transaction out of another one's (src/db/sqlite-connection-lock.ts). */
  readonly lock = new SqliteConnectionLock()

  override async connect(): Promise<SqlDriverAdapter> {
    const adapter = await super.connect()
    this.client = (adapter as unknown as { client: BetterSqlite3.Database }).client
    // A negative cache_size is in KiB.
    this.client.pragma(`cache_size = -${this.pageCacheMib * 1024}`)
    cachePreparedStatements(this.client, this.size)
    this.lock.guard(adapter as unknown as Parameters<SqliteConnectionLock['guard']>[0])
    return adapter
  }
}

/**
 * Whether another process may have revoked an API key since the last call, for the key cache
 * (src/auth/api-key-cache.ts): SQLite has no notifications across processes, so the CLI's
 * revocation would otherwise reach a running server only when the cached entry expires.
 *
 * `PRAGMA data_version` on Prisma's own connection changes only when another connection commits
 * (our own writes leave it alone), and reading it (a cached prepared statement) is a synchronous call of a few microseconds.
 * Only then is the number of revoked keys counted: a revocation never ends, so a new one changes
 * that count, while other processes' ordinary writes leave the cache alone.
 */
export function revocationProbe(adapter: CachingPrismaBetterSQLite3): () => boolean {
  let client: BetterSqlite3.Database | null = null
  let version = -1
  let revoked = -1
  return () => {
    const db = adapter.client
    if (!db) return true
    // db.prepare is the cached one (cachePreparedStatements): bind, then raw().all() runs it.
    const [[current]] = db.prepare('PRAGMA data_version').bind([]).raw().all() as [[number]]
    if (db === client && current === version) return false
    client = db
    version = current
    const [[count]] = db.prepare('SELECT count(*) FROM "ApiKey" WHERE "revokedAt" IS NOT NULL').bind([]).raw().all() as [[number]]
    const changed = count !== revoked
    revoked = count
    return changed
  }
}

/**
 * Whether another connection (another process) committed since the last call: `PRAGMA data_version`
 * alone, for the credential watch (src/auth/credential-watch.ts), which then looks its few held
 * credentials up again. Its own state, apart from revocationProbe's, so neither swallows the other's change.
 */
export function commitProbe(adapter: CachingPrismaBetterSQLite3): () => boolean {
  let client: BetterSqlite3.Database | null = null
  let version = -1
  return () => {
    const db = adapter.client
    if (!db) return false
    const [[current]] = db.prepare('PRAGMA data_version').bind([]).raw().all() as [[number]]
    if (db === client && current === version) return false
    client = db
    version = current
    return true
  }
}

/**
 * A statement's rows as objects, run on Prisma's own connection with its cached prepared statements
 * (the same connection, so the same snapshot rules as a `$queryRaw`), without Prisma's client
 * runtime: client.ts `directReadOf` and `directTransactionOf` use it (the contact list and writes,
 * the webhook dispatcher). Undefined before Prisma connected.
 */
export function sqliteRows(adapter: CachingPrismaBetterSQLite3, sql: string, values: unknown[]): Record<string, unknown>[] | undefined {
  const db = adapter.client
  if (!db) return undefined
  const statement = db.prepare(sql).bind(values)
  // A write without RETURNING answers no rows (columns() would throw).
  if (!statement.reader) {
    statement.run()
    return []
  }
  const bound = statement as unknown as BoundStatement
  let names = bound.columnNames()
  const rows = bound.raw().all() as unknown[][]
  // Recompiled after a schema change, a `*` over a table answers another number of columns.
  if (rows.length > 0 && rows[0]!.length !== names.length) names = bound.columnNames(true)
  return rows.map((row) => {
    const object: Record<string, unknown> = {}
    for (let i = 0; i < names.length; i++) object[names[i]!] = row[i]
    return object
  })
}

type Args = unknown[]

/**
 * Each cached statement's result column names. columns() builds every column's metadata (table,
 * database, declared type) on each call: 8.7 µs for a contact page's 12 columns, about 2% of the
 * page on SQLite. The names come from the statement's text; a `*` over a table that a schema
 * change widens is caught by the rows' width (sqliteRows).
 */
const columnNamesOf = new WeakMap<BetterSqlite3.Statement, string[]>()

class BoundStatement {
  private args: Args = []
  constructor(private readonly statement: BetterSqlite3.Statement) {}
  get reader() {
    return this.statement.reader
  }
  bind(args: Args) {
    this.args = args
    return this
  }
  run() {
    return this.statement.run(this.args)
  }
  columns() {
    return this.statement.columns()
  }
  /** The result's column names, read once per prepared statement (again when `fresh`). */
  columnNames(fresh = false) {
    let names = fresh ? undefined : columnNamesOf.get(this.statement)
    if (!names) {
      names = this.statement.columns().map((c) => c.name)
      columnNamesOf.set(this.statement, names)
    }
    return names
  }
  raw() {
    this.statement.raw(true)
    return { all: () => this.statement.all(this.args) as unknown[] }
  }
}

/** Replaces `db.prepare` with a cached one (see CachingPrismaBetterSQLite3); returns the cache for tests. */
export function cachePreparedStatements(db: BetterSqlite3.Database, size = STATEMENT_CACHE_SIZE) {
  const prepare = db.prepare.bind(db)
  const cache = new Map<string, BetterSqlite3.Statement>()
  const cached = (sql: string) => {
    let statement = cache.get(sql)
    if (statement) {
      // Map order is insertion order: re-inserting marks it the most recently used.
      cache.delete(sql)
    } else {
      statement = prepare(sql)
      if (cache.size >= size) cache.delete(cache.keys().next().value!)
    }
    cache.set(sql, statement)
    return new BoundStatement(statement)
  }
  ;(db as unknown as { prepare: typeof cached }).prepare = cached
  return cache
}
