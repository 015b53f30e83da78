import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { waitFor } from './kit/server-process.js'
import { createApp } from '../src/app.js'
import { createListener } from '../src/process/http-listener.js'

// Issue 20 item 8: a client's malformed /graphql request is its 400, never a masked "Unexpected
// error." logged at error level with a stack. Over real HTTP, with the app's logger captured.

interface LogLine {
  level: number
  msg: string
  [field: string]: unknown
}

const ERROR = 50

describe.each(targets)('malformed GraphQL parameters on $name', (target) => {
  const kit = useKit(target)
  const logs: LogLine[] = []
  let server: Server
  let base: string
  let key: string

  beforeAll(async () => {
    const logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) })
    const deps = kit.depsWith({ LOG_LEVEL: 'debug' }, { logger })
    const app = createApp({ deps, ready: kit.database.ready })
    server = createServer(createListener(app, deps))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    key = (await kit.seed().account('Params')).key
  })
  afterAll(() => new Promise((resolve) => server.close(resolve)))

  async function send(path: string, init: RequestInit = {}) {
    const response = await fetch(base + path, {
      ...init,
      headers: { accept: 'application/json', ...(init.headers as Record<string, string>) },
    })
    const text = await response.text()
    return { status: response.status, body: text ? JSON.parse(text) : null }
  }
  const json = (body: string, headers: Record<string, string> = {}) => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  })
  const form = (body: string) => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })
  const bad = (message: string) => ({ status: 400, body: { errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] } })
  const q = encodeURIComponent('{ __typename }')

  it('answers 400 BAD_REQUEST naming the parameter, for GET, form and JSON bodies, and logs nothing at error level', async () => {
    logs.length = 0
    const cases: [string, string, RequestInit | undefined, ReturnType<typeof bad>][] = [
      ['GET variables not JSON', `/graphql?query=${q}&variables={bad`, undefined, bad('The "variables" parameter is not valid JSON')],
      ['GET extensions not JSON', `/graphql?query=${q}&extensions={bad`, undefined, bad('The "extensions" parameter is not valid JSON')],
      [
        'GET variables an array',
        `/graphql?query=${q}&variables=[1]`,
        undefined,
        bad('Expected "variables" param to be empty or an object, but given array.'),
      ],
      [
        'GET variables a number',
        `/graphql?query=${q}&variables=1`,
        undefined,
        bad('Expected "variables" param to be empty or an object, but given number.'),
      ],
      [
        'GET extensions a string',
        `/graphql?query=${q}&extensions="x"`,
        undefined,
        bad('Expected "extensions" param to be empty or an object, but given string.'),
      ],
      [
        'GET operationName twice',
        `/graphql?query=${q}&operationName=A&operationName=B`,
        undefined,
        bad('The "operationName" parameter is given more than once'),
      ],
      ['GET query twice', `/graphql?query=${q}&query=${q}`, undefined, bad('The "query" parameter is given more than once')],
      ['GET without query', '/graphql', undefined, bad('The "query" parameter is required')],
      ['form variables not JSON', '/graphql', form(`query=${q}&variables={bad`), bad('The "variables" parameter is not valid JSON')],
      [
        'JSON variables a string',
        '/graphql',
        json(JSON.stringify({ query: '{ __typename }', variables: '{bad' })),
        bad('Expected "variables" param to be empty or an object, but given string.'),
      ],
      [
        'JSON variables an array',
        '/graphql',
        json(JSON.stringify({ query: '{ __typename }', variables: [1] })),
        bad('Expected "variables" param to be empty or an object, but given array.'),
      ],
      [
        'JSON operationName a number',
        '/graphql',
        json(JSON.stringify({ query: '{ __typename }', operationName: 1 })),
        bad('Expected "operationName" param to be a string, but given number.'),
      ],
      [
        'JSON operationName an object',
        '/graphql',
        json(JSON.stringify({ query: '{ __typename }', operationName: {} })),
        bad('Expected "operationName" param to be a string, but given object.'),
      ],
      [
        'JSON query a number',
        '/graphql',
        json(JSON.stringify({ query: 1 })),
        bad('Expected "query" param to be a string, but given number.'),
      ],
      ['JSON without query', '/graphql', json(JSON.stringify({ variables: {} })), bad('The "query" parameter is required')],
      ['JSON body an array', '/graphql', json('[1]'), bad('Batching is not supported.')],
      // With a valid key the same mistakes are the same 400 (the key changes nothing here).
      [
        'GET variables not JSON, with a key',
        `/graphql?query=${q}&variables={bad`,
        { headers: { authorization: `Bearer ${key}` } },
        bad('The "variables" parameter is not valid JSON'),
      ],
    ]
    const answers: Record<string, unknown> = {}
    const expected: Record<string, unknown> = {}
    for (const [what, path, init, answer] of cases) {
      answers[what] = await send(path, init)
      expected[what] = answer
    }
    expect(answers).toEqual(expected)
    expect(logs.filter((l) => l.level >= ERROR)).toEqual([])
    // Each was logged, once, as the request it was: at info, with its 400.
    expect(logs.filter((l) => l.msg === 'request').map((l) => l.status)).toEqual(cases.map(() => 400))
  })

  it('a body that is not JSON: 400 BAD_REQUEST with the parser message, nothing at error level', async () => {
    logs.length = 0
    const res = await send('/graphql', json('{bad'))
    expect(res.status).toBe(400)
    expect(res.body.errors).toMatchObject([{ message: 'POST body sent invalid JSON.', extensions: { code: 'BAD_REQUEST' } }])
    expect(logs.filter((l) => l.level >= ERROR)).toEqual([])
  })

  it('a body of no GraphQL media type is 415 and another method 405 with Allow, in the GraphQL error shape', async () => {
    logs.length = 0
    expect(await send('/graphql', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{ __typename }' })).toEqual({
      status: 415,
      body: {
        errors: [
          {
            message: 'The body must be application/json (or application/graphql, or a form)',
            extensions: { code: 'UNSUPPORTED_MEDIA_TYPE' },
          },
        ],
      },
    })
    const put = await fetch(base + '/graphql', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect({ status: put.status, allow: put.headers.get('allow'), body: await put.json() }).toEqual({
      status: 405,
      allow: 'GET, POST, OPTIONS',
      body: { errors: [{ message: 'PUT is not allowed on /graphql', extensions: { code: 'METHOD_NOT_ALLOWED' } }] },
    })
    expect(logs.filter((l) => l.level >= ERROR)).toEqual([])
  })

  it('well-formed requests still run: GET with variables, a form body, a named operation', async () => {
    const variables = encodeURIComponent(JSON.stringify({ n: 'Query' }))
    const query = encodeURIComponent('query Echo($n: String!) { __type(name: $n) { name } }')
    const echoed = { status: 200, body: { data: { __type: { name: 'Query' } } } }
    expect(await send(`/graphql?query=${query}&variables=${variables}&operationName=Echo`)).toEqual(echoed)
    expect(await send('/graphql', form(`query=${query}&variables=${variables}`))).toEqual(echoed)
    expect(
      await send(
        '/graphql',
        json(JSON.stringify({ query: 'query Echo { __typename }', operationName: 'Echo', variables: null, extensions: null })),
      ),
    ).toEqual({
      status: 200,
      body: { data: { __typename: 'Query' } },
    })
  })

  it('a client that goes away in the middle of its body is its own 400 at info, not a server fault', async () => {
    const url = new URL(base)
    const auth = { authorization: `Bearer ${key}` }
    const cases: [string, string, Record<string, string>, string][] = [
      ['GraphQL JSON', '/graphql', { 'content-type': 'application/json' }, '{"query":"{ __typ'],
      ['GraphQL form', '/graphql', { 'content-type': 'application/x-www-form-urlencoded' }, 'query=%7B'],
      [
        'GraphQL mutation with Idempotency-Key',
        '/graphql',
        { 'content-type': 'application/json', ...auth, 'idempotency-key': 'gone-1' },
        '{"query":"mutation',
      ],
      ['REST body', '/api/contact/group/create', { 'content-type': 'application/json', ...auth }, '{"name":'],
      [
        'REST body with Idempotency-Key',
        '/api/contact/group/create',
        { 'content-type': 'application/json', ...auth, 'idempotency-key': 'gone-2' },
        '{"name":',
      ],
    ]
    const seen: Record<string, unknown> = {}
    for (const [what, path, headers, part] of cases) {
      logs.length = 0
      await new Promise<void>((resolve) => {
        const req = httpRequest({
          host: url.hostname,
          port: url.port,
          path,
          method: 'POST',
          headers: { ...headers, 'content-length': '1000' },
        })
        req.on('error', () => resolve())
        // Once the part is on the wire, the client hangs up with the rest of its body unsent.
        req.write(part, () => setImmediate(() => (req.destroy(), resolve())))
      })
      const line = await waitFor(`the access line of the abandoned request (${what})`, () => logs.find((l) => l.msg === 'request'), 30_000)
      seen[what] = { path: line.path, status: line.status, errors: logs.filter((l) => l.level >= ERROR) }
    }
    expect(seen).toEqual(Object.fromEntries(cases.map(([what, path]) => [what, { path, status: 400, errors: [] }])))
  })
})
