// The direct transaction (Database.directTransaction: SQLite on Prisma's connection inside a Prisma
// transaction, PostgreSQL between its own BEGIN and COMMIT on the pool): what the body wrote is
// committed when it resolves and gone when it throws, a value the drivers would bind differently is
// refused, every statement is logged, and a failed transaction gives its connection back.
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'

describe.each(targets)('the direct transaction on $name', (target) => {
  const kit = useKit(target)
  const insert = (id: string) => ({
    sql: `INSERT INTO "ListTotal" ("listId", "total") VALUES (?, ?) RETURNING "listId", "total"`,
    text: `INSERT INTO "ListTotal" ("listId", "total") VALUES ($1, $2) RETURNING "listId", "total"`,
    values: [id, 3],
  })
  const stored = async (id: string) => (await kit.db.listTotal.findUnique({ where: { listId: id } }))?.total ?? null

  it('commits what the body wrote, answers its rows and logs each statement', async () => {
    const id = randomUUID()
    kit.statements.length = 0
    const rows = await kit.deps.directTransaction((run) => run(insert(id)))
    // Integers come back as bigint from SQLite (the adapter's safe integers), as numbers from PostgreSQL.
    expect(rows.map((row) => ({ ...row, total: Number(row.total) }))).toEqual([{ listId: id, total: 3 }])
    expect(await stored(id)).toBe(3)
    expect(kit.statements.filter((q) => q.includes('INSERT INTO "ListTotal"'))).toHaveLength(1)
  })

  it('rolls back every statement when the body throws, and when a statement fails', async () => {
    const first = randomUUID()
    const thrown = await kit.deps
      .directTransaction(async (run) => {
        await run(insert(first))
        throw new Error('the body gave up')
      })
      .catch((error: Error) => error.message)
    expect(thrown).toBe('the body gave up')
    expect(await stored(first)).toBeNull()

    const second = randomUUID()
    const failed = await kit.deps
      .directTransaction(async (run) => {
        await run(insert(second))
        return run(insert(second)) // the primary key again
      })
      .catch((error: { code?: string }) => error.code)
    expect(failed).toBe(target.name === 'sqlite' ? 'SQLITE_CONSTRAINT_PRIMARYKEY' : '23505')
    expect(await stored(second)).toBeNull()
  })

  it('refuses a value the drivers bind differently (a Date) before it reaches the database', async () => {
    const id = randomUUID()
    const refused = await kit.deps
      .directTransaction(async (run) => {
        await run(insert(id))
        return run({ sql: 'SELECT ? AS "at"', text: 'SELECT $1 AS "at"', values: [new Date()] })
      })
      .catch((error: Error) => error)
    expect(refused).toBeInstanceOf(TypeError)
    expect(await stored(id)).toBeNull()
  })

  it('gives every connection back: more failed transactions than the pool holds, then one that commits', async () => {
    for (let i = 0; i < 15; i++) {
      await expect(kit.deps.directTransaction((run) => run({ sql: 'SELEC 1', text: 'SELEC 1', values: [] }))).rejects.toThrow(
        /syntax error|near "SELEC"/,
      )
    }
    const id = randomUUID()
    await kit.deps.directTransaction((run) => run(insert(id)))
    expect(await stored(id)).toBe(3)
  })
})
