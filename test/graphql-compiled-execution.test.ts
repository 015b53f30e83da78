import { parse, type ExecutionArgs } from 'graphql'
import { beforeAll, describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit, fixedClock } from './kit/kit.js'
import type { Seeded } from './kit/seed.js'
import { createApp, type App } from '../src/app.js'
import { schema } from '../src/graphql/schema.js'
import { compiledExecutionPlugin, COMPILE_ON_USE } from '../src/graphql/plugins/compiled-execution.js'

/**
 * Queries on /graphql run through graphql-js until their COMPILE_ON_USE-th use and as graphql-jit
 * functions after (src/graphql/plugins/compiled-execution.ts). Each document here is sent several
 * times: every answer must be that of an app that never compiles, byte for byte, errors included.
 */
const DOCUMENTS: { name: string; query: string; variables?: (s: Seeded, after: string) => Record<string, unknown> }[] = [
  {
    name: 'a contacts page with ids, columns and its page info',
    query: `query { contacts(page: 2, perPage: 3) { nodes { id uuid firstName familyName otherNames mobile email organization gender createdAt } pageInfo { search total skipped perPage page pageCount } } }`,
  },
  {
    name: 'variables, aliases, fragments, directives and nested lists',
    query: `query Page($search: String, $with: Boolean!, $skip: Boolean!) {
      first: contacts(perPage: 2, search: $search) { nodes { ...C groups @include(if: $with) { name uuid subscriberCount } } }
      second: contacts(page: 2, perPage: 2) { nodes { ... on Contact { firstName } id @skip(if: $skip) } __typename }
      groups { uuid name contacts(perPage: 2) { nodes { firstName } pageInfo { total } } }
    }
    fragment C on Contact { uuid firstName mobile }`,
    variables: () => ({ search: 'person', with: true, skip: true }),
  },
  {
    name: 'a Relay connection and nodes by global id',
    query: `query($first: Int) { contactsConnection(first: $first) { totalCount edges { cursor node { id uuid } } pageInfo { hasNextPage endCursor } } }`,
    variables: () => ({ first: 2 }),
  },
  {
    name: 'a connection after a cursor, asking whether rows come before it (a lazy flag that is a promise)',
    query: `query($after: String) { contactsConnection(first: 2, after: $after) { edges { node { uuid } } pageInfo { hasPreviousPage hasNextPage startCursor } } }`,
    variables: (_s, after) => ({ after }),
  },
  {
    name: 'a resolver error next to data: NOT_FOUND with its path',
    query: `query($id: ID!) { contact(id: $id) { uuid } account { name } }`,
    variables: () => ({ id: '00000000-0000-4000-8000-000000000000' }),
  },
  {
    name: 'a validation error from a resolver (page out of range)',
    query: `query { contacts(page: 0) { nodes { uuid } } }`,
  },
  {
    name: 'a variable of the wrong type',
    query: `query($first: Int) { contactsConnection(first: $first) { totalCount } }`,
    variables: () => ({ first: 'many' }),
  },
  {
    name: 'a contact by uuid with its groups',
    query: `query($id: ID!) { contact(id: $id) { id uuid firstName groups { uuid name } } }`,
    variables: (s) => ({ id: s.contacts[0]!.id }),
  },
  {
    name: 'introspection',
    query: `query { __schema { queryType { name } types { name kind } } __type(name: "Contact") { fields { name type { name kind ofType { name } } } } }`,
  },
]

describe.each(targets)('/graphql queries compiled on reuse, on $name', (target) => {
  const kit = useKit(target, { clock: fixedClock('2026-03-10T08:15:00Z') })
  let seeded: Seeded
  let interpreted: App
  let after: string
  beforeAll(async () => {
    seeded = await kit
      .seed()
      .account()
      .group({ name: 'Customers' })
      .contacts(7, (i) => ({ firstName: `Person ${i}`, familyName: i % 2 ? 'Otieno' : 'Achieng', email: `p${i}@example.com` }))
    interpreted = createApp({ deps: kit.depsWith({ GRAPHQL_COMPILED_EXECUTION: 'false' }), ready: kit.database.ready })
    const first = await kit.gql(`{ contactsConnection(first: 2) { pageInfo { endCursor } } }`, {}, seeded.key)
    after = first.contactsConnection.pageInfo.endCursor
    // On PostgreSQL the API key cache answers only once the event bus listens (revocations reach
    // it); until then each request reads the key, a statement more than the counts below expect.
    await kit.deps.events.ready()
  })

  /** The answer of one app and the SQL statements it ran, with the API key already cached. */
  async function answer(app: App, query: string, variables: Record<string, unknown>) {
    await kit.deps.apiKeyCache.idle()
    kit.statements.length = 0
    const res = await app.fetch(
      new Request('http://test/graphql', {
        method: 'POST',
        headers: { authorization: `Bearer ${seeded.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }),
      }),
    )
    return { status: res.status, body: await res.text(), statements: kit.statements.length }
  }

  it.each(DOCUMENTS)('$name: the answer and the statements of graphql-js, before and after compilation', async ({ query, variables }) => {
    const vars = variables?.(seeded, after) ?? {}
    await answer(interpreted, query, vars) // the key into the shared cache
    const expected = await answer(interpreted, query, vars)
    expect(JSON.parse(expected.body)).toBeTypeOf('object')
    // Use 1 runs on graphql-js, the later ones compiled: each answers as graphql-js does. Without
    // errors it runs the same statements; an answer with errors is graphql-js's second run, after
    // the compiled one's statements.
    const failed = 'errors' in JSON.parse(expected.body)
    for (let use = 1; use <= COMPILE_ON_USE + 2; use++) {
      const { statements, ...got } = await answer(kit.app, query, vars)
      expect(got, `use ${use}`).toEqual({ status: expected.status, body: expected.body })
      if (failed && use >= COMPILE_ON_USE) expect(statements, `use ${use}`).toBeLessThanOrEqual(2 * expected.statements)
      else expect(statements, `use ${use}`).toBe(expected.statements)
    }
  })
})

describe('compiledExecutionPlugin', () => {
  /** What Yoga's executor would be replaced with for these arguments, or undefined when it is kept. */
  function executor(plugin: ReturnType<typeof compiledExecutionPlugin>, document: ExecutionArgs['document'], operationName?: string) {
    let set: unknown
    plugin.onExecute!({
      args: { schema, document, operationName, contextValue: {} } as ExecutionArgs,
      setExecuteFn: (fn: unknown) => {
        set = fn
      },
    } as never)
    return set
  }

  it('compiles a query on its second use, never a mutation, and keeps one compilation per document', () => {
    const plugin = compiledExecutionPlugin()
    const query = parse(`query { account { name } }`)
    const mutation = parse(`mutation { createApiKey(input: { name: "k" }) { apiKey } }`)
    expect(executor(plugin, query)).toBeUndefined()
    const compiled = executor(plugin, query)
    expect(compiled).toBeTypeOf('function')
    expect(executor(plugin, query)).toBeTypeOf('function')
    for (let i = 0; i < 4; i++) expect(executor(plugin, mutation)).toBeUndefined()
  })

  it('chooses the operation by name in a document of several', () => {
    const plugin = compiledExecutionPlugin({ compileOnUse: 1 })
    const document = parse(`query A { account { name } } mutation B { createApiKey(input: { name: "k" }) { apiKey } }`)
    expect(executor(plugin, document, 'A')).toBeTypeOf('function')
    expect(executor(plugin, document, 'B')).toBeUndefined()
  })

  it('keeps at most `max` compiled documents: the oldest is dropped and counted again', () => {
    const plugin = compiledExecutionPlugin({ compileOnUse: 2, max: 2 })
    const documents = ['name', 'timezone', 'creditBalance'].map((f) => parse(`query { account { ${f} } }`))
    for (const d of documents) {
      executor(plugin, d)
      expect(executor(plugin, d)).toBeTypeOf('function')
    }
    // The first was dropped when the third was compiled: its next use is a first use again.
    expect(executor(plugin, documents[0]!)).toBeUndefined()
    expect(executor(plugin, documents[0]!)).toBeTypeOf('function')
    expect(executor(plugin, documents[2]!)).toBeTypeOf('function')
  })
})
