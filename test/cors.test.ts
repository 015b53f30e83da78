import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { createApp, type App } from '../src/app.js'
import { parseEnv } from '../src/core/env.js'
import { createCorsPolicy } from '../src/http/cors.js'

// Issue 17 item 5: /graphql echoed any Origin with Allow-Credentials (Yoga's default CORS). The
// policy now: `*` without credentials for everyone, credentials only for CORS_ORIGINS.

const LISTED = 'https://console.example'
const EVIL = 'https://evil.example'
const CHANNEL = '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f'

/** The CORS headers of an answer (and Vary), as one object, so a failure shows them all. */
function corsOf(answer: Response | Headers): Record<string, string> {
  const picked: Record<string, string> = {}
  for (const [name, value] of 'status' in answer ? answer.headers : answer)
    if (name.startsWith('access-control-') || name === 'vary') picked[name] = value
  return picked
}

const OPEN = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'X-Request-Id, Idempotency-Replayed, Retry-After' }
const PREFLIGHT = {
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'Authorization, Content-Type, Idempotency-Key, X-Request-Id',
  'access-control-max-age': '86400',
}

describe.each(targets)('CORS on $name', (target) => {
  const kit = useKit(target, { env: { CORS_ORIGINS: `${LISTED}, http://localhost:5173` } })
  /** The same database with CORS_ORIGINS unset (the default). */
  const unlisted = (): App =>
    createApp({
      deps: kit.depsWith(),
      ready: kit.database.ready,
    })

  const post = (app: App, headers: Record<string, string>, query = '{ __typename }') =>
    app.fetch(
      new Request('http://localhost/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query }),
      }),
    )
  const preflight = (app: App, origin: string, method = 'POST', requested = 'authorization, content-type, idempotency-key') =>
    app.fetch(
      new Request('http://localhost/graphql', {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': requested },
      }),
    )

  it('by default: any origin reads /graphql with `*` and no credentials, a Bearer key included', async () => {
    const app = unlisted()
    const { key } = await kit.seed().account('Cors default')
    const anonymous = await post(app, { origin: EVIL })
    expect({ status: anonymous.status, cors: corsOf(anonymous), body: await anonymous.json() }).toEqual({
      status: 200,
      cors: OPEN,
      body: { data: { __typename: 'Query' } },
    })
    const keyed = await post(app, { origin: EVIL, authorization: `Bearer ${key}` }, '{ contacts { pageInfo { total } } }')
    expect({ status: keyed.status, cors: corsOf(keyed), body: await keyed.json() }).toEqual({
      status: 200,
      cors: OPEN,
      body: { data: { contacts: { pageInfo: { total: 0 } } } },
    })
    const get = await app.fetch(
      new Request('http://localhost/graphql?query=%7B__typename%7D', { headers: { origin: EVIL, accept: 'application/json' } }),
    )
    expect(corsOf(get)).toEqual(OPEN)
    // A refusal can be read by the page too (its code tells the integration what went wrong).
    const refused = await post(app, { origin: EVIL, authorization: 'Bearer gk_000000000000_nope' }, '{ contacts { pageInfo { total } } }')
    expect(corsOf(refused)).toEqual(OPEN)
  })

  it('by default: a preflight from any origin allows Authorization, Content-Type and Idempotency-Key, without credentials', async () => {
    const res = await preflight(unlisted(), EVIL)
    expect({ status: res.status, allow: res.headers.get('allow'), cors: corsOf(res) }).toEqual({
      status: 204,
      allow: 'GET, POST, OPTIONS',
      cors: { ...OPEN, ...PREFLIGHT },
    })
  })

  it('a listed origin gets its origin echoed with Allow-Credentials, and every answer says Vary: Origin', async () => {
    const listed = await post(kit.app, { origin: LISTED })
    expect(corsOf(listed)).toEqual({
      ...OPEN,
      'access-control-allow-origin': LISTED,
      'access-control-allow-credentials': 'true',
      vary: 'Origin',
    })
    const local = await post(kit.app, { origin: 'http://localhost:5173' })
    expect(corsOf(local)).toEqual({
      ...OPEN,
      'access-control-allow-origin': 'http://localhost:5173',
      'access-control-allow-credentials': 'true',
      vary: 'Origin',
    })
  })

  it('an unlisted origin, next to listed ones, gets no credentials and never its origin back', async () => {
    for (const origin of [EVIL, `${LISTED}.evil.example`, 'https://console.example:8443', 'http://console.example', 'null']) {
      const res = await post(kit.app, { origin })
      expect(corsOf(res), origin).toEqual({ ...OPEN, vary: 'Origin' })
    }
    // No Origin at all (a server-side client): the same open answer.
    expect(corsOf(await post(kit.app, {}))).toEqual({ ...OPEN, vary: 'Origin' })
  })

  it('preflights answer each origin as its requests will be answered', async () => {
    const listed = await preflight(kit.app, LISTED)
    expect({ status: listed.status, cors: corsOf(listed) }).toEqual({
      status: 204,
      cors: { ...OPEN, ...PREFLIGHT, 'access-control-allow-origin': LISTED, 'access-control-allow-credentials': 'true', vary: 'Origin' },
    })
    const evil = await preflight(kit.app, EVIL, 'GET', 'authorization')
    expect({ status: evil.status, cors: corsOf(evil) }).toEqual({ status: 204, cors: { ...OPEN, ...PREFLIGHT, vary: 'Origin' } })
  })

  it('the public channel API stays `*` without credentials, for listed and unlisted origins alike', async () => {
    for (const origin of [LISTED, EVIL]) {
      const res = await kit.rest('GET', `/api/channels/${CHANNEL}/status`, { headers: { origin } })
      expect(res.status).toBe(404)
      expect(corsOf(res.headers), origin).toEqual({
        'access-control-allow-origin': '*',
        'access-control-expose-headers': 'ETag, X-Request-Id, Link, X-Total-Count',
      })
      const pre = await kit.app.fetch(
        new Request(`http://localhost/api/channels/${CHANNEL}/status`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'GET' },
        }),
      )
      expect(pre.status).toBe(204)
      expect(pre.headers.get('access-control-allow-origin')).toBe('*')
      expect(pre.headers.get('access-control-allow-credentials')).toBeNull()
    }
  })
})

describe('CORS policy and CORS_ORIGINS', () => {
  it('accepts an ambient credential only without Origin, from the service itself, or from a listed origin', () => {
    const policy = createCorsPolicy({ origins: [LISTED], publicBaseUrl: 'https://sms.example/base' })
    const from = (origin?: string) =>
      policy.acceptsCredentialsFrom(new Request('https://sms.example/graphql', { headers: origin ? { origin } : {} }))
    expect({ none: from(), own: from('https://sms.example'), listed: from(LISTED), evil: from(EVIL), nullOrigin: from('null') }).toEqual({
      none: true,
      own: true,
      listed: true,
      evil: false,
      nullOrigin: false,
    })
  })

  it('parses a comma-separated list of exact origins, empty by default', () => {
    expect(parseEnv({}).CORS_ORIGINS).toEqual([])
    expect(parseEnv({ CORS_ORIGINS: 'https://a.example, http://localhost:5173,' }).CORS_ORIGINS).toEqual([
      'https://a.example',
      'http://localhost:5173',
    ])
  })

  it('refuses anything that is not an origin, naming it', () => {
    const problem = (value: string) => {
      try {
        parseEnv({ CORS_ORIGINS: value })
        return 'accepted'
      } catch (error) {
        return (error as Error).message
      }
    }
    const advice = 'is not an origin: write scheme://host[:port] with no path, such as https://app.example'
    expect(
      ['https://a.example/', '*', 'null', 'https://A.example', 'https://a.example:443', 'ftp://a.example', 'https://a.example/app'].map(
        problem,
      ),
    ).toEqual([
      `Invalid configuration:\n  CORS_ORIGINS: "https://a.example/" ${advice}`,
      `Invalid configuration:\n  CORS_ORIGINS: "*" ${advice}`,
      `Invalid configuration:\n  CORS_ORIGINS: "null" ${advice}`,
      `Invalid configuration:\n  CORS_ORIGINS: "https://A.example" ${advice}`,
      `Invalid configuration:\n  CORS_ORIGINS: "https://a.example:443" ${advice}`,
      `Invalid configuration:\n  CORS_ORIGINS: "ftp://a.example" ${advice}`,
      `Invalid configuration:\n  CORS_ORIGINS: "https://a.example/app" ${advice}`,
    ])
  })
})
