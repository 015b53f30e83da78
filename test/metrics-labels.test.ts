import { beforeEach, describe, expect, it } from 'vitest'
import { createYoga } from 'graphql-yoga'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { createApp, type App } from '../src/app.js'
import { schema } from '../src/graphql/schema.js'
import { createMetrics } from '../src/metrics/create-metrics.js'
import { graphqlMetricsPlugin, operationNamesOf } from '../src/metrics/graphql-plugin.js'
import { restRoutes } from '../rest-compat/routes.js'

// Issue 17 item 6: 200 anonymous requests named Anon1..Anon200 took /metrics from 174 to 2,418
// series and used up the room for names. A name is now a label only when it is the operator's.

/** Sample lines of an exposition, by family (the histogram suffixes folded into their family). */
function seriesByFamily(text: string): Map<string, number> {
  const families = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const family = /^([a-zA-Z_:][a-zA-Z0-9_:]*?)(_bucket|_sum|_count)?[{ ]/.exec(line)![1]!
    families.set(family, (families.get(family) ?? 0) + 1)
  }
  return families
}
const total = (families: Map<string, number>) => [...families.values()].reduce((a, b) => a + b, 0)
/** Series the service labels itself; the process collector's (nodejs_*, process_*) vary with GC and handles, not with clients. */
const ownSeries = (families: Map<string, number>) => Object.fromEntries([...families].filter(([name]) => !/^(nodejs|process)_/.test(name)))

describe.each(targets)('GraphQL metric labels on $name', (target) => {
  const kit = useKit(target)
  /** Each test its own app, so its own metrics and learned names. */
  let app: App
  beforeEach(() => {
    app = createApp({ deps: kit.depsWith(), ready: kit.database.ready })
  })

  const operation = (name: string, key?: string) =>
    app.fetch(
      new Request('http://localhost/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify({ query: `query ${name} { __typename }` }),
      }),
    )
  const scrape = async () => (await app.fetch(new Request('http://localhost/metrics'))).text()
  const operationSeries = (text: string, name: string) =>
    text.split('\n').filter((l) => l.startsWith('graphql_operations_total{') && l.includes(`operation_name="${name}"`))

  it('1,000 anonymous names add no series; an authenticated client’s new name still gets its own', async () => {
    const { key } = await kit.seed().account('Operator')
    // The first named anonymous operation creates the `other` series, the first scrape its own.
    expect((await operation('Warmup')).status).toBe(200)
    await scrape()
    const before = seriesByFamily(await scrape())

    for (let i = 1; i <= 1000; i += 50) {
      const batch = Array.from({ length: 50 }, (_, j) => operation(`Anon${i + j}`))
      expect((await Promise.all(batch)).map((r) => r.status)).toEqual(Array(50).fill(200))
    }
    const text = await scrape()
    const after = seriesByFamily(text)
    expect(ownSeries(after)).toEqual(ownSeries(before))
    // Everything together (the process collector's GC kinds and handle types included) grew by a
    // few at most; with names as labels it would have grown by about 11 series per name.
    expect(total(after) - total(before)).toBeLessThan(100)
    expect(text).not.toMatch(/operation_name="Anon/)
    expect(operationSeries(text, 'other')).toEqual([
      'graphql_operations_total{operation_name="other",operation_type="query",outcome="ok"} 1001',
    ])

    // The operator's own front end, with its key, ships a new operation: it has its series at once.
    expect((await operation('OperatorDashboard', key)).status).toBe(200)
    const later = await scrape()
    expect(operationSeries(later, 'OperatorDashboard')).toEqual([
      'graphql_operations_total{operation_name="OperatorDashboard",operation_type="query",outcome="ok"} 1',
    ])
    // Once learned, the name is counted under itself whoever sends it (it adds nothing new).
    await operation('OperatorDashboard')
    expect(operationSeries(await scrape(), 'OperatorDashboard')).toEqual([
      'graphql_operations_total{operation_name="OperatorDashboard",operation_type="query",outcome="ok"} 2',
    ])
  })

  it('an unknown or malformed key does not make a name a label, and its request is refused as before', async () => {
    const refused = await app.fetch(
      new Request('http://localhost/graphql', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: 'Bearer gk_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        },
        body: JSON.stringify({ query: 'query StolenName { contacts { pageInfo { total } } }' }),
      }),
    )
    expect((await refused.json()).errors).toMatchObject([{ extensions: { code: 'UNAUTHENTICATED' } }])
    await app.fetch(
      new Request('http://localhost/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer not-a-key' },
        body: JSON.stringify({ query: 'query JunkKey { __typename }' }),
      }),
    )
    const text = await scrape()
    expect(operationSeries(text, 'StolenName')).toEqual([])
    expect(operationSeries(text, 'JunkKey')).toEqual([])
    expect(operationSeries(text, 'other')).toEqual([
      'graphql_operations_total{operation_name="other",operation_type="query",outcome="error"} 1',
      'graphql_operations_total{operation_name="other",operation_type="query",outcome="ok"} 1',
    ])
  })

  it('the REST routes’ operation names are labels for anyone', async () => {
    const names = operationNamesOf(restRoutes.map((r) => r.document))
    expect(names).toEqual(expect.arrayContaining(['NowPlaying', 'Guide']))
    await operation('NowPlaying')
    expect(operationSeries(await scrape(), 'NowPlaying')).toEqual([
      'graphql_operations_total{operation_name="NowPlaying",operation_type="query",outcome="ok"} 1',
    ])
  })
})

describe('GraphQL metric labels: trusted documents and the cap', () => {
  const run = async (yoga: { fetch(request: Request): Promise<Response> | Response }, name: string) =>
    yoga.fetch(
      new Request('http://localhost/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `query ${name} { __typename }` }),
      }),
    )

  it('names of trusted documents are labels without a key; past the cap even authenticated names are `other`', async () => {
    const metrics = createMetrics()
    let authenticated = false
    const yoga = createYoga({
      schema,
      logging: false,
      // The context of the app: a request and its account lookup (here: a key that is valid when `authenticated`).
      context: ({ request }) => ({ request, account: () => (authenticated ? Promise.resolve({}) : Promise.reject(new Error('no key'))) }),
      plugins: [graphqlMetricsPlugin(metrics, { trusted: ['Persisted'], maxLearned: 2 })],
    })
    const keyed = (name: string) =>
      yoga.fetch(
        new Request('http://localhost/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer gk_x' },
          body: JSON.stringify({ query: `query ${name} { __typename }` }),
        }),
      )
    await run(yoga, 'Persisted')
    await run(yoga, 'Adhoc')
    authenticated = true
    await keyed('First')
    await keyed('Second')
    await keyed('Third')
    const labels = (await metrics.graphqlOperations.get()).values.map((v) => v.labels.operation_name).sort()
    expect(labels).toEqual(['First', 'Persisted', 'Second', 'other'])
  })
})
