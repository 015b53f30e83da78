import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { applyMigrations, migrationsOf } from '../src/db/migrate.js'
import { openDatabase } from '../src/db/client.js'

describe.each(targets)('database on $name', (target) => {
  const kit = useKit(target)

  it('applies every migration once, even when two instances start together', async () => {
    const db = await target.create()
    try {
      const [a, b] = await Promise.all([applyMigrations(db.url), applyMigrations(db.url)])
      expect([...a, ...b].sort()).toEqual(migrationsOf(target.name).map((m) => m.name))
      expect(await applyMigrations(db.url)).toEqual([])
      const opened = await openDatabase(db.url)
      expect(await opened.ready()).toBe(true)
      await opened.close()
    } finally {
      await db.drop()
    }
  })

  it('reports not ready on a database without migrations', async () => {
    const db = await target.create()
    try {
      const opened = await openDatabase(db.url)
      expect(await opened.ready()).toBe(false)
      await opened.close()
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
      db.exec(`CREATE TABLE "_prisma_migrations" ("id" TEXT PRIMARY KEY NOT NULL, "checksum" TEXT NOT NULL, "finished_at" DATETIME,
        "migration_name" TEXT NOT NULL, "logs" TEXT, "rolled_back_at" DATETIME, "started_at" DATETIME NOT NULL DEFAULT current_timestamp,
        "applied_steps_count" INTEGER UNSIGNED NOT NULL DEFAULT 0)`)
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
