import type { ChildProcess } from 'node:child_process'
import { request as httpRequest } from 'node:http'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getIntrospectionQuery } from 'graphql'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { spawnServer } from './kit/server-process.js'
import { schema } from '../src/graphql/schema.js'
import { restRoutes } from '../rest-compat/routes.js'
import { checkDocumentLimits } from '../src/graphql/limits/check-document-limits.js'
import { graphqlLimits } from '../src/graphql/limits/limits.js'
import { graphql } from '../src/graphql/typed-documents.js'

// The attacks of issue 7 against the real server (src/process/server.ts in a child process): each must be
// refused quickly with a clear code, while /healthz keeps answering and memory stays flat.

const NESTED_PAGES =
  '{ contacts(perPage:100) { nodes { groups { contacts(perPage:100) { nodes { groups { contacts(perPage:100) { nodes { id } } } } } } } } }'
const argumentRepeats = (n: number) => `{ contacts(${'perPage:1 '.repeat(n)}) { nodes { id } } }`

interface Answer {
  status: number
  body: any
  ms: number
}

/** One HTTP request with node:http, so a body can be sent with or without Content-Length. */
function send(base: string, options: { method?: string; path?: string; key?: string; body?: Buffer; chunked?: boolean }): Promise<Answer> {
  const started = performance.now()
  const url = new URL(options.path ?? '/graphql', base)
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
  if (options.key) headers.authorization = `Bearer ${options.key}`
  if (options.body && !options.chunked) headers['content-length'] = String(options.body.length)
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'POST', headers, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d) => (text += d))
      res.on('end', () => {
        let body: unknown = text
        try {
          body = JSON.parse(text)
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode!, body, ms: performance.now() - started })
      })
    })
    // The server may answer and close before the whole request is written: the answer still counts.
    req.on('error', (error) => (/EPIPE|ECONNRESET/.test(String(error)) ? setTimeout(() => reject(error), 2000) : reject(error)))
    if (options.body && options.chunked) {
      const chunk = 64 * 1024
      for (let i = 0; i < options.body.length; i += chunk) req.write(options.body.subarray(i, i + chunk))
    } else if (options.body) req.write(options.body)
    req.end()
  })
}

const query = (text: string) => Buffer.from(JSON.stringify({ query: text }))

/**
 * The CPU time the server's main thread (its event loop) has spent, in ms: utime + stime of
 * /proc/<pid>/task/<pid>/stat, in clock ticks of 10 ms. Unlike the wall time of an answer it does
 * not grow with the machine's load, so its bound holds on a busy CI machine and a quiet one alike.
 */
function mainThreadCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/**
 * The most event-loop CPU a refused attack may cost. Refused, each cost 0 to 20 ms here (none to two
 * clock ticks: reading the body, the refusal and its answer). Let through, the same documents would
 * cost far more: the nested pages resolve a hundred thousand contacts and more from the 40 seeded,
 * the alias bomb runs 200 pages, 16,000 or 100,000 arguments go through graphql-js's parser and
 * validator (docs/security.md, "GraphQL request limits"). A bound in CPU rather than in wall time:
 * under load an answer waits for a core, not for the service, while the CPU the event loop spends
 * on the attack is what every other request waits behind.
 */
const ATTACK_CPU_MS = 150

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!
  return Number(line.replace(/\D+/g, '')) * 1024
}

describe.each(targets)('GraphQL attacks against the real server on $name', (target) => {
  const kit = useKit(target)
  let server: ChildProcess
  let base: string
  let key: string
  let rssBefore: number

  beforeAll(async () => {
    const s = await kit.seed().account().group({ name: 'Alpha' }).contacts(40).group({ name: 'Beta' })
    await kit.gql(
      graphql(`mutation($g: ID!, $c: [SaveContactInput!]!) { addContactsToGroup(groupId: $g, contacts: $c) { enlisted } }`),
      { g: s.group.id, c: s.contacts.map((c) => ({ mobile: c.mobile, firstName: c.firstName })) },
      s.key,
    )
    key = s.key
    const spawned = spawnServer({ DATABASE_URL: kit.url, WORKER_ENABLED: 'false' })
    server = spawned.child
    base = await spawned.listening(60_000)
    // Warm up (module loading, JIT, the first database round trip) before measuring memory.
    for (let i = 0; i < 3; i++) await send(base, { key, body: query('{ contacts(perPage: 100) { nodes { id groups { name } } } }') })
    rssBefore = rssBytes(server.pid!)
  }, 90_000)

  afterAll(async () => {
    if (!server || server.exitCode !== null) return
    const exited = new Promise((r) => server.once('exit', r))
    server.kill('SIGTERM')
    await exited
  })

  /**
   * Sends the attack twice: alone, measuring the CPU the server's event loop spends on it, then
   * again while polling /healthz, which must answer 200 throughout. The polls' own CPU grows with
   * the wall time, so it is kept out of the measured run.
   */
  async function attack(options: Parameters<typeof send>[1]) {
    const cpuBefore = mainThreadCpuMs(server.pid!)
    const alone = await send(base, options)
    const cpuMs = mainThreadCpuMs(server.pid!) - cpuBefore
    let healthPolls = 0
    let done = false
    const health = (async () => {
      while (!done) {
        const h = await send(base, { method: 'GET', path: '/healthz' })
        expect(h.status).toBe(200)
        healthPolls++
        await new Promise((r) => setTimeout(r, 5))
      }
    })()
    const answer = await send(base, options)
    done = true
    await health
    expect(answer.status).toBe(alone.status)
    return { ...answer, cpuMs, healthPolls }
  }

  const refusals: [string, () => Parameters<typeof send>[1], number, string, RegExp][] = [
    [
      'an argument repeated 16,000 times',
      () => ({ body: query(argumentRepeats(16_000)) }),
      400,
      'BAD_REQUEST',
      /longer than 32768 characters/,
    ],
    [
      'an argument repeated 100,000 times',
      () => ({ body: query(argumentRepeats(100_000)) }),
      400,
      'BAD_REQUEST',
      /longer than 32768 characters/,
    ],
    [
      'an argument repeated 3,000 times in under 32 KiB',
      () => ({ body: query(`{ contacts(${'perPage:1,'.repeat(3000)}) { nodes { id } } }`) }),
      400,
      'BAD_REQUEST',
      /more than 2000 tokens/,
    ],
    [
      '3,000 levels of nesting',
      () => ({ body: query(`{ contacts ${'{nodes'.repeat(3000)}${'}'.repeat(3001)}`) }),
      400,
      'BAD_REQUEST',
      /nests deeper than 40/,
    ],
    [
      'nested pages of 100 without a key',
      () => ({ body: query(NESTED_PAGES) }),
      400,
      'BAD_REQUEST',
      /Query cost \d+ is over the limit of 10000/,
    ],
    [
      'nested pages of 100 with a key',
      () => ({ key, body: query(NESTED_PAGES) }),
      400,
      'BAD_REQUEST',
      /Query cost \d+ is over the limit of 10000/,
    ],
    [
      'an alias bomb',
      () => ({
        key,
        body: query(`{ ${Array.from({ length: 200 }, (_, i) => `a${i}: contacts(perPage: 100) { nodes { id } }`).join(' ')} }`),
      }),
      400,
      'BAD_REQUEST',
      /more than 2000 tokens/,
    ],
    [
      '31 aliases',
      () => ({ key, body: query(`{ ${Array.from({ length: 31 }, (_, i) => `a${i}: __typename`).join(' ')} }`) }),
      400,
      'BAD_REQUEST',
      /More than 30 aliases/,
    ],
    [
      'a field repeated 1,000 times',
      () => ({ key, body: query(`{ contacts(perPage: 100) { nodes { ${'id '.repeat(1000)}} } }`) }),
      400,
      'BAD_REQUEST',
      /selected more than 10 times/,
    ],
    [
      '6 MiB with Content-Length',
      () => ({ key, body: Buffer.alloc(6 * 1024 * 1024, 'a') }),
      413,
      'PAYLOAD_TOO_LARGE',
      /larger than 5242880 bytes/,
    ],
    [
      '6 MiB without Content-Length',
      () => ({ key, body: Buffer.alloc(6 * 1024 * 1024, 'a'), chunked: true }),
      413,
      'PAYLOAD_TOO_LARGE',
      /larger than 5242880 bytes/,
    ],
  ]

  it.each(refusals)('refuses %s cheaply while /healthz answers', async (_name, options, status, code, message) => {
    const answer = await attack(options())
    expect(answer.status).toBe(status)
    expect(answer.body.errors).toEqual([
      expect.objectContaining({ message: expect.stringMatching(message), extensions: expect.objectContaining({ code }) }),
    ])
    expect(answer.cpuMs).toBeLessThanOrEqual(ATTACK_CPU_MS)
    expect(answer.healthPolls).toBeGreaterThan(0)
  })

  it('refuses a huge GET query string before reading it (Node answers 431 above 16 KiB of headers)', async () => {
    const answer = await attack({ method: 'GET', path: `/graphql?query=${encodeURIComponent(argumentRepeats(2_000))}` })
    expect(answer.status).toBe(431)
    expect(answer.cpuMs).toBeLessThanOrEqual(ATTACK_CPU_MS)
  })

  it('refuses an over-limit document in a GET query string with BAD_REQUEST', async () => {
    const answer = await attack({ method: 'GET', path: `/graphql?query=${encodeURIComponent(`{ ${'__typename '.repeat(11)}}`)}` })
    expect(answer.status).toBe(400)
    expect(answer.body.errors[0].extensions.code).toBe('BAD_REQUEST')
  })

  it('still answers normal queries: a contacts page with groups', async () => {
    const answer = await send(base, {
      key,
      body: query('{ contacts(perPage: 100) { nodes { id firstName groups { name } } pageInfo { total } } }'),
    })
    expect(answer.status).toBe(200)
    expect(answer.body.errors).toBeUndefined()
    expect(answer.body.data.contacts.pageInfo.total).toBe(40)
    expect(answer.body.data.contacts.nodes).toHaveLength(40)
    expect(answer.body.data.contacts.nodes[0].groups.map((g: { name: string }) => g.name).sort()).toEqual(['Alpha', 'Beta'])
  })

  it('grew by less than 100 MiB of RSS over every attack', () => {
    const growth = rssBytes(server.pid!) - rssBefore
    expect(growth).toBeLessThan(100 * 1024 * 1024)
  })
})

describe.each(targets)('GraphQL document limits on $name', (target) => {
  const kit = useKit(target)

  const over: [string, string, RegExp][] = [
    ['too long', `{ contacts(search: "${'x'.repeat(graphqlLimits.maxDocumentLength)}") { nodes { id } } }`, /longer than 32768 characters/],
    ['too many lines', `${'\n'.repeat(1000)}{ __typename }`, /more than 1000 lines/],
    ['too many tokens', `{ ${Array.from({ length: 700 }, (_, i) => `f${i}(a: 1)`).join(' ')} }`, /more than 2000 tokens/],
    ['nested too deep in values', `{ contacts(search: ${'['.repeat(41)}${']'.repeat(41)}) { nodes { id } } }`, /nests deeper than 40/],
    [
      'too many arguments',
      `{ contacts(${Array.from({ length: 17 }, (_, i) => `a${i}: 1`).join(' ')}) { nodes { id } } }`,
      /More than 16 arguments/,
    ],
    [
      'too many input object fields',
      `{ contacts(search: {${Array.from({ length: 17 }, (_, i) => `a${i}: 1`).join(' ')}}) { nodes { id } } }`,
      /More than 16 fields in one input object/,
    ],
    [
      'too many variables',
      `query(${Array.from({ length: 51 }, (_, i) => `$v${i}: Int`).join(' ')}) { __typename }`,
      /More than 50 variables/,
    ],
    ['too many directives', `{ __typename ${'@skip(if: false) '.repeat(9)}}`, /More than 8 directives/],
    [
      'too many definitions',
      `{ ...F0 } ${Array.from({ length: 100 }, (_, i) => `fragment F${i} on Query { __typename }`).join(' ')}`,
      /More than 100 operations and fragments/,
    ],
    ['a field repeated 11 times', `{ ${'__typename '.repeat(11)}}`, /selected more than 10 times/],
    ['a field repeated through inline fragments', `{ ${'... on Query { __typename } '.repeat(11)}}`, /selected more than 10 times/],
    [
      'too deep',
      `{ contacts { nodes { ${'groups { contacts { nodes { '.repeat(4)}id${' } } }'.repeat(4)} } } }`,
      /depth 15 is over the limit of 12/,
    ],
    [
      'introspection nesting 4 lists',
      '{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }',
      /Introspection nests more than 3 lists/,
    ],
    [
      'a costly page inside a page',
      '{ groups(perPage: 100) { nodes { contacts(perPage: 100) { nodes { id } } } } }',
      /Query cost 20\d\d\d is over the limit/,
    ],
    [
      'nested connections of 100',
      '{ groupsConnection(first: 100) { edges { node { contactsConnection(first: 100) { edges { node { uuid } } } } } } }',
      /Query cost 20302 is over the limit/,
    ],
    [
      'a costly page by variable',
      'query($n: Int) { groups(perPage: $n) { nodes { contacts(perPage: 60) { nodes { id } } } } }',
      /Query cost \d+ is over the limit/,
    ],
    [
      'a fragment fan-out',
      `query { ...F0 } ${Array.from({ length: 30 }, (_, i) => `fragment F${i} on Query { ${i < 29 ? `...F${i + 1} ... on Query { ...F${i + 1} }` : '__typename'} }`).join(' ')}`,
      /Query cost \d+ is over the limit/,
    ],
  ]

  it.each(over)('refuses a document with %s: 400 BAD_REQUEST, nothing executed', async (_name, document, message) => {
    const { key } = await kit.seed().account()
    const res = await kit.rest('POST', '/graphql', { key, body: { query: document } })
    expect(res.status).toBe(400)
    expect(res.body.data).toBeUndefined()
    expect(res.body.errors).toEqual([
      expect.objectContaining({ message: expect.stringMatching(message), extensions: { code: 'BAD_REQUEST' } }),
    ])
  })

  it('accepts what is at the limits: 30 aliases, depth 12, a page of 100 with groups', async () => {
    const { key } = await kit.seed().account()
    await kit.gql(`{ ${Array.from({ length: 30 }, (_, i) => `a${i}: __typename`).join(' ')} }`, {}, key)
    await kit.gql(
      `{ contacts(perPage: 1) { nodes { ${'groups { contacts(perPage: 1) { nodes { '.repeat(3)}id${' } } }'.repeat(3)} } } }`,
      {},
      key,
    )
    await kit.gql(
      graphql('{ contacts(perPage: 100) { nodes { id mobile firstName groups { name } } pageInfo { total pageCount } } }'),
      {},
      key,
    )
    await kit.gql(
      graphql(
        '{ contactsConnection(first: 100) { totalCount edges { cursor node { id mobile firstName groups { name } } } pageInfo { hasNextPage endCursor } } }',
      ),
      {},
      key,
    )
  })

  it('accepts the introspection query GraphiQL sends', async () => {
    const res = await kit.rest('POST', '/graphql', {
      body: {
        query: getIntrospectionQuery({
          descriptions: true,
          specifiedByUrl: true,
          directiveIsRepeatable: true,
          schemaDescription: true,
          inputValueDeprecation: true,
        }),
      },
    })
    expect(res.status).toBe(200)
    expect(res.body.data.__schema.queryType.name).toBe('Query')
  })

  it('refuses a POST body over BODY_LIMIT_BYTES in-process as well, and a GET query string over its limit', async () => {
    const big = await kit.rest('POST', '/graphql', {
      rawBody: JSON.stringify({ query: '{ __typename }', pad: 'x'.repeat(6 * 1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    })
    expect(big.status).toBe(413)
    expect(big.body).toEqual({ errors: [{ message: 'The body is larger than 5242880 bytes', extensions: { code: 'PAYLOAD_TOO_LARGE' } }] })
    const long = await kit.rest('GET', `/graphql?query=${'x'.repeat(graphqlLimits.maxQueryStringLength)}`, {
      headers: { accept: 'application/json' },
    })
    expect(long.status).toBe(400)
    expect(long.body.errors[0].extensions.code).toBe('BAD_REQUEST')
  })
})

describe('GraphQL limits and the REST layer', () => {
  it('every REST document fits the limits at its largest page size', () => {
    for (const route of restRoutes) {
      expect(checkDocumentLimits(schema, route.document)?.message, `${route.method} ${route.path}`).toBeUndefined()
    }
  })
})
