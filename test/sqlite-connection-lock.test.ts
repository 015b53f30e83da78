// A statement outside a transaction, issued while another caller's transaction is open, is its own
// write: it is not undone when that transaction rolls back (src/db/sqlite-connection-lock.ts). On
// SQLite, Prisma's adapter runs everything on one connection, and such a statement used to run
// inside the open transaction: the SMPP connector's part row went with a rollback (or a kill -9
// before the commit), and the part was sent again. PostgreSQL runs each on its own connection.
import { executionAsyncResource } from 'node:async_hooks'
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { sleep } from './kit/server-process.js'

/** How long the open transaction waits for the other write before it rolls back: the write has long finished by then if it does not wait. */
const HOLD_MS = 1_000

describe.each(targets)('statements outside a transaction on $name', (target) => {
  const kit = useKit(target)

  it('keep what they wrote when another transaction open at the time rolls back', async () => {
    const inside = `inside-${randomUUID()}`
    const outside = `outside-${randomUUID()}`
    let write: Promise<unknown> | undefined
    let opened!: () => void
    const open = new Promise<void>((resolve) => (opened = resolve))
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const transaction = kit.db
      .$transaction(async (tx) => {
        await tx.serviceSetting.create({ data: { name: inside, value: '1' } })
        opened()
        await held
        throw new Error('rolled back')
      })
      .catch((error: Error) => error.message)
    await open
    // Issued from outside the transaction's callback, while it is open.
    write = kit.db.serviceSetting.create({ data: { name: outside, value: '1' } })
    await Promise.race([write, sleep(HOLD_MS)])
    release()
    expect(await transaction).toBe('rolled back')
    await write
    const names = (await kit.db.serviceSetting.findMany({ where: { name: { in: [inside, outside] } } })).map((s) => s.name)
    expect(names).toEqual([outside])
  })

  it('run at once inside the transaction’s own callback, as part of it', async () => {
    const name = `own-${randomUUID()}`
    const answer = await kit.db.$transaction(
      async () => {
        // The client instead of the transaction's: part of this transaction's work, not held up by it.
        await kit.db.serviceSetting.create({ data: { name, value: '1' } })
        return 'done'
      },
      { timeout: 10_000 },
    )
    expect(answer).toBe('done')
    expect(await kit.db.serviceSetting.findUnique({ where: { name } })).not.toBeNull()
  })
})

/**
 * How many AsyncLocalStorage hooks copy a store onto a new resource: each enabled one sets its own
 * symbol (described `kResourceStore`) on every resource created while it is on (Node 20 and 22).
 */
const storesCopied = () =>
  new Promise<number>((resolve) =>
    setImmediate(() =>
      resolve(Object.getOwnPropertySymbols(executionAsyncResource()).filter((s) => s.description === 'kResourceStore').length),
    ),
  )

describe('the SQLite connection lock between transactions', () => {
  const kit = useKit(targets.find((t) => t.name === 'sqlite')!)

  it('leaves no async hook on once no transaction runs', async () => {
    let during = 0
    await kit.db.$transaction(async () => {
      during = await storesCopied()
    })
    let duringDirect = 0
    await kit.deps.directTransaction(async () => {
      duringDirect = await storesCopied()
    })
    const after = await storesCopied()
    // Inside, the lock's store is copied onto what the callback creates; after, nothing of it is.
    expect(during).toBe(after + 1)
    expect(duringDirect).toBe(after + 1)
  })
})
