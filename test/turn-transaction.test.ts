// The records of one event-loop turn in one transaction (src/db/turn-transaction.ts): the SMPP
// connector's part rows, answers, receipts and SENT are one commit a turn, not one each. Each
// caller's promise resolves once its body is committed; a body that fails the batch does not fail
// the others: they run again alone, and only its own caller sees its error.
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { turnStatement, turnTransaction } from '../src/db/turn-transaction.js'
import type { DirectStatement } from '../src/db/client.js'
import { Prisma } from '../src/generated/sqlite/client.js'

describe.each(targets)('transactions of a turn on $name', (target) => {
  const kit = useKit(target)
  const insert = (id: string) => ({
    sql: `INSERT INTO "ListTotal" ("listId", "total") VALUES (?, ?) RETURNING "listId"`,
    text: `INSERT INTO "ListTotal" ("listId", "total") VALUES ($1, $2) RETURNING "listId"`,
    values: [id, 3],
  })
  const stored = async (id: string) => (await kit.db.listTotal.findUnique({ where: { listId: id } }))?.total ?? null
  /** Which transaction a body runs in: PostgreSQL's transaction id; on SQLite the BEGINs in the query log tell. */
  const transactionOf = async (run: DirectStatement) =>
    target.name === 'postgresql' ? String((await run({ sql: '', text: 'SELECT txid_current() AS "id"', values: [] }))[0]!.id) : 'sqlite'
  const begins = () => kit.statements.filter((q) => q === 'BEGIN IMMEDIATE').length

  it('runs the bodies given in one turn in one transaction, and those given while it runs in the next one', async () => {
    const ids = Array.from({ length: 6 }, () => randomUUID())
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    kit.statements.length = 0
    const body = (id: string, hold?: Promise<void>) => async (run: DirectStatement) => {
      await run(insert(id))
      await hold
      return transactionOf(run)
    }
    const first = ids.slice(0, 3).map((id, i) => turnTransaction(kit.deps.directTransaction, body(id, i === 0 ? held : undefined)))
    // Given in later turns while the first batch holds its transaction open.
    const second: Promise<string>[] = []
    for (const id of ids.slice(3)) {
      await new Promise((resolve) => setImmediate(resolve))
      second.push(turnTransaction(kit.deps.directTransaction, body(id)))
    }
    release()
    const [a, b] = [await Promise.all(first), await Promise.all(second)]
    expect(new Set(a).size).toBe(1)
    expect(new Set(b).size).toBe(1)
    if (target.name === 'postgresql') expect(a[0]).not.toBe(b[0])
    else expect(begins()).toBe(2)
    for (const id of ids) expect(await stored(id)).toBe(3)
  })

  it('runs each body again alone when one fails the batch: only its caller sees the error, every other write is kept once', async () => {
    const [kept, taken, other] = [randomUUID(), randomUUID(), randomUUID()]
    await kit.deps.directTransaction((run) => run(insert(taken)))
    const runs = new Map<string, number>()
    const body = (id: string) => async (run: DirectStatement) => {
      runs.set(id, (runs.get(id) ?? 0) + 1)
      return run(insert(id))
    }
    const results = await Promise.allSettled([kept, taken, other].map((id) => turnTransaction(kit.deps.directTransaction, body(id))))
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({
      code: target.name === 'sqlite' ? 'SQLITE_CONSTRAINT_PRIMARYKEY' : '23505',
    })
    // Once in the batch that was rolled back, once alone.
    expect([runs.get(kept), runs.get(taken), runs.get(other)]).toEqual([2, 2, 1])
    expect(await kit.db.listTotal.count({ where: { listId: { in: [kept, taken, other] } } })).toBe(3)
  })

  /** The rows of one batch in one INSERT (turnStatement's maker: the same function each time). */
  const insertMany = (ids: string[]) => Prisma.sql`
    INSERT INTO "ListTotal" ("listId", "total") VALUES ${Prisma.join(ids.map((id) => Prisma.sql`(${id}, ${3})`))} RETURNING "listId"`
  const inserts = () => kit.statements.filter((q) => q.includes('INSERT INTO "ListTotal"')).length

  it('writes the items given in one turn in one statement, committed when each resolves', async () => {
    const ids = Array.from({ length: 5 }, () => randomUUID())
    kit.statements.length = 0
    await Promise.all(ids.map((id) => turnStatement(kit.deps.directTransaction, insertMany, id)))
    expect(inserts()).toBe(1)
    for (const id of ids) expect(await stored(id)).toBe(3)
  })

  it('writes each item again alone when the merged statement fails: only its caller sees the error', async () => {
    const [kept, taken, other] = [randomUUID(), randomUUID(), randomUUID()]
    await kit.deps.directTransaction((run) => run(insert(taken)))
    const results = await Promise.allSettled([kept, taken, other].map((id) => turnStatement(kit.deps.directTransaction, insertMany, id)))
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({
      code: target.name === 'sqlite' ? 'SQLITE_CONSTRAINT_PRIMARYKEY' : '23505',
    })
    expect(await kit.db.listTotal.count({ where: { listId: { in: [kept, taken, other] } } })).toBe(3)
  })
})
