// A page's LIMIT (src/db/row-count.ts): SQLite compiles a prepared statement again whenever a
// parameter bound to a lone `LIMIT ?` is bound, which the statement cache does on every call, so
// on SQLite the pages' statements carry the number in their text; their OFFSET stays bound (one
// cached statement for every page of a size). PostgreSQL binds both.
import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { rowCount } from '../src/db/row-count.js'
import { listContacts } from '../src/messaging/contact-list.js'
import { connectionPageRows } from '../src/messaging/contact-connection-page.js'
import { searchPageIds } from '../src/messaging/contact-search-page.js'
import { listGroups } from '../src/messaging/groups.js'
import { pageRequest } from '../src/messaging/paging.js'

describe('rowCount', () => {
  it('writes a whole number into SQLite’s text and binds it on PostgreSQL', () => {
    expect(rowCount('sqlite', 26).sql).toBe('26')
    expect(rowCount('sqlite', 0).values).toEqual([])
    expect(rowCount('postgresql', 26).text).toBe('$1')
    expect(rowCount('postgresql', 26).values).toEqual([26])
  })

  it('refuses anything but a whole number of rows, so no other text reaches the statement', () => {
    for (const bad of [-1, 1.5, Number.NaN, Infinity, 2 ** 53]) expect(() => rowCount('sqlite', bad), String(bad)).toThrow(RangeError)
    expect(() => rowCount('sqlite', '25 UNION SELECT 1' as unknown as number)).toThrow(RangeError)
  })
})

describe.each(targets)('the LIMIT of a page’s statement on $name', (target) => {
  const kit = useKit(target)

  it('is in the text on SQLite and bound on PostgreSQL, for every list page, and the OFFSET stays bound', async () => {
    const s = await kit.seed().account().group({ name: 'Limits' }).contacts(30)
    const accountId = s.account.id
    const groupId = s.group.id
    const sqlite = kit.deps.dbKind === 'sqlite'
    const seen = async (read: () => Promise<unknown>) => {
      kit.statements.length = 0
      await read()
      const limited = kit.statements.filter((statement) => statement.includes('LIMIT'))
      expect(limited.length, 'a statement with a LIMIT').toBeGreaterThan(0)
      for (const statement of limited) {
        if (sqlite) expect(statement, statement).not.toMatch(/LIMIT \?/)
        else expect(statement, statement).toMatch(/LIMIT \$\d+/)
      }
      return limited
    }
    const page = (page: number, search?: string) => pageRequest({ page, perPage: 7, ...(search ? { search } : {}) })
    // The account's and the group's pages near the front, and from the end (the reversed walk).
    const second = await seen(() => listContacts(kit.deps, { accountId, request: page(2) }, ['id']))
    const third = await seen(() => listContacts(kit.deps, { accountId, request: page(3) }, ['id']))
    expect(third, 'pages of one size share one statement').toEqual(second)
    await seen(() => listContacts(kit.deps, { accountId, groupId, request: page(2) }, ['id']))
    await seen(() => listContacts(kit.deps, { accountId, request: page(4), forwardOnlyUpTo: 0 }, ['id']))
    // A search page (with its window), the connection's pages, a searched connection page's walk
    // and its second try, and a page of groups.
    await seen(() => listContacts(kit.deps, { accountId, request: page(1, 'son') }, ['id']))
    const cursorPage = { accountId, searchKey: '', from: null, until: null, backward: false, take: 6 }
    await seen(() => connectionPageRows(kit.deps, cursorPage, ['id']))
    await seen(() => connectionPageRows(kit.deps, { ...cursorPage, groupId }, ['id']))
    await seen(() => searchPageIds(kit.deps, { ...cursorPage, searchKey: 'son' }, { probe: 3 }))
    await seen(() => listGroups(kit.deps, accountId, page(1)))
    // The rows are the pages' own: the same as without the direct read (Prisma binds every value).
    for (const request of [page(2), page(4)]) {
      const list = { accountId, request, forwardOnlyUpTo: 0 }
      expect(await listContacts(kit.deps, list, ['id'])).toEqual(await listContacts({ ...kit.deps, directRead: undefined }, list, ['id']))
    }
  })
})
