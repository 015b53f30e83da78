import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'

const isStatement = (sql: string) => !/^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|PRAGMA)/i.test(sql)

describe.each(targets)('SQL statements per list request on $name', (target) => {
  // The key lookup is counted uncached (the worst case); test/api-key-cache.test.ts counts the cached one.
  const kit = useKit(target, { env: { API_KEY_CACHE_MS: '0' } })

  it('reads a 25-contact page with every contact’s groups in a fixed number of statements', async () => {
    const s = await kit.seed().account().group({ name: 'A' }).group({ name: 'B' }).contacts(40)
    const query = `{ contacts(perPage: 25) { nodes { id firstName selfSubscribed groups { id name subscriberCount } } pageInfo { total } } }`
    kit.statements.length = 0
    const data = await kit.gql(query, {}, s.key)
    expect(data.contacts.nodes).toHaveLength(25)
    expect(data.contacts.nodes[0].groups.map((g: any) => g.name)).toEqual(['B'])
    // Key with its account (one join), the page, its count, then one batched select per relation level (memberships,
    // groups, subscriber counts): the number does not grow with the page, as the 5-contact run shows.
    const forPage = kit.statements.filter(isStatement).length
    kit.statements.length = 0
    await kit.gql(query.replace('perPage: 25', 'perPage: 5'), {}, s.key)
    expect(kit.statements.filter(isStatement).length).toBe(forPage)
    expect(forPage).toBe(EXPECTED[target.name])
  })

  it('reads the REST contacts page in three statements', async () => {
    const s = await kit.seed().account().contacts(30)
    kit.statements.length = 0
    const res = await kit.rest('GET', '/api/contacts', { key: s.key })
    expect(res.body.data).toHaveLength(25)
    // key with its account, page, count
    expect(kit.statements.filter(isStatement)).toHaveLength(3)
  })
})

const EXPECTED: Record<string, number> = { sqlite: 7, postgresql: 7 }
