// The direct transaction (Database.directTransaction: SQLite between its own BEGIN IMMEDIATE and
// COMMIT on Prisma's connection, in its turn under the connection lock; PostgreSQL between its own
// BEGIN and COMMIT on the pool): what the body wrote is committed when it resolves and gone when it
// throws, a value the drivers would bind differently is refused, every statement is logged, and a
// failed transaction gives its connection back. On SQLite it keeps the connection lock's rule
// (src/db/sqlite-connection-lock.ts) and Prisma's bounds: its wait for a turn and its run.
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { sleep } from './kit/server-process.js'
import { databaseFault } from '../src/core/errors.js'
import { prismaTransaction } from '../src/db/client.js'
import { GENERIC_ROW_CHECKS } from '../src/db/row-checks.js'

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

const postgresql = targets.find((t) => t.name === 'postgresql')

describe.skipIf(!postgresql)('the direct transaction on PostgreSQL: plans', () => {
  const kit = useKit(postgresql!)
  const mode = async (run: (query: { sql: string; text: string; values: unknown[] }) => Promise<Record<string, unknown>[]>) =>
    (await run({ sql: '', text: 'SHOW plan_cache_mode', values: [] }))[0]!.plan_cache_mode

  // What it is for: the check a foreign key runs for each row written is planned once per connection,
  // not once a row (docs/performance.md, "Foreign key checks planned once").
  it("lets a foreign key's checks use a generic plan inside it; the session's statements stay planned for their values", async () => {
    // Outside: every statement is planned for its values (src/db/client.ts, the session's options).
    expect((await kit.db.$queryRawUnsafe<{ plan_cache_mode: string }[]>('SHOW plan_cache_mode'))[0]!.plan_cache_mode).toBe(
      'force_custom_plan',
    )
    expect(await kit.deps.directTransaction((run) => mode(run))).toBe('auto')
    // SET LOCAL ends with the transaction, rolled back or committed: the connection goes back as it came.
    await expect(
      kit.deps.directTransaction(async (run) => {
        await mode(run)
        throw new Error('the body gave up')
      }),
    ).rejects.toThrow('the body gave up')
    const modes = await Promise.all(
      Array.from({ length: 12 }, () => kit.db.$queryRawUnsafe<{ plan_cache_mode: string }[]>('SHOW plan_cache_mode')),
    )
    expect(modes.map((rows) => rows[0]!.plan_cache_mode)).toEqual(Array(12).fill('force_custom_plan'))
  })

  it('its fallback through Prisma (traces on) opens the same way; without the opening a Prisma transaction keeps the session mode', async () => {
    expect(await prismaTransaction(kit.db, 'postgresql', GENERIC_ROW_CHECKS)((run) => mode(run))).toBe('auto')
    expect(await prismaTransaction(kit.db, 'postgresql')((run) => mode(run))).toBe('force_custom_plan')
  })
})

const sqlite = targets.find((t) => t.name === 'sqlite')!

/** How long a statement that must wait is given before the test looks: it has long finished by then if it does not wait. */
const HOLD_MS = 1_000

describe('the direct transaction on SQLite, on the one connection', () => {
  const kit = useKit(sqlite)
  const insert = (id: string) => ({
    sql: `INSERT INTO "ListTotal" ("listId", "total") VALUES (?, ?) RETURNING "listId"`,
    text: '',
    values: [id, 3],
  })
  const stored = async (id: string) => (await kit.db.listTotal.findUnique({ where: { listId: id } }))?.total ?? null
  /** A transaction that holds the connection until `release()`: `opened` resolves once its first write is in. */
  const holding = (id: string, end: 'commit' | 'rollback') => {
    let opened!: () => void
    const open = new Promise<void>((resolve) => (opened = resolve))
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const done = kit.deps
      .directTransaction(async (run) => {
        await run(insert(id))
        opened()
        await held
        if (end === 'rollback') throw new Error('rolled back')
        return 'committed'
      })
      .catch((error: Error) => error.message)
    return { open, release, done }
  }

  it('opens with BEGIN IMMEDIATE and ends with COMMIT, both in the query log', async () => {
    kit.statements.length = 0
    await kit.deps.directTransaction((run) => run(insert(randomUUID())))
    expect(kit.statements.filter((q) => !q.startsWith('SELECT'))).toEqual(['BEGIN IMMEDIATE', insert('').sql, 'COMMIT'])
  })

  it('holds statements outside a transaction until it ends; they keep their writes when it rolls back', async () => {
    const inside = randomUUID()
    const [outside, direct] = [randomUUID(), randomUUID()]
    const transaction = holding(inside, 'rollback')
    await transaction.open
    // Issued from outside the transaction's body while it is open: Prisma's, and a direct one (the SMPP part row's kind).
    const writes = Promise.all([kit.db.listTotal.create({ data: { listId: outside, total: 1 } }), kit.deps.directRead!(insert(direct))])
    expect(await Promise.race([writes.then(() => 'written'), sleep(HOLD_MS).then(() => 'waiting')])).toBe('waiting')
    transaction.release()
    expect(await transaction.done).toBe('rolled back')
    await writes
    expect([await stored(inside), await stored(outside), await stored(direct)]).toEqual([null, 1, 3])
  })

  it('is rolled back past its timeout: the call fails as a database fault and its later statements never run', async () => {
    const [first, late] = [randomUUID(), randomUUID()]
    const failed = await kit.deps
      .directTransaction(
        async (run) => {
          await run(insert(first))
          await sleep(400)
          await run(insert(late))
          return 'committed'
        },
        { timeout: 100, maxWait: 1000 },
      )
      .catch((error: unknown) => error)
    expect(databaseFault(failed)).not.toBeNull()
    expect([await stored(first), await stored(late)]).toEqual([null, null])
    const next = randomUUID()
    await kit.deps.directTransaction((run) => run(insert(next)))
    expect(await stored(next)).toBe(3)
  })

  it('fails as a database fault when it finds no turn within its wait, and passes the turn on when it comes', async () => {
    const [held, refused, after] = [randomUUID(), randomUUID(), randomUUID()]
    const transaction = holding(held, 'commit')
    await transaction.open
    const waited = await kit.deps.directTransaction((run) => run(insert(refused)), { timeout: 1000, maxWait: 100 }).catch((e: unknown) => e)
    expect(databaseFault(waited)).not.toBeNull()
    transaction.release()
    expect(await transaction.done).toBe('committed')
    // Would wait for ever if the turn given up were never passed on.
    await kit.deps.directTransaction((run) => run(insert(after)))
    expect([await stored(held), await stored(refused), await stored(after)]).toEqual([3, null, 3])
  })

  it('fails when the body ended the transaction itself, and when its COMMIT fails; nothing of it is kept', async () => {
    const ended = randomUUID()
    const refused = await kit.deps
      .directTransaction(async (run) => {
        await run(insert(ended))
        await run({ sql: 'ROLLBACK', text: '', values: [] })
        return 'committed'
      })
      .catch((error: Error) => error.message)
    expect(refused).toMatch(/ended before its commit/)
    // A foreign key checked at COMMIT (deferred): the COMMIT fails and the transaction is rolled back, not left open.
    const orphan = randomUUID()
    const failed = await kit.deps
      .directTransaction(async (run) => {
        await run(insert(orphan))
        await run({ sql: 'PRAGMA defer_foreign_keys = ON', text: '', values: [] })
        return run({
          sql: `INSERT INTO "SmppPart" ("messageId", "part", "parts", "createdAt") VALUES (?, 1, 1, '2026-01-01T00:00:00.000+00:00')`,
          text: '',
          values: [randomUUID()],
        })
      })
      .catch((error: { code?: string }) => error.code)
    expect(failed).toBe('SQLITE_CONSTRAINT_FOREIGNKEY')
    expect([await stored(ended), await stored(orphan)]).toEqual([null, null])
    const next = randomUUID()
    await kit.deps.directTransaction((run) => run(insert(next)))
    expect(await stored(next)).toBe(3)
  })
})
