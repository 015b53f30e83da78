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

  it('serves /healthz and /readyz', async () => {
    expect(await kit.rest('GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } })
    expect(await kit.rest('GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready' } })
  })
})
