// The door's stages (src/door/stages/), each on its own: what it answers itself, what it hands on,
// and what it leaves on the request for the next one. The whole door runs in the other test files
// (rate-limit, cors, console-sessions, idempotency, graphql-websocket, door-locks, ...).
import { describe, expect, it } from 'vitest'
import pino from 'pino'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { NO_ADDRESS, NO_CREDENTIALS, pipeline, type Door, type Next, type Stage } from '../src/door/pipeline.js'
import { observeStage } from '../src/door/stages/observe.js'
import { clientAddressStage } from '../src/door/stages/client-address.js'
import { openRoutesStage } from '../src/door/stages/open-routes.js'
import { corsStage } from '../src/door/stages/cors.js'
import { breakerStage } from '../src/door/stages/breaker.js'
import { credentialsStage } from '../src/door/stages/credentials.js'
import { budgetStage } from '../src/door/stages/budget.js'
import { createBudget } from '../src/door/budget.js'
import { createCredentialsStage } from '../src/door/credentials.js'
import { createCorsPolicy } from '../src/http/cors.js'
import { sessionGate } from '../src/console/sessions.js'
import type { AuthenticatedAccount } from '../src/auth/api-keys.js'
import { ALL_SCOPES } from '../src/auth/scopes.js'

const door = (path: string, init: RequestInit = {}, peer?: string): Door => ({
  request: new Request(`http://localhost${path}`, init),
  url: new URL(`http://localhost${path}`),
  server: peer ? { req: { socket: { remoteAddress: peer } } } : undefined,
  requestId: 'test',
  address: NO_ADDRESS,
  credentials: NO_CREDENTIALS,
})
const ok: Next = async () => new Response('next', { status: 200 })
const refuse = (status: number) => () => new Response(null, { status })
const answer =
  (status: number): Next =>
  async () =>
    new Response(null, { status })

describe('pipeline', () => {
  it('runs the stages in the listed order, the first outermost, and ends with the route', async () => {
    const seen: string[] = []
    const stage =
      (name: string): Stage =>
      async (d, next) => {
        seen.push(`${name} in`)
        const response = await next(d)
        seen.push(`${name} out`)
        return response
      }
    const handle = pipeline([stage('a'), stage('b')], async () => {
      seen.push('route')
      return new Response('routed')
    })
    expect(await (await handle(door('/x'))).text()).toBe('routed')
    expect(seen).toEqual(['a in', 'b in', 'route', 'b out', 'a out'])
  })
})

describe('observe', () => {
  it('gives every answer its request id, keeps a sane incoming one, and answers a thrown error with a 500', async () => {
    const observed: number[] = []
    const observe = observeStage({
      logger: pino({ level: 'silent' }),
      metrics: { observeRequest: (_m, _p, status) => observed.push(status) },
    })
    const kept = await observe(door('/x', { headers: { 'x-request-id': 'abc-1' } }), ok)
    expect(kept.headers.get('x-request-id')).toBe('abc-1')
    const fresh = await observe(door('/x', { headers: { 'x-request-id': 'bad id with spaces' } }), ok)
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    const failed = await observe(door('/x'), async () => {
      throw new Error('boom')
    })
    expect(failed.status).toBe(500)
    expect(await failed.json()).toEqual({
      error: `Internal server error (request id ${failed.headers.get('x-request-id')})`,
      code: 'INTERNAL',
    })
    expect(observed).toEqual([200, 200, 500])
  })
})

describe('client address', () => {
  it('is the peer, or behind a trusted proxy the last X-Forwarded-For hop; IPv6 is keyed per /64', async () => {
    let seen: Door['address'] = NO_ADDRESS
    const capture: Next = async (d) => {
      seen = d.address
      return new Response()
    }
    const forwarded = { headers: { 'x-forwarded-for': '10.0.0.1, 2001:db8:1:2::77' } }
    await clientAddressStage(false)(door('/x', forwarded, '203.0.113.9'), capture)
    expect(seen).toEqual({ address: '203.0.113.9', key: '203.0.113.9' })
    await clientAddressStage(true)(door('/x', forwarded, '203.0.113.9'), capture)
    expect(seen).toEqual({ address: '2001:db8:1:2::77', key: '2001:db8:1:2::/64' })
    await clientAddressStage(true)(door('/x'), capture)
    expect(seen).toEqual(NO_ADDRESS)
  })
})

describe('open routes', () => {
  const stage = openRoutesStage({
    ready: async () => true,
    metrics: null,
    pages: (_r, url) => (url.pathname === '/' ? new Response('home') : null),
    isConsolePath: (path) => path.startsWith('/console'),
    console: async () => new Response('console'),
  })
  it('answers health, readiness, pages and the console itself, and hands everything else on', async () => {
    expect(await (await stage(door('/healthz'), ok)).json()).toEqual({ status: 'ok' })
    expect(await (await stage(door('/readyz'), ok)).json()).toEqual({ status: 'ready' })
    expect(await (await stage(door('/'), ok)).text()).toBe('home')
    expect(await (await stage(door('/console'), ok)).text()).toBe('console')
    expect((await stage(door('/metrics'), answer(404))).status).toBe(404)
    expect(await (await stage(door('/api/contacts'), ok)).text()).toBe('next')
  })
})

describe('cors', () => {
  const stage = corsStage(createCorsPolicy({ origins: ['https://app.example'], publicBaseUrl: 'http://localhost' }))
  it('answers the /graphql preflight itself, puts the policy on /graphql answers (refusals too), and leaves other paths alone', async () => {
    const preflight = await stage(
      door('/graphql', { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } }),
      answer(500),
    )
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example')
    const limited = await stage(door('/graphql', { headers: { origin: 'https://app.example' } }), answer(429))
    expect(limited.status).toBe(429)
    expect(limited.headers.get('access-control-allow-origin')).toBe('https://app.example')
    const rest = await stage(door('/api/contacts', { headers: { origin: 'https://app.example' } }), ok)
    expect(rest.headers.get('access-control-allow-origin')).toBeNull()
  })
})

describe('breaker', () => {
  it('answers 503 while the database breaker is open, without going on', async () => {
    const breaker = { open: true }
    const stage = breakerStage(breaker, refuse(503))
    expect((await stage(door('/api/contacts'), ok)).status).toBe(503)
    breaker.open = false
    expect((await stage(door('/api/contacts'), ok)).status).toBe(200)
  })
})

describe('budget', () => {
  const budget = createBudget({
    RATE_LIMIT_PER_SECOND: 0.01,
    RATE_LIMIT_BURST: 2,
    RATE_LIMIT_ANONYMOUS_PER_SECOND: 0.01,
    RATE_LIMIT_ANONYMOUS_BURST: 1,
  })
  const stage = budgetStage(budget, (_d, message, wait) => new Response(message, { status: 429, headers: { 'retry-after': String(wait) } }))
  const account: AuthenticatedAccount = {
    id: 'acc',
    name: 'A',
    timezone: 'UTC',
    keyId: 'k1',
    keyPrefix: 'gk_k1',
    scopes: ALL_SCOPES,
    keyExpiresAt: null,
  }
  const keyed = (keyId: string): Door => ({
    ...door('/x'),
    address: { address: '203.0.113.1', key: '203.0.113.1' },
    credentials: {
      ...NO_CREDENTIALS,
      token: `token-${keyId}`,
      verified: Promise.resolve({ ...account, keyId }),
      account: { ...account, keyId },
    },
  })
  it("spends the account's budget for every key of it, and the address's without a credential", async () => {
    expect((await stage(keyed('k1'), ok)).headers.get('ratelimit')).toMatch(/^"key";r=1;/)
    expect((await stage(keyed('k2'), ok)).status).toBe(200)
    const refused = await stage(keyed('k3'), ok)
    expect([refused.status, await refused.text()]).toEqual([429, 'Too many requests for this API key'])
    const anonymous = { ...door('/x'), address: { address: '198.51.100.1', key: '198.51.100.1' } }
    expect((await stage(anonymous, ok)).status).toBe(200)
    expect((await stage(anonymous, ok)).status).toBe(429)
    // In-process callers (no address) without a credential are not counted.
    expect((await stage(door('/x'), ok)).headers.get('ratelimit')).toBeNull()
  })
})

describe.each(targets)('credentials on $name', (target) => {
  const kit = useKit(target)
  it('finds the account of a live key, none for an unknown one, and leaves a key without an address to the context', async () => {
    const { key, account } = await kit.seed().account('Creds')
    const stage = credentialsStage(createCredentialsStage(kit.deps), sessionGate('http://localhost'), refuse(503))
    let seen: Door['credentials'] = NO_CREDENTIALS
    const capture: Next = async (d) => {
      seen = d.credentials
      return new Response()
    }
    const withAddress = (token: string): Door => ({
      ...door('/api/contacts', { headers: { authorization: `Bearer ${token}` } }),
      address: { address: '203.0.113.1', key: '203.0.113.1' },
    })
    await stage(withAddress(key), capture)
    expect(seen.account?.id).toBe(account.id)
    await stage(withAddress(`gk_000000000000_${'A'.repeat(43)}`), capture)
    expect(seen.account).toBeNull()
    await stage(door('/api/contacts', { headers: { authorization: `Bearer ${key}` } }), capture)
    expect([seen.token, seen.verified, seen.account]).toEqual([key, undefined, undefined])
    // A cookie without its CSRF token is no session: the request is anonymous.
    await stage(door('/graphql', { headers: { cookie: 'console_session=x' } }), capture)
    expect(seen.session).toBeNull()
  })
})
