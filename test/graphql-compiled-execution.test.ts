import { parse, type ExecutionArgs } from 'graphql'
import { beforeAll, describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit, fixedClock } from './kit/kit.js'
import type { Seeded } from './kit/seed.js'
import { createApp, type App } from '../src/app.js'
import { schema } from '../src/graphql/schema.js'
import { compiledExecutionPlugin, COMPILE_ON_USE } from '../src/graphql/plugins/compiled-execution.js'
import { loadJit } from '../src/graphql/jit.js'
import { createMetrics } from '../src/metrics/create-metrics.js'

/**
 * Queries on /graphql run through graphql-js until their COMPILE_ON_USE-th use and as graphql-jit
 * functions after (src/graphql/plugins/compiled-execution.ts); once Yoga has answered one compiled
 * and without errors, the fast lane answers it without Yoga (src/graphql/fast-lane.ts). Each
 * document here is sent several times, under two Accept headers: every answer must be that of an
 * app that never compiles, byte for byte with its media type, errors included.
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
  async function answer(app: App, query: string, variables: Record<string, unknown>, accept?: string) {
    await kit.deps.apiKeyCache.idle()
    kit.statements.length = 0
    const res = await app.fetch(
      new Request('http://test/graphql', {
        method: 'POST',
        headers: { authorization: `Bearer ${seeded.key}`, 'content-type': 'application/json', ...(accept ? { accept } : {}) },
        body: JSON.stringify({ query, variables }),
      }),
    )
    return { status: res.status, type: res.headers.get('content-type'), body: await res.text(), statements: kit.statements.length }
  }

  it.each(DOCUMENTS)('$name: the answer and the statements of graphql-js, before and after compilation', async ({ query, variables }) => {
    const metrics = createMetrics()
    const app = createApp({ deps: kit.deps, ready: kit.database.ready, metrics })
    const fastAnswers = async () => (await metrics.graphqlFastLane.get()).values[0]?.value ?? 0
    const vars = variables?.(seeded, after) ?? {}
    for (const [round, accept] of [undefined, 'application/json'].entries()) {
      await answer(interpreted, query, vars, accept) // the key into the shared cache
      const expected = await answer(interpreted, query, vars, accept)
      expect(JSON.parse(expected.body)).toBeTypeOf('object')
      // Round 0: use 1 runs on graphql-js, the later ones compiled: each answers as graphql-js
      // does. Without errors it runs the same statements, and from the use after the first
      // compiled one the fast lane answers. Round 1, another Accept header: the document is
      // compiled already, and the lane answers once Yoga has answered that header once. An answer
      // with errors is graphql-js's second run, after the compiled one's statements (and the fast
      // lane's, which hands such a request to Yoga).
      const failed = 'errors' in JSON.parse(expected.body)
      const firstCompiled = round === 0 ? COMPILE_ON_USE : 1
      for (let use = 1; use <= COMPILE_ON_USE + 2; use++) {
        const before = await fastAnswers()
        const { statements, ...got } = await answer(app, query, vars, accept)
        expect(got, `use ${use}`).toEqual({ status: expected.status, type: expected.type, body: expected.body })
        const fast = (await fastAnswers()) - before
        if (failed && use >= firstCompiled) expect(statements, `use ${use}`).toBeLessThanOrEqual(3 * expected.statements)
        else expect(statements, `use ${use}`).toBe(expected.statements)
        expect(fast, `use ${use}: answered by the fast lane`).toBe(!failed && use > firstCompiled ? 1 : 0)
      }
    }
  })

  it('the fast lane leaves to Yoga what it did not learn: another Accept or operation name, extensions, a malformed body', async () => {
    const metrics = createMetrics()
    const app = createApp({ deps: kit.deps, ready: kit.database.ready, metrics })
    const fastAnswers = async () => (await metrics.graphqlFastLane.get()).values[0]?.value ?? 0
    const query = `query Learned { account { name } }`
    const post = (body: string, accept = 'application/graphql-response+json') =>
      app.fetch(
        new Request('http://test/graphql', {
          method: 'POST',
          headers: { authorization: `Bearer ${seeded.key}`, 'content-type': 'application/json', accept },
          body,
        }),
      )
    for (let use = 0; use <= COMPILE_ON_USE; use++) expect((await post(JSON.stringify({ query }))).status).toBe(200)
    expect(await fastAnswers()).toBe(1)
    // Learned under one Accept header only: another goes to Yoga, which answers it.
    const other = await post(JSON.stringify({ query }), 'application/json')
    expect(other.headers.get('content-type')).toContain('application/json')
    expect(await fastAnswers()).toBe(1)
    // The same text under another operation name is another document, here one Yoga refuses.
    const renamed = await post(JSON.stringify({ query, operationName: 'Other' }))
    expect((await renamed.json()).errors?.[0]?.message).toMatch(/operation/)
    // A persisted-query hash in extensions: Yoga checks it (here against the text: it does not match).
    const hashed = await post(JSON.stringify({ query, extensions: { persistedQuery: { version: 1, sha256Hash: '0'.repeat(64) } } }))
    expect(hashed.status).toBe(400)
    // Not JSON: Yoga's refusal, as before.
    const malformed = await post('{"query": ')
    expect(malformed.status).toBe(400)
    // Variables of the wrong shape: Yoga's 400.
    const badVariables = await post(JSON.stringify({ query, variables: [1] }))
    expect(badVariables.status).toBe(400)
    expect(await fastAnswers()).toBe(1)
    // And the learned one still takes the lane.
    const again = await post(JSON.stringify({ query }))
    expect(await again.json()).toEqual({ data: { account: { name: expect.any(String) } } })
    expect(await fastAnswers()).toBe(2)
  })
})

describe('compiledExecutionPlugin', () => {
  // Loaded on first use in the service (src/graphql/jit.ts); here the executor is read synchronously.
  beforeAll(() => loadJit())

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
