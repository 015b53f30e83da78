// Property-based fuzzing of every REST route and every GraphQL operation with hostile input:
// junk paths and percent-encoding, query parameters, headers and bodies (prototype keys, huge
// numbers, NUL, lone surrogates, deep arrays). Invariants: never a 5xx (nor a masked unexpected
// GraphQL error), every error in the contract's shape, and nothing written by a failing request.
// Seeded and bounded: FUZZ_SEED and FUZZ_RUNS override the defaults; a failure prints its seed.
import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLOutputType,
} from 'graphql'
import { beforeAll, describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit, type TestKit } from './kit/kit.js'
import { fingerprint } from './kit/fingerprint.js'
import { restRoutes } from '../rest-compat/routes.js'
import { schema } from '../src/graphql/schema.js'
import { httpStatusOf, MAX_ERROR_DETAILS } from '../src/core/errors.js'
import { graphql } from '../src/graphql/typed-documents.js'

const SEED = Number(process.env.FUZZ_SEED ?? 20261123)
const RUNS = Number(process.env.FUZZ_RUNS ?? 200)
const SAMPLE = readFileSync(new URL('../docs/channel-sample.json', import.meta.url), 'utf8')
const CODES = new Set(Object.keys(httpStatusOf))

// --- JSON with hostile keys: objects are kept as key/value pairs, so `__proto__` and duplicate keys
// survive into the text exactly as a client could send them.
type Json = null | boolean | number | string | Json[] | { pairs: [string, Json][] } | { raw: string }

function toJson(value: Json): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`
  if ('raw' in value) return value.raw
  return `{${value.pairs.map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(',')}}`
}

/** Percent-encodes any string; a lone surrogate becomes its 3-byte (WTF-8) form, which no decoder accepts. */
const percent = (text: string) =>
  text.replace(/[\s\S]/g, (ch) => {
    try {
      return encodeURIComponent(ch)
    } catch {
      const c = ch.charCodeAt(0)
      return [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('')
    }
  })

const obj = (pairs: [string, Json][]): Json => ({ pairs })

const hostileUnit = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) },
  { weight: 2, arbitrary: fc.constantFrom('\u0000', '\ud800', '\udfff', '\ud83d\ude00', '%', '_', '\\', "'", '"', '\n') },
)
const PROTO_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', 'isPrototypeOf']
const hostileString = fc.oneof(
  fc.string({ unit: hostileUnit, maxLength: 24 }),
  fc.constantFrom(
    '',
    ' ',
    '0712345678',
    '+254712345678',
    '2147483648',
    '99999999999999999999',
    '-1',
    '0',
    '1e309',
    'NaN',
    'null',
    'true',
    ...PROTO_KEYS,
  ),
  fc.nat({ max: 400 }).map((n) => 'x'.repeat(n)),
)
const hostileNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, 1, -1, 2 ** 31 - 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 1, 1e308, -1e308, 1_000_000, 1_000_001),
)
/** Dates no database stores and numbers no Date holds: year 0, negative years, +275760, huge or negative Unix seconds, NaN-ish text. */
const EXTREME_DATES = [
  '0000-01-01T00:00:00Z',
  '0000-01-01',
  '0001-01-01',
  '-000001-01-01T00:00:00Z',
  '-271821-04-20T00:00:00Z',
  '+275760-09-13T00:00:00Z',
  '275760-09-13',
  '9999-12-31T23:59:59Z',
  '999999999999',
  '8640000000000',
  '-62198755200',
  '-1',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e309',
  '2026-02-30',
  '2026-13-01T00:00:00Z',
  '2026-01-01T25:00:00Z',
  '2026-01-01T00:00:00+99:99',
]
const extremeDate = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...EXTREME_DATES) },
  fc
    .integer({ min: -300_000, max: 300_000 })
    .map((y) => `${y < 0 ? '-' : y > 9999 ? '+' : ''}${String(Math.abs(y)).padStart(y < 0 || y > 9999 ? 6 : 4, '0')}-01-01T00:00:00Z`),
  fc
    .oneof(
      fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }),
      fc.bigInt({ min: 253_402_300_800n, max: 999_999_999_999n }),
      fc.constant(2n ** 63n),
    )
    .map(String),
)
const deepArray = fc.integer({ min: 50, max: 20_000 }).map((n): Json => ({ raw: '['.repeat(n) + ']'.repeat(n) }))

const jsonValue = (keys: fc.Arbitrary<string>, strings: fc.Arbitrary<string> = hostileString): fc.Arbitrary<Json> =>
  fc.letrec<{ v: Json }>((tie) => ({
    v: fc.oneof(
      { depthSize: 'small', maxDepth: 3 },
      strings,
      hostileNumber,
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('v'), { maxLength: 4 }),
      fc.array(fc.tuple(keys, tie('v')), { maxLength: 5 }).map(obj),
      deepArray,
    ),
  })).v

// --- Database fingerprint around a request.
async function expectUnchanged(kit: TestKit, before: Record<string, string>, what: string) {
  expect(await fingerprint(kit), `a failing request wrote: ${what}`).toEqual(before)
}

function checkMessagingError(body: any, what: string) {
  expect(body, what).toBeTypeOf('object')
  expect(
    Object.keys(body).every((k) => ['error', 'code', 'details'].includes(k)),
    `${what}: keys ${Object.keys(body)}`,
  ).toBe(true)
  expect(typeof body.error, what).toBe('string')
  expect(CODES.has(body.code), `${what}: code ${body.code}`).toBe(true)
  if (body.details !== undefined) checkDetails(body.details, what)
}

function checkDetails(details: any, what: string) {
  expect(Array.isArray(details), what).toBe(true)
  expect(details.length, what).toBeLessThanOrEqual(MAX_ERROR_DETAILS + 1)
  for (const d of details) expect(Object.keys(d).sort(), what).toEqual(['field', 'message'])
  for (const d of details) expect([typeof d.field, typeof d.message], what).toEqual(['string', 'string'])
}

describe.each(targets)('fuzzing hostile input on $name', (target) => {
  const kit = useKit(target, { env: { CHANNEL_CACHE_MS: '0', BODY_LIMIT_BYTES: '262144' } })
  const ids: string[] = []
  let key = ''
  let otherKey = ''

  beforeAll(async () => {
    const s = await kit.seed().account('Fuzz').group({ name: 'Fuzzed' }).contacts(3)
    const other = await kit.seed().account('Other')
    key = s.key
    otherKey = other.key
    await kit.gql(graphql('mutation($d: String!) { importChannel(document: $d) { id } }'), { d: SAMPLE }, key)
    const channel = await kit.db.channel.findFirstOrThrow({ include: { programs: true } })
    const airing = await kit.db.airing.findFirstOrThrow()
    ids.push(
      s.group.id,
      s.contacts[0]!.id,
      channel.id,
      channel.slug,
      channel.programs[0]!.slug,
      String(channel.programs[0]!.id),
      String(airing.id),
    )
  })

  const idOrJunk = () => fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...ids) }, { weight: 1, arbitrary: hostileString })

  /** A request header set: mostly a good key and JSON, otherwise content types and authorization in many forms. */
  const headersArb = () =>
    fc
      .tuple(
        fc.oneof(
          { weight: 6, arbitrary: fc.constant('application/json') },
          {
            weight: 2,
            arbitrary: fc.constantFrom(
              'application/json; charset=utf-8',
              'APPLICATION/JSON',
              'application/vnd.api+json',
              'text/plain',
              'application/x-www-form-urlencoded',
              'application/json;;',
              '',
            ),
          },
          { weight: 1, arbitrary: fc.constant(null) },
        ),
        fc.oneof(
          { weight: 6, arbitrary: fc.constant(`Bearer ${key}`) },
          {
            weight: 2,
            arbitrary: fc.constantFrom(
              `bearer ${key}`,
              `Bearer ${otherKey}`,
              `Bearer ${key}x`,
              'Bearer',
              'Bearer gk_zz',
              'Basic dXNlcjpwYXNz',
              `Bearer  ${key}`,
              'Bearer %00',
            ),
          },
          { weight: 1, arbitrary: fc.constant(null) },
        ),
        fc.record(
          {
            'if-none-match': fc.constantFrom('*', '"x"', 'W/"y"'),
            'idempotency-key': fc.constantFrom('k1', 'x'.repeat(300), 'a b'),
            'x-request-id': fc.constantFrom('trace-1', 'x'.repeat(200), 'bad id'),
          },
          { requiredKeys: [] },
        ),
      )
      .map(([type, auth, extra]): Record<string, string> => ({
        ...(type === null ? {} : { 'content-type': type }),
        ...(auth === null ? {} : { authorization: auth }),
        ...extra,
      }))

  // --- REST
  const SEGMENT_JUNK = ['%', '%Z', '%ZZ', '%E0%A4%A', '%00', '%ED%A0%80', '%C3%28', '%FF', '..', '.', '%2F', '%25', 'a%00b', '%F0%9F%98%80']
  const segment = () =>
    fc.oneof(
      { weight: 6, arbitrary: idOrJunk().map(percent) },
      { weight: 1, arbitrary: fc.constantFrom(...SEGMENT_JUNK) },
      { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9._~%-]{0,12}$/) },
    )
  const QUERY_KEYS = ['page', 'perPage', 'per_page', 'search', 'limit', 'from', 'to', 'status', 'type', '__proto__', 'constructor']
  const queryArb = () =>
    fc.array(
      fc.tuple(
        fc.constantFrom(...QUERY_KEYS),
        fc.oneof(
          hostileString.map(percent),
          fc.constantFrom('%', '%ZZ', '%00', '%ED%A0%80', '2147483647', '1000000', '1000001', '-5', '1.5', 'abc', 'active', 'LIVE'),
          extremeDate.map(percent),
        ),
      ),
      { maxLength: 4 },
    )
  const BODY_KEYS = [
    'name',
    'description',
    'subscribable',
    'subscription_autoresponse',
    'unsubscribe_autoresponse',
    'optin_code',
    'optout_code',
    'subscription_sim',
    'mobile',
    'first_name',
    'family_name',
    'email',
    'gender',
    'organization',
    'groups',
    'contacts',
    'other_names',
    'twitter',
    ...PROTO_KEYS,
  ]
  const bodyKey = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...BODY_KEYS) }, { weight: 1, arbitrary: hostileString })
  const contactItem = () =>
    fc.array(fc.tuple(bodyKey, jsonValue(bodyKey, fc.oneof(hostileString, fc.constantFrom(...ids)))), { maxLength: 6 }).map(obj)
  const restBody = () =>
    fc.oneof(
      { weight: 4, arbitrary: fc.array(fc.tuple(bodyKey, jsonValue(bodyKey)), { maxLength: 6 }).map(obj) },
      { weight: 2, arbitrary: fc.array(contactItem(), { maxLength: 6 }).map((items) => obj([['contacts', items]])) },
      {
        weight: 1,
        arbitrary: fc.array(fc.oneof(hostileString, hostileNumber), { maxLength: 6 }).map((items) => obj([['contacts', items]])),
      },
      { weight: 1, arbitrary: jsonValue(bodyKey) },
      {
        weight: 1,
        arbitrary: fc.constantFrom<Json>(
          { raw: '' },
          { raw: '{' },
          { raw: '{"a":1}{' },
          { raw: '\u0000' },
          { raw: '{"name":"\\ud800"}' },
          { raw: '{"__proto__":{"name":"x"}}' },
        ),
      },
    )

  const restRequest = () =>
    fc.record({
      route: fc.constantFrom(...restRoutes),
      method: fc.oneof(
        { weight: 6, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS', 'HEAD') },
      ),
      segments: fc.array(segment(), { minLength: 3, maxLength: 3 }),
      randomPath: fc.oneof(
        { weight: 8, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.array(segment(), { minLength: 1, maxLength: 4 }) },
      ),
      trailingSlash: fc.boolean(),
      query: queryArb(),
      headers: headersArb(),
      body: fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 6, arbitrary: restBody() }),
    })

  it('REST: never a 5xx, errors in the contract’s shape, nothing written on failure', async () => {
    await fc.assert(
      fc.asyncProperty(restRequest(), async (r) => {
        let i = 0
        const path = r.randomPath ? `/api/${r.randomPath.join('/')}` : `/api${r.route.path.replace(/:\w+/g, () => r.segments[i++]!)}`
        const method = r.method ?? r.route.method
        const query = r.query.map(([k, v]) => `${k}=${v}`).join('&')
        const url = `${path}${r.trailingSlash ? '/' : ''}${query ? `?${query}` : ''}`
        const what = `${method} ${url} ${JSON.stringify(r.headers)} ${r.body === null ? '' : toJson(r.body).slice(0, 300)}`
        const before = await fingerprint(kit)
        const res = await kit.rest(method, url, {
          headers: r.headers,
          rawBody: r.body === null || method === 'GET' || method === 'HEAD' ? undefined : toJson(r.body),
        })
        expect(res.status, `${what} -> ${JSON.stringify(res.body)}`).toBeLessThan(500)
        if (res.status < 400) return
        await expectUnchanged(kit, before, what)
        if (method === 'HEAD') return
        const channel = /^\/api\/(channels|programs)([/.]|$)/.test(new URL(url, 'http://localhost').pathname)
        if (channel) expect(Object.keys(res.body), `${what} -> ${JSON.stringify(res.body)}`).toEqual(['error'])
        else checkMessagingError(res.body, `${what} -> ${JSON.stringify(res.body)}`)
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    )
  }, 120_000)

  // Every channel route that documents a date parameter, with extreme dates and a real channel or program.
  const datedRoutes = restRoutes.filter((r) => r.openapi?.query && ('from' in r.openapi.query || 'to' in r.openapi.query))

  it('REST date parameters: extreme dates are a 400 {error} or an answer, never a 5xx', async () => {
    expect(datedRoutes.map((r) => r.path).sort()).toEqual(['/channels/:channel/programs/upcoming', '/programs/:program/episodes'])
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...datedRoutes),
        fc.constantFrom('from', 'to'),
        extremeDate,
        fc.nat(1),
        async (route, name, value, pick) => {
          const id = route.path.startsWith('/programs') ? ids[4 + pick]! : ids[2 + pick]!
          const url = `/api${route.path.replace(/:\w+/, encodeURIComponent(id))}?${name}=${percent(value)}`
          const res = await kit.rest('GET', url)
          expect(res.status, `${url} -> ${JSON.stringify(res.body)}`).toBeLessThan(500)
          if (res.status >= 400)
            expect([res.status, Object.keys(res.body)], `${url} -> ${JSON.stringify(res.body)}`).toEqual([400, ['error']])
        },
      ),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    )
  }, 120_000)

  // --- GraphQL: one document per Query and Mutation field, every argument a variable.
  const operations = [
    ...Object.values(schema.getQueryType()!.getFields()).map((f) => ({ kind: 'query' as const, field: f })),
    ...Object.values(schema.getMutationType()!.getFields()).map((f) => ({ kind: 'mutation' as const, field: f })),
  ]

  function selection(type: GraphQLOutputType, depth: number): string {
    const named = getNamedType(type)
    if (!isObjectType(named)) return ''
    const fields = Object.values(named.getFields()).filter((f) => f.args.every((a) => !isNonNullType(a.type)))
    const parts = fields.flatMap((f) => {
      const inner = getNamedType(f.type)
      if (isScalarType(inner) || isEnumType(inner)) return [f.name]
      return depth > 0 ? [`${f.name} ${selection(f.type, depth - 1)}`] : []
    })
    return `{ __typename ${parts.join(' ')} }`
  }

  function documentOf(kind: 'query' | 'mutation', field: GraphQLField<unknown, unknown>) {
    const vars = field.args.map((a) => `$${a.name}: ${a.type.toString()}`).join(', ')
    const args = field.args.map((a) => `${a.name}: $${a.name}`).join(', ')
    return `${kind} Fuzz${vars ? `(${vars})` : ''} { ${field.name}${args ? `(${args})` : ''} ${selection(field.type, 1)} }`
  }

  const smallInt = () =>
    fc.oneof(
      { weight: 3, arbitrary: fc.integer({ min: 1, max: 5 }) },
      { weight: 1, arbitrary: fc.constantFrom(...ids.slice(-2).map(Number)) },
    )

  /** A value for an input type: mostly of the right type with hostile content, sometimes anything. */
  function valueFor(type: GraphQLInputType, depth = 0, name = ''): fc.Arbitrary<Json> {
    const inner = isNonNullType(type) ? type.ofType : type
    let typed: fc.Arbitrary<Json>
    if (isListType(inner)) typed = fc.array(valueFor(inner.ofType, depth + 1), { maxLength: 5 })
    else if (isInputObjectType(inner)) {
      const fields = Object.values(inner.getFields())
      const pair = (f: (typeof fields)[number]) => valueFor(f.type, depth + 1).map((v): [string, Json] => [f.name, v])
      typed = fc
        .tuple(
          fc.tuple(...fields.filter((f) => isNonNullType(f.type)).map(pair)),
          fc.array(fc.constantFrom(...fields).chain(pair), { maxLength: 6 }),
          fc.array(fc.tuple(fc.constantFrom(...PROTO_KEYS), jsonValue(fc.constantFrom(...PROTO_KEYS))), { maxLength: 1 }),
        )
        .map(([required, optional, proto]) => obj([...required, ...optional, ...proto]))
    } else if (isEnumType(inner)) typed = fc.oneof(fc.constantFrom(...inner.getValues().map((v) => v.name)), hostileString)
    else if (inner.name === 'Int') typed = fc.oneof({ weight: 3, arbitrary: smallInt() }, { weight: 1, arbitrary: hostileNumber })
    else if (inner.name === 'Boolean') typed = fc.boolean()
    else if (inner.name === 'ID') typed = idOrJunk()
    else if (inner.name === 'String' && depth === 0) {
      typed = fc.oneof(
        idOrJunk(),
        fc.constant(SAMPLE.replace('City TV', 'Fuzz TV')),
        fc.constant(SAMPLE.replace('"city-tv"', '"fuzz-tv"').replace('6f1c2d3e', '7f1c2d3e')),
      )
    } else typed = hostileString
    // Every date argument (from, to) also gets dates out of any database's range.
    if (isScalarType(inner) && inner.name === 'String' && (name === 'from' || name === 'to')) typed = fc.oneof(typed, extremeDate)
    return fc.oneof({ weight: 12, arbitrary: typed }, { weight: 1, arbitrary: jsonValue(hostileString) })
  }

  const graphqlRequest = () =>
    fc.constantFrom(...operations).chain(({ kind, field }) =>
      fc.record({
        query: fc.oneof(
          { weight: 9, arbitrary: fc.constant(documentOf(kind, field)) },
          {
            weight: 1,
            arbitrary: fc.constantFrom(
              '{ __proto__ }',
              'query { contacts(page: 99999999999) { nodes { id } } }',
              '{',
              'mutation { constructor }',
              `{ contacts(search: "${'a'.repeat(60_000)}") { pageInfo { total } } }`,
            ),
          },
        ),
        variables: fc
          .tuple(
            ...field.args.map((a) =>
              isNonNullType(a.type)
                ? valueFor(a.type, 0, a.name)
                : fc.oneof({ weight: 3, arbitrary: valueFor(a.type, 0, a.name) }, { weight: 1, arbitrary: fc.constant(null) }),
            ),
          )
          .map((values) => obj(field.args.flatMap((a, i): [string, Json][] => (values[i] === null ? [] : [[a.name, values[i]!]])))),
        headers: headersArb(),
        json: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      }),
    )

  // Date arguments sit on nested fields (Channel.upcomingAirings, Program.episodes), which the
  // per-operation documents above select without arguments: each is reached from its root field.
  const dateArguments = Object.values(schema.getTypeMap())
    .filter(isObjectType)
    .flatMap((type) =>
      Object.values(type.getFields()).flatMap((f) =>
        f.args
          .filter((a) => a.name === 'from' || a.name === 'to')
          .map((a) => ({ type: type.name, field: f.name, arg: a.name, selection: selection(f.type, 0) })),
      ),
    )
  const ROOTS: Record<string, { field: string; ids: () => string[] }> = {
    Channel: { field: 'channel(id: $id)', ids: () => [ids[2]!, ids[3]!] },
    Program: { field: 'program(id: $id)', ids: () => [ids[4]!, ids[5]!] },
  }

  it('GraphQL: every date argument has a root to reach it from', () => {
    expect([...new Set(dateArguments.map((d) => d.type))].sort()).toEqual(Object.keys(ROOTS).sort())
  })

  it('GraphQL date arguments: extreme dates are a BAD_REQUEST or an answer, never a 5xx nor INTERNAL', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...dateArguments), extremeDate, fc.nat(1), async (d, value, pick) => {
        const root = ROOTS[d.type]!
        const id = root.ids()[pick]!
        const query = `query($id: String!, $v: String) { ${root.field} { ${d.field}(${d.arg}: $v) ${d.selection} } }`
        const what = `${query} ${value} ${id}`
        const res = await kit.rest('POST', '/graphql', { body: { query, variables: { id, v: value } } })
        expect(res.status, `${what} -> ${JSON.stringify(res.body).slice(0, 600)}`).toBeLessThan(500)
        const codes = (res.body?.errors ?? []).map((e: any) => e.extensions?.code)
        for (const code of codes)
          expect(['BAD_REQUEST', 'NOT_FOUND'], `${what} -> ${JSON.stringify(res.body).slice(0, 600)}`).toContain(code)
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    )
  }, 120_000)

  it('GraphQL: never a 5xx nor a masked unexpected error, errors with codes and bounded details, nothing written on failure', async () => {
    await fc.assert(
      fc.asyncProperty(graphqlRequest(), async (r) => {
        const text = `{"query":${JSON.stringify(r.query)},"variables":${toJson(r.variables)}}`
        // Mostly JSON, as GraphQL clients send it; the header variants are the REST test's business.
        const headers = { ...r.headers, ...(r.json ? { 'content-type': 'application/json' } : {}) }
        const what = `${text.slice(0, 600)} ${JSON.stringify(r.headers)}`
        const before = await fingerprint(kit)
        const res = await kit.rest('POST', '/graphql', { headers, rawBody: text })
        expect(res.status, `${what} -> ${JSON.stringify(res.body).slice(0, 600)}`).toBeLessThan(500)
        const errors: any[] = res.body?.errors ?? []
        for (const e of errors) {
          const code = e.extensions?.code
          expect(code === 'INTERNAL' || e.message === 'Unexpected error.', `${what} -> ${JSON.stringify(e)}`).toBe(false)
          if (e.extensions?.details !== undefined) checkDetails(e.extensions.details, what)
        }
        if (res.status >= 400 || errors.length) await expectUnchanged(kit, before, what)
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    )
  }, 120_000)
})
