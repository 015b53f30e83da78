// Applies the checked-in migrations of the database's target on start.
// It keeps Prisma's own bookkeeping table (_prisma_migrations) and advisory lock id, so
// `prisma migrate deploy` and this runner agree about what is applied, and two instances
// starting at once on PostgreSQL apply each migration exactly once.
import { createHash, randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type Database from 'better-sqlite3'
import type pg from 'pg'
import { parseDatabaseUrl, type DatabaseKind } from './connection-url.js'

/** Prisma's own advisory lock id for migrations, so `prisma migrate deploy` and this runner exclude each other. */
export const PRISMA_ADVISORY_LOCK = 72707369

/** Prisma's bookkeeping table, as `prisma migrate deploy` creates it on each target. */
export const MIGRATIONS_TABLE: Record<DatabaseKind, string> = {
  sqlite: `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" TEXT PRIMARY KEY NOT NULL, "checksum" TEXT NOT NULL, "finished_at" DATETIME,
      "migration_name" TEXT NOT NULL, "logs" TEXT, "rolled_back_at" DATETIME,
      "started_at" DATETIME NOT NULL DEFAULT current_timestamp, "applied_steps_count" INTEGER UNSIGNED NOT NULL DEFAULT 0)`,
  postgresql: `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
        "id" VARCHAR(36) PRIMARY KEY NOT NULL, "checksum" VARCHAR(64) NOT NULL, "finished_at" TIMESTAMPTZ,
        "migration_name" VARCHAR(255) NOT NULL, "logs" TEXT, "rolled_back_at" TIMESTAMPTZ,
        "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(), "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`,
}
const prismaDir = fileURLToPath(new URL('../../prisma/', import.meta.url))

export interface Migration {
  name: string
  sql: string
  checksum: string
}

export function migrationsOf(kind: DatabaseKind): Migration[] {
  const dir = join(prismaDir, kind, 'migrations')
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, 'migration.sql'), 'utf8')
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') }
    })
}

/** Returns the names of the migrations it applied. */
export async function applyMigrations(url: string): Promise<string[]> {
  const target = parseDatabaseUrl(url)
  return target.kind === 'sqlite' ? migrateSqlite(target.file!) : migratePostgres(target.connectionString!, target.schema!)
}

/**
 * mkdir -p, one level at a time: Node's recursive mkdirSync spins forever on some paths it cannot
 * create (`/proc/nope`: start-up hung with no output), while a plain mkdir fails at once.
 */
function makeDirectory(path: string) {
  const missing: string[] = []
  for (let dir = path; !existsSync(dir); dir = dirname(dir)) {
    missing.unshift(dir)
    if (dirname(dir) === dir) break
  }
  for (const dir of missing) mkdirSync(dir)
}

const appliedIn = (table: string) => `SELECT migration_name FROM ${table} WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`

const allApplied = (migrations: Migration[], applied: Set<string> | null) => !!applied && migrations.every((m) => applied.has(m.name))

/** The names of the applied migrations, or null before the bookkeeping table exists. */
function appliedSqlite(db: Database.Database): Set<string> | null {
  const known = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_prisma_migrations'`).get()
  if (!known) return null
  return new Set(
    db
      .prepare<[], { migration_name: string }>(appliedIn('"_prisma_migrations"'))
      .all()
      .map((r) => r.migration_name),
  )
}

async function migrateSqlite(file: string): Promise<string[]> {
  if (file !== ':memory:') makeDirectory(dirname(file))
  // Loaded here: a PostgreSQL start never loads better-sqlite3 (native code).
  const { default: Sqlite } = await import('better-sqlite3')
  const db = new Sqlite(file, { timeout: 10_000 })
  try {
    db.pragma('journal_mode = WAL')
    const migrations = migrationsOf('sqlite')
    // The usual start: everything is applied already, and one read says so without a write lock.
    if (allApplied(migrations, appliedSqlite(db))) return []
    db.exec(MIGRATIONS_TABLE.sqlite)
    // Table rebuilds (DROP TABLE of a parent) would fire ON DELETE CASCADE with foreign keys on,
    // and the pragma is ignored inside a transaction: switch it off around the migrations and
    // check the keys before each commit instead.
    db.pragma('foreign_keys = OFF')
    const applied: string[] = []
    for (const m of migrations) {
      // IMMEDIATE takes the write lock first, so a second process waits and then sees the row.
      const run = db.transaction(() => {
        const done = db
          .prepare(`SELECT 1 FROM "_prisma_migrations" WHERE migration_name = ? AND finished_at IS NOT NULL AND rolled_back_at IS NULL`)
          .get(m.name)
        if (done) return false
        db.exec(m.sql)
        const broken = db.pragma('foreign_key_check') as unknown[]
        if (broken.length) throw new Error(`migration ${m.name} leaves ${broken.length} broken foreign keys`)
        db.prepare(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count) VALUES (?, ?, current_timestamp, ?, 1)`,
        ).run(randomUUID(), m.checksum, m.name)
        return true
      })
      if (run.immediate()) applied.push(m.name)
    }
    return applied
  } finally {
    db.close()
  }
}

async function migratePostgres(connectionString: string, schema: string): Promise<string[]> {
  // Loaded here: a SQLite start never parses pg (docs/operations.md, "Start-up").
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString })
  await client.connect()
  try {
    const quoted = `"${schema.replace(/"/g, '""')}"`
    const migrations = migrationsOf('postgresql')
    // The usual start: everything is applied already. One read says so, without the advisory lock
    // (another instance holding it for minutes while it migrates does not hold up this one's start
    // unless this one has something to apply). Anything missing goes the locked way below.
    if (allApplied(migrations, await appliedPostgres(client, quoted))) return []
    // Locked before anything else: even CREATE SCHEMA IF NOT EXISTS races between two starters.
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_ADVISORY_LOCK])
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`)
      await client.query(`SET search_path TO ${quoted}`)
      await client.query(MIGRATIONS_TABLE.postgresql)
      const { rows } = await client.query<{ migration_name: string }>(appliedIn('"_prisma_migrations"'))
      const done = new Set(rows.map((r) => r.migration_name))
      const applied: string[] = []
      for (const m of migrations) {
        if (done.has(m.name)) continue
        await client.query('BEGIN')
        try {
          // Generated scripts create "public"; the tables land in the search_path schema.
          await client.query(m.sql)
          await client.query(
            `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count) VALUES ($1, $2, now(), $3, 1)`,
            [randomUUID(), m.checksum, m.name],
          )
          await client.query('COMMIT')
        } catch (error) {
          await client.query('ROLLBACK')
          throw new Error(`migration ${m.name} failed: ${(error as Error).message}`, { cause: error })
        }
        applied.push(m.name)
      }
      return applied
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_ADVISORY_LOCK])
    }
  } finally {
    await client.end()
  }
}

/** SQLSTATEs of a schema (3F000) or a bookkeeping table (42P01) that does not exist yet. */
const NOT_YET_CREATED = new Set(['3F000', '42P01'])

/** The names of the applied migrations, or null before the schema or the bookkeeping table exists. */
async function appliedPostgres(client: pg.Client, quotedSchema: string): Promise<Set<string> | null> {
  try {
    const { rows } = await client.query<{ migration_name: string }>(appliedIn(`${quotedSchema}."_prisma_migrations"`))
    return new Set(rows.map((r) => r.migration_name))
  } catch (error) {
    if (NOT_YET_CREATED.has((error as { code?: string }).code ?? '')) return null
    throw error
  }
}
