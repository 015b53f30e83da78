import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { cachePreparedStatements, sqliteRows, type CachingPrismaBetterSQLite3 } from '../src/db/sqlite-statement-cache.js'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'

const dir = mkdtempSync(join(tmpdir(), 'statement-cache-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function connection() {
  const db = new Database(join(dir, `${Math.random()}.db`))
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)')
  return db
}

describe('the SQLite prepared-statement cache', () => {
  it('prepares a SQL text once and binds each call’s own arguments', () => {
    const db = connection()
    const cache = cachePreparedStatements(db)
    const insert = 'INSERT INTO t (name) VALUES (?)'
    for (const name of ['a', 'b', 'c']) db.prepare(insert).bind([name]).run()
    const select = 'SELECT name FROM t WHERE id >= ? ORDER BY id'
    expect(db.prepare(select).bind([2]).raw().all()).toEqual([['b'], ['c']])
    expect(db.prepare(select).bind([1]).raw().all()).toEqual([['a'], ['b'], ['c']])
    expect(
      db
        .prepare(select)
        .bind([9])
        .columns()
        .map((c) => c.name),
    ).toEqual(['name'])
    expect(db.prepare(select).reader).toBe(true)
    expect(db.prepare(insert).reader).toBe(false)
    expect([...cache.keys()]).toEqual([select, insert])
  })

  it('keeps working after a statement fails, and after the schema changes under it', () => {
    const db = connection()
    cachePreparedStatements(db)
    const insert = 'INSERT INTO t (name) VALUES (?)'
    db.prepare(insert).bind(['x']).run()
    expect(() => db.prepare(insert).bind(['x']).run()).toThrow(/UNIQUE/)
    expect(db.prepare(insert).bind(['y']).run().changes).toBe(1)
    const select = 'SELECT * FROM t ORDER BY id'
    expect(db.prepare(select).bind([]).raw().all()).toEqual([
      [1, 'x'],
      [2, 'y'],
    ])
    db.exec('ALTER TABLE t ADD COLUMN extra TEXT')
    expect(db.prepare(select).bind([]).raw().all()).toEqual([
      [1, 'x', null],
      [2, 'y', null],
    ])
  })

  it('answers the direct reads’ rows by column name, the names read once per statement and again when a schema change adds a column', () => {
    const db = connection()
    cachePreparedStatements(db)
    // sqliteRows reads only the adapter's connection.
    const adapter = { client: db } as unknown as CachingPrismaBetterSQLite3
    db.prepare('INSERT INTO t (name) VALUES (?)').bind(['x']).run()
    const all = 'SELECT * FROM t ORDER BY id'
    expect(sqliteRows(adapter, all, [])).toEqual([{ id: 1, name: 'x' }])
    expect(sqliteRows(adapter, 'SELECT name AS "n" FROM t WHERE id = ?', [1])).toEqual([{ n: 'x' }])
    expect(sqliteRows(adapter, 'SELECT name AS "n" FROM t WHERE id = ?', [2])).toEqual([])
    expect(sqliteRows(adapter, 'INSERT INTO t (name) VALUES (?)', ['y'])).toEqual([])
    db.exec('ALTER TABLE t ADD COLUMN extra TEXT')
    expect(sqliteRows(adapter, all, [])).toEqual([
      { id: 1, name: 'x', extra: null },
      { id: 2, name: 'y', extra: null },
    ])
  })

  it('holds at most `size` statements, least recently used out', () => {
    const db = connection()
    const cache = cachePreparedStatements(db, 2)
    const q = (n: number) => `SELECT ${n}`
    db.prepare(q(1))
    db.prepare(q(2))
    db.prepare(q(1)) // 1 is now the most recently used
    db.prepare(q(3)) // evicts 2
    expect([...cache.keys()]).toEqual([q(1), q(3)])
    expect(db.prepare(q(2)).bind([]).raw().all()).toEqual([[2]])
  })
})

describe.runIf(targets.some((t) => t.name === 'sqlite'))('the service on SQLite with cached statements', () => {
  const kit = useKit(targets.find((t) => t.name === 'sqlite')!)

  it('answers repeated reads and writes with each call’s own values, per account', async () => {
    const s = await kit.seed().account()
    for (const mobile of ['+254700000001', '+254700000002']) {
      expect((await kit.rest('POST', '/api/contact/save', { key: s.key, body: { mobile, first_name: mobile.slice(-1) } })).status).toBe(200)
    }
    // The same statements again, now updating.
    const again = await kit.rest('POST', '/api/contact/save', { key: s.key, body: { mobile: '+254700000001', first_name: 'again' } })
    expect(again.body).toMatchObject({ new: false })
    const page = await kit.rest('GET', '/api/contacts', { key: s.key })
    expect(page.body.data.map((c: { mobile: string; first_name: string }) => [c.mobile, c.first_name])).toEqual([
      ['+254700000002', '2'],
      ['+254700000001', 'again'],
    ])
    const other = await kit.seed().account()
    expect((await kit.rest('GET', '/api/contacts', { key: other.key })).body.data).toEqual([])
  })
})
