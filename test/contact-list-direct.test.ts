// The contact list's direct read (Database.directRead: SQLite on Prisma's connection, PostgreSQL on
// its pool): it answers exactly what the same statement answers through Prisma, it is logged like
// any other statement, and when it cannot run (a value it does not bind, a failure) the list goes
// through Prisma instead and still answers.
import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { contactListStatement, listContacts } from '../src/messaging/contact-list.js'
import { openDatabase } from '../src/db/client.js'
import { createDeps } from '../src/deps.js'
import { parseEnv } from '../src/core/env.js'
import { pageRequest } from '../src/messaging/paging.js'

describe.each(targets)('the contact list read directly on $name', (target) => {
  const kit = useKit(target)

  async function seeded() {
    const s = await kit.seed().account().group({ name: 'Direct' }).contacts(30)
    const list = { accountId: s.account.id, groupId: s.group.id, request: pageRequest({ page: 2, perPage: 7 }) }
    return { s, list }
  }

  it('answers what Prisma answers for the same statement, pages, totals and a search alike', async () => {
    const { s, list } = await seeded()
    expect(kit.deps.directRead).toBeTypeOf('function')
    const columns = ['id', 'firstName', 'familyName', 'createdAt'] as const
    for (const request of [
      list.request,
      pageRequest({ page: 1, perPage: 25, search: 'a' }),
      pageRequest({ page: 1, perPage: 5, search: 'son 0001' }),
      pageRequest({ page: 5, perPage: 25 }),
    ]) {
      for (const groupId of [undefined, s.group.id]) {
        const each = { accountId: s.account.id, groupId, request }
        const statement = contactListStatement(kit.deps.dbKind, each, columns)
        // The direct read itself answers (a failure would fall back to Prisma and hide it)...
        expect((await kit.deps.directRead!(statement))?.[0]).toHaveProperty('total')
        // ...and the list built from it is the one built from Prisma's answer.
        const direct = await listContacts(kit.deps, each, columns)
        const viaPrisma = await listContacts({ ...kit.deps, directRead: undefined }, each, columns)
        expect(direct).toEqual(viaPrisma)
      }
    }
    const page = await listContacts(kit.deps, list, columns)
    expect(page.total).toBe(30)
    expect(page.rows).toHaveLength(7)
    expect(page.rows[0]!.createdAt).toBeInstanceOf(Date)
  })

  it('logs the statement as Prisma would', async () => {
    const { list } = await seeded()
    kit.statements.length = 0
    await listContacts(kit.deps, list, ['id'])
    const statement = contactListStatement(kit.deps.dbKind, list, ['id'])
    expect(kit.statements).toEqual([kit.deps.dbKind === 'sqlite' ? statement.sql : statement.text])
  })

  it('leaves a value it does not bind, and a failure, to Prisma', async () => {
    const { list } = await seeded()
    const expected = await listContacts({ ...kit.deps, directRead: undefined }, list, ['id', 'firstName'])
    expect(await kit.deps.directRead!({ sql: 'SELECT ? AS "at"', text: 'SELECT $1 AS "at"', values: [new Date()] })).toBeUndefined()
    expect(await kit.deps.directRead!({ sql: 'SELECT ? + 1 AS "n"', text: 'SELECT $1::int + 1 AS "n"', values: [7] })).toEqual([{ n: 8 }])
    const failing = {
      ...kit.deps,
      directRead: () => {
        throw new Error('SQLITE_IOERR')
      },
    }
    expect(await listContacts(failing, list, ['id', 'firstName'])).toEqual(expected)
    expect(await listContacts({ ...kit.deps, directRead: () => undefined }, list, ['id', 'firstName'])).toEqual(expected)
  })
  it.runIf(target.name === 'postgresql')(
    'prepares the list statement once per connection (PostgreSQL), still planned for its values every time',
    async () => {
      const { s, list } = await seeded()
      // One connection, so the statements it holds are the ones these reads prepared.
      const database = await openDatabase(kit.url, { poolSize: 1 })
      try {
        const deps = createDeps(database, parseEnv({ DATABASE_URL: kit.url, LOG_LEVEL: 'silent' }))
        const first = await listContacts(deps, list, ['id', 'firstName'])
        const other = { ...list, request: pageRequest({ page: 3, perPage: 7 }) }
        const third = await listContacts(deps, other, ['id', 'firstName'])
        const statement = contactListStatement('postgresql', list, ['id', 'firstName'])
        const prepared = await database.directRead!({ sql: '', text: 'SELECT "name", "statement" FROM pg_prepared_statements', values: [] })
        // Both pages ran one prepared statement, parsed once: the same text, whatever the numbers.
        expect(prepared).toEqual([{ name: expect.stringMatching(/^gw_\d+$/), statement: statement.text }])
        expect(await database.directRead!({ sql: '', text: 'SHOW plan_cache_mode', values: [] })).toEqual([
          { plan_cache_mode: 'force_custom_plan' },
        ])
        // And they answer what Prisma answers.
        expect(first).toEqual(await listContacts({ ...kit.deps, directRead: undefined }, list, ['id', 'firstName']))
        expect(third).toEqual(await listContacts({ ...kit.deps, directRead: undefined }, other, ['id', 'firstName']))
        expect(third.rows.map((r) => r.id)).not.toEqual(first.rows.map((r) => r.id))
        expect(first.total).toBe(s.contacts.length)
      } finally {
        await database.close()
      }
    },
  )
})
