import { createServer, type AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import Database from 'better-sqlite3'
import { schemaClient, targets, type TestTarget } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { waitFor } from './kit/server-process.js'
import { applyMigrations, migrationsOf, MIGRATIONS_TABLE, PRISMA_ADVISORY_LOCK, type Migration } from '../src/db/migrate.js'
import { openDatabase } from '../src/db/client.js'

describe.each(targets)('database on $name', (target) => {
  const kit = useKit(target)

  it('applies every migration once, even when two instances start together', async () => {
    const db = await target.create()
    try {
      const [a, b] = await Promise.all([applyMigrations(db.url), applyMigrations(db.url)])
      expect([...a, ...b].sort()).toEqual(migrationsOf(target.name).map((m) => m.name))
      expect(await applyMigrations(db.url)).toEqual([])
      expect(await readyOn(db.url)).toBe(true)
    } finally {
      await db.drop()
    }
  })

  it('with every migration applied, starts while another session holds the migration lock', async () => {
    // The locked way waits for PostgreSQL's advisory lock and SQLite's write lock: a start that
    // finishes while another session holds them took neither (src/db/migrate.ts, the usual start).
    const db = await target.create()
    try {
      await applyMigrations(db.url)
      const release = await holdMigrationLock(target.name, db.url)
      try {
        expect(await applyMigrations(db.url)).toEqual([])
      } finally {
        await release()
      }
    } finally {
      await db.drop()
    }
  })

  it('applies the migrations a database lacks when it has some already', async () => {
    const db = await target.create()
    try {
      const [first, ...later] = migrationsOf(target.name)
      await withFirstMigrationOnly(target.name, db.url, first!)
      expect(await applyMigrations(db.url)).toEqual(later.map((m) => m.name))
      expect(await applyMigrations(db.url)).toEqual([])
      expect(await readyOn(db.url)).toBe(true)
    } finally {
      await db.drop()
    }
  })

  it('reports not ready on a database without migrations', async () => {
    const db = await target.create()
    try {
      expect(await readyOn(db.url)).toBe(false)
    } finally {
      await db.drop()
    }
  })

  it.runIf(target.name === 'postgresql')(
    'runs its sessions with JIT and parallel plans off and the configured statement timeout',
    async () => {
      // Deep pages plan a never-run branch with a high cost; JIT compiled it on every request, and a
      // parallel plan of it started its workers on every request (src/db/client.ts).
      const settings = await kit.db.$queryRawUnsafe<{ jit: string; timeout: string; workers: string }[]>(
        `SELECT current_setting('jit') AS "jit", current_setting('statement_timeout') AS "timeout",
        current_setting('max_parallel_workers_per_gather') AS "workers"`,
      )
      expect(settings).toEqual([{ jit: 'off', timeout: '10s', workers: '0' }])
    },
  )

  it('serves /healthz and /readyz', async () => {
    expect(await kit.rest('GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } })
    expect(await kit.rest('GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready' } })
  })
})

describe('opening PostgreSQL', () => {
  it("opens the pool's first connection before any statement, and a failed one only fails readiness", async () => {
    // A server that accepts connections and drops them at once, counting them.
    let connections = 0
    const server = createServer((socket) => {
      connections++
      socket.destroy()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    try {
      const opened = await openDatabase(`postgresql://postgres@127.0.0.1:${port}/test?schema=nowhere`)
      await waitFor('the first connection', () => connections > 0)
      expect(await opened.ready()).toBe(false)
      await opened.close()
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe('SQLite migrations keep data', () => {
  it('rebuilding a parent table does not cascade-delete its children', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const Database = (await import('better-sqlite3')).default
    const dir = mkdtempSync(join(tmpdir(), 'gateway-migrate-'))
    const file = join(dir, 'old.db')
    try {
      const [first, ...later] = migrationsOf('sqlite')
      expect(later.length).toBeGreaterThan(0)
      // A database as the first release left it, with an account and its key.
      const db = new Database(file)
      db.exec(first!.sql)
      db.exec(MIGRATIONS_TABLE.sqlite)
      db.prepare(`INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name) VALUES ('1', ?, current_timestamp, ?)`).run(
        first!.checksum,
        first!.name,
      )
      db.exec(`INSERT INTO "Account" (id, name) VALUES ('acc', 'Old')`)
      db.exec(`INSERT INTO "ApiKey" (id, accountId, prefix, hash) VALUES ('key', 'acc', 'gk_x', 'h')`)
      db.close()

      expect(await applyMigrations(`file:${file}`)).toEqual(later.map((m) => m.name))
      const after = new Database(file)
      expect(after.prepare('SELECT count(*) AS n FROM "ApiKey"').get()).toEqual({ n: 1 })
      expect(after.pragma('foreign_keys', { simple: true })).toBe(1)
      after.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

/** Whether the service's readiness check passes on a database just opened at `url`. */
async function readyOn(url: string): Promise<boolean> {
  const opened = await openDatabase(url)
  try {
    return await opened.ready()
  } finally {
    await opened.close()
  }
}

const sqliteFile = (url: string) => url.slice('file:'.length)

/** Holds what the locked migration path waits for until the returned function is called. */
async function holdMigrationLock(kind: TestTarget['name'], url: string): Promise<() => Promise<void>> {
  if (kind === 'postgresql') {
    const other = await schemaClient(url)
    await other.query('SELECT pg_advisory_lock($1)', [PRISMA_ADVISORY_LOCK])
    return async () => {
      await other.query('SELECT pg_advisory_unlock($1)', [PRISMA_ADVISORY_LOCK])
      await other.end()
    }
  }
  const other = new Database(sqliteFile(url))
  other.exec('BEGIN IMMEDIATE')
  return async () => {
    other.exec('ROLLBACK')
    other.close()
  }
}

/** A database as the first release left it: its first migration applied and recorded, nothing else. */
async function withFirstMigrationOnly(kind: TestTarget['name'], url: string, first: Migration) {
  const record = `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count)`
  if (kind === 'postgresql') {
    const client = await schemaClient(url)
    try {
      await client.query(`CREATE SCHEMA "${new URL(url).searchParams.get('schema')!}"`)
      await client.query(first.sql)
      await client.query(MIGRATIONS_TABLE.postgresql)
      await client.query(`${record} VALUES ('1', $1, now(), $2, 1)`, [first.checksum, first.name])
    } finally {
      await client.end()
    }
    return
  }
  const db = new Database(sqliteFile(url))
  db.exec(first.sql)
  db.exec(MIGRATIONS_TABLE.sqlite)
  db.prepare(`${record} VALUES ('1', ?, current_timestamp, ?, 1)`).run(first.checksum, first.name)
  db.close()
}
