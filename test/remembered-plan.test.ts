import { describe, expect, it } from 'vitest'
import { parse, type FieldNode, type OperationDefinitionNode } from 'graphql'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { mentionsVariable } from '../src/graphql/remembered-plan.js'

// A contacts page's Prisma selection is planned once per document and reused
// (src/graphql/remembered-plan.ts). A plan that is reused where it should not be still answers the
// same data, through Pothos' per-row fallback loads: so these tests count statements, request
// after request of one document.
const isStatement = (sql: string) =>
  !/^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|PRAGMA)/i.test(sql) && !/^UPDATE .*ApiKey.*lastUsedAt/s.test(sql)

const withEmail = (i: number) => ({ firstName: `Person ${String(i).padStart(2, '0')}`, email: `p${i}@example.com` })

describe.each(targets)('a contacts page planned once per document on $name', (target) => {
  // Every request reads its key (no key cache), so the counts compare request by request.
  const kit = useKit(target, { env: { API_KEY_CACHE_MS: '0' } })
  const counted = async <T>(run: () => Promise<T>) => {
    kit.statements.length = 0
    const data = await run()
    const sql = kit.statements.filter(isStatement)
    // The statements that read a contact's email: the page statement (it carries the sort keys) when
    // the plan it was built from is the request's own; a per-row fallback load when it is not.
    const emailReads = sql.filter((text) => /email/.test(text)).map((text) => (/sortKey1/.test(text) ? 'page' : 'other'))
    return { data, statements: sql.length, emailReads }
  }

  it('reads a page with relations in the same statements on every request of one document', async () => {
    const s = await kit.seed().account().group({ name: 'Listed' }).contacts(20)
    const query = `{ contacts(perPage: 10) { nodes { id firstName groups { name } } pageInfo { total } } }`
    const runs = []
    for (let i = 0; i < 3; i++) runs.push(await counted(() => kit.gql(query, {}, s.key)))
    for (const run of runs) {
      expect(run.data.contacts.nodes.map((c: any) => c.groups.map((g: any) => g.name))).toEqual(
        Array.from({ length: 10 }, () => ['Listed']),
      )
      expect(run.statements).toBe(runs[0]!.statements)
    }
    // The page with its total, then one batched read per relation level, whatever the page size.
    const single = await counted(() => kit.gql(query.replace('perPage: 10', 'perPage: 2'), {}, s.key))
    expect(single.statements).toBe(runs[0]!.statements)
  })

  it('plans a selection that a variable changes on every request', async () => {
    const s = await kit.seed().account().group({ name: 'Listed' }).contacts(20, withEmail)
    const query = `query ($g: Boolean!) { contacts(perPage: 10) { nodes { id firstName email @include(if: $g) groups @include(if: $g) { name } } pageInfo { total } } }`
    const fixed = await counted(() =>
      kit.gql(`{ contacts(perPage: 10) { nodes { id firstName email groups { name } } pageInfo { total } } }`, {}, s.key),
    )
    const without = await counted(() => kit.gql(query, { g: false }, s.key))
    expect(without.data.contacts.nodes[0]).not.toHaveProperty('groups')
    expect(without.data.contacts.nodes[0]).not.toHaveProperty('email')
    const withGroups = await counted(() => kit.gql(query, { g: true }, s.key))
    expect(withGroups.data.contacts.nodes.map((c: any) => c.groups)).toEqual(Array.from({ length: 10 }, () => [{ name: 'Listed' }]))
    for (const c of withGroups.data.contacts.nodes) expect(c.email).toMatch(/@/)
    expect(withGroups.statements).toBe(fixed.statements)
    expect(withGroups.emailReads).toEqual(['page'])
    expect(without.emailReads).toEqual([])
    expect(without.statements).toBeLessThan(fixed.statements)
  })

  it('plans a fragment field again where it is merged with other siblings', async () => {
    const s = await kit.seed().account().group({ name: 'Listed' }).contacts(20, withEmail)
    // Under `a` the fragment's nodes stand alone; under `b` they are merged with a sibling that
    // reads another column and the groups: the same first field node in two field sets.
    const both = `query ($id: ID!) {
      a: group(id: $id) { ...Page }
      b: group(id: $id) { ...Page contacts(perPage: 10) { nodes { email groups { name } } } }
    }
    fragment Page on Group { contacts(perPage: 10) { nodes { id firstName } } }`
    const onlyB = `query ($id: ID!) { b: group(id: $id) { contacts(perPage: 10) { nodes { id firstName email groups { name } } } } }`
    const alone = await counted(() => kit.gql(onlyB, { id: s.group.id }, s.key))
    for (let i = 0; i < 2; i++) {
      const run = await counted(() => kit.gql(both, { id: s.group.id }, s.key))
      expect(run.data.b.contacts.nodes.map((c: any) => c.groups)).toEqual(Array.from({ length: 10 }, () => [{ name: 'Listed' }]))
      expect(run.data.a.contacts.nodes[0]).not.toHaveProperty('groups')
      for (const c of run.data.b.contacts.nodes) expect(c.email).toMatch(/@/)
      // `a` adds its group and its page; `b` reads what it reads alone.
      expect(run.statements).toBe(alone.statements + 2)
      expect(run.emailReads).toEqual(['page'])
    }
  })
})

describe('mentionsVariable', () => {
  const fieldOf = (source: string) => {
    const document = parse(source)
    const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition')!
    const fragments = Object.fromEntries(
      document.definitions.flatMap((d) => (d.kind === 'FragmentDefinition' ? [[d.name.value, d] as const] : [])),
    )
    return { field: operation.selectionSet.selections[0] as FieldNode, fragments }
  }

  it('finds a variable in the selection, through fragments, and not in the field’s own arguments', () => {
    const cases: [string, boolean][] = [
      ['query ($p: Int) { contacts(page: $p) { nodes { id } } }', false],
      ['query ($v: Boolean!) { contacts { nodes { id @skip(if: $v) } } }', true],
      [
        'query ($v: Boolean!) { contacts { ...P } } fragment P on ContactPage { nodes { ...C } } fragment C on Contact { id @include(if: $v) }',
        true,
      ],
      ['{ contacts { ...P ...P } } fragment P on ContactPage { nodes { id } }', false],
      ['query ($n: String) { group(id: "x") { contacts(search: $n) { nodes { id } } } }', true],
    ]
    for (const [source, expected] of cases) {
      const { field, fragments } = fieldOf(source)
      expect(mentionsVariable([field], fragments), source).toBe(expected)
    }
  })
})
