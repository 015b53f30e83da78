import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { graphql } from '../src/graphql/typed-documents.js'

// A key's lastUsedAt write (at most once a minute per key, off the request's path, test/api-key-cache.test.ts) is not the list's.
const isStatement = (sql: string) =>
  !/^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|PRAGMA)/i.test(sql) && !/^UPDATE .*ApiKey.*lastUsedAt/s.test(sql)
// The API key with its account: one statement (a join), none when the key cache holds it. The kit
// below turns the cache off, so each request is counted at its worst: the key, then the list.
const isKeyLookup = (sql: string) => /^\s*(SELECT .*? FROM|UPDATE)\s+(\S+\.)?[`"](ApiKey|Account)[`"]/is.test(sql)

describe.each(targets)('SQL statements per list request on $name', (target) => {
  // The key lookup is counted uncached (the worst case); test/api-key-cache.test.ts counts the cached one.
  const kit = useKit(target, { env: { API_KEY_CACHE_MS: '0' } })
  const statements = () => kit.statements.filter(isStatement)
  const listStatements = () => statements().filter((sql) => !isKeyLookup(sql))

  it('reads a 25-contact page with every contact’s groups in a fixed number of statements', async () => {
    const s = await kit.seed().account().group({ name: 'A' }).group({ name: 'B' }).contacts(40)
    const query = `{ contacts(perPage: 25) { nodes { id firstName selfSubscribed groups { id name subscriberCount } } pageInfo { total } } }`
    kit.statements.length = 0
    const data = await kit.gql(query, {}, s.key)
    expect(data.contacts.nodes).toHaveLength(25)
    expect(data.contacts.nodes[0].groups.map((g: any) => g.name)).toEqual(['B'])
    expect(data.contacts.pageInfo.total).toBe(40)
    // The page with its total, then one batched read of the page's relations and one per relation
    // level below it: the number does not grow with the page, as the 5-contact run shows.
    const forPage = statements().length
    kit.statements.length = 0
    await kit.gql(query.replace('perPage: 25', 'perPage: 5'), {}, s.key)
    expect(statements().length).toBe(forPage)
    expect(forPage).toBe(EXPECTED[target.name])
  })

  it('reads a GraphQL contacts page of scalar fields and pageInfo, in either order, in one statement besides the key', async () => {
    const s = await kit.seed().account().contacts(30)
    for (const query of [
      `{ contacts(page: 2, perPage: 10) { nodes { id firstName familyName mobile email createdAt } pageInfo { total pageCount } } }`,
      `{ contacts(page: 2, perPage: 10) { pageInfo { total pageCount } nodes { id firstName familyName mobile email createdAt } } }`,
      `{ contacts(page: 2, perPage: 10, search: "person 0001") { nodes { id firstName } pageInfo { total } } }`,
      `{ contacts(page: 9, perPage: 10) { nodes { id } pageInfo { total } } }`,
      `{ contacts { pageInfo { total } } }`,
      `{ contacts(page: 2, perPage: 10) { ...on ContactPage { nodes { id mobile } } pageInfo { total } nodes { firstName } } }`,
    ]) {
      kit.statements.length = 0
      const data = await kit.gql(query, {}, s.key)
      expect(data.contacts.pageInfo.total, query).toBe(query.includes('search') ? 10 : 30)
      expect(listStatements(), query).toHaveLength(1)
      // At most 2 SQL statements for a contacts page: the key with its account, and the page.
      expect(statements(), query).toHaveLength(2)
    }
  })

  it('answers aliases of nodes that read different fields, without a statement per row', async () => {
    const s = await kit
      .seed()
      .account()
      .contacts(12, (i) => ({ firstName: `Alias ${String(i).padStart(2, '0')}`, email: `a${i}@example.com` }))
    kit.statements.length = 0
    const data = await kit.gql(
      graphql(`{ contacts(perPage: 10) { a: nodes { id firstName } b: nodes { id email mobile } pageInfo { total } } }`),
      {},
      s.key,
    )
    expect(data.contacts.a.map((c: any) => c.firstName)).toEqual(
      Array.from({ length: 10 }, (_, i) => `Alias ${String(i).padStart(2, '0')}`),
    )
    expect(data.contacts.b.map((c: any) => c.email)).toEqual(Array.from({ length: 10 }, (_, i) => `a${i}@example.com`))
    expect(data.contacts.b.map((c: any) => c.id)).toEqual(data.contacts.a.map((c: any) => c.id))
    for (const c of data.contacts.b) expect(c.mobile).toMatch(/^\+254/)
    expect(listStatements().length).toBeLessThanOrEqual(2)
  })

  it('reads the REST contacts page, with or without a search, as one statement for the page and its total', async () => {
    const s = await kit.seed().account().contacts(30)
    for (const path of ['/api/contacts', '/api/contacts?page=2', '/api/contacts?search=person%200001', '/api/contacts?page=50']) {
      kit.statements.length = 0
      const res = await kit.rest('GET', path, { key: s.key })
      expect(res.status, path).toBe(200)
      expect(res.body.meta.total, path).toBe(path.includes('search') ? 10 : 30)
      expect(listStatements(), path).toHaveLength(1)
      // At most 2 SQL statements for a contacts page: the key with its account, and the page.
      expect(statements(), path).toHaveLength(2)
    }
  })

  it('reads the REST contacts page of a group as the group lookup and one statement for the page and its total', async () => {
    const s = await kit.seed().account().group({ name: 'Listed' }).contacts(30)
    for (const query of ['', '?search=person%200001', '?page=3']) {
      kit.statements.length = 0
      const res = await kit.rest('GET', `/api/contact/group/${s.group.id}/contacts${query}`, { key: s.key })
      expect(res.status).toBe(200)
      expect(res.body.meta.total).toBe(query.includes('search') ? 10 : 30)
      // The group (a 404 when it is not the account's), then the page with its total; on SQLite a
      // search's plan reads the account's and the group's sizes first (searchPlan: a group of all
      // the account's contacts does not read its members first, so nothing more).
      const own = listStatements()
      const plan = target.name === 'sqlite' && query.includes('search') ? 1 : 0
      expect(own).toHaveLength(2 + plan)
      expect(own[0]).toMatch(/[`"]Group[`"]/)
      if (plan) expect(own[1]).toMatch(/FROM "ListTotal"/)
    }
  })

  it('reads the groups page, with or without a search, as one statement for the page and its total', async () => {
    const s = await kit.seed().account().group({ name: 'Alpha', description: '100% sure' }).group({ name: 'beta' }).group({ name: 'Gamma' })
    for (const [path, names] of [
      ['/api/contact/groups', ['Alpha', 'beta', 'Gamma']],
      ['/api/contact/groups?search=%25', ['Alpha']],
      ['/api/contact/groups?search=A&perPage=1&page=2', ['beta']],
      ['/api/contact/groups?page=9', []],
    ] as const) {
      kit.statements.length = 0
      const res = await kit.rest('GET', path, { key: s.key })
      expect(
        res.body.data.map((g: any) => g.name),
        path,
      ).toEqual(names)
      expect(res.body.meta.total, path).toBe(path.includes('search=%25') ? 1 : 3)
      expect(listStatements(), path).toHaveLength(1)
    }
    // A relation (subscriberCount) adds one batched read for the whole page, not one per group.
    kit.statements.length = 0
    const data = await kit.gql(graphql(`{ groups { nodes { name subscriberCount } pageInfo { total } } }`), {}, s.key)
    expect(data.groups.nodes.map((g: any) => [g.name, g.subscriberCount])).toEqual([
      ['Alpha', 0],
      ['beta', 0],
      ['Gamma', 0],
    ])
    expect(listStatements()).toHaveLength(2)
  })
})

const EXPECTED: Record<string, number> = { sqlite: 7, postgresql: 7 }
