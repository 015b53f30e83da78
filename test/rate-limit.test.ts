import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientKey, createRateLimiter } from '../src/http/rate-limit.js'
import { createListener } from '../src/process/http-listener.js'
import { revokeApiKey } from '../src/auth/api-keys.js'
import { targets } from './kit/databases.js'
import { useKit, type TestKit } from './kit/kit.js'

describe('rate limiter buckets', () => {
  it('keeps a hot key’s spent budget while 250,000 other keys pass through', () => {
    const limiter = createRateLimiter({ perSecond: 1, burst: 5, now: () => 1_000 })
    for (let i = 0; i < 5; i++) expect(limiter.take('hot')).toBe(0)
    expect(limiter.take('hot')).toBeGreaterThan(0)
    let othersRefused = 0
    const hotAllowedAfter: number[] = []
    for (let i = 0; i < 250_000; i++) {
      if (limiter.take(`token-${i}`) > 0) othersRefused++
      // The hot key keeps asking; every time it is still out of budget (no reset of all buckets).
      if (i % 1_000 === 999 && limiter.take('hot') === 0) hotAllowedAfter.push(i + 1)
    }
    expect(othersRefused).toBe(0)
    expect(hotAllowedAfter).toEqual([])
    expect(limiter.size).toBeLessThanOrEqual(100_000)
    expect(limiter.size).toBeGreaterThanOrEqual(99_000)
  })

  it('evicts the least recently used bucket first', () => {
    const limiter = createRateLimiter({ perSecond: 1, burst: 1, maxKeys: 3, now: () => 0 })
    for (const key of ['a', 'b', 'c']) expect(limiter.take(key)).toBe(0)
    expect(limiter.take('a')).toBe(1) // touched: now the most recent
    expect(limiter.take('d')).toBe(0) // full: 'b', the least recently used, goes
    expect(limiter.size).toBe(3)
    expect(limiter.take('a')).toBe(1) // kept, still spent
    expect(limiter.take('c')).toBe(1) // kept, still spent
    expect(limiter.take('b')).toBe(0) // forgotten, starts full again (and pushes out 'd')
    expect(limiter.take('d')).toBe(0)
  })

  it('keys clients by IPv4 address and by IPv6 /64', () => {
    expect(clientKey('203.0.113.7')).toBe('203.0.113.7')
    expect(clientKey('::ffff:203.0.113.7')).toBe('203.0.113.7')
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe(clientKey('2001:db8:1:2:bbbb::2'))
    expect(clientKey('2001:db8:1:2::1')).not.toBe(clientKey('2001:db8:1:3::1'))
    expect(clientKey('not an address')).toBeNull()
  })
})

async function listen(kit: TestKit) {
  const server: Server = createServer(createListener(kit.app, kit.deps))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

// A refill far slower than the test, so the budgets only go down.
const SLOW = {
  RATE_LIMIT_ANONYMOUS_PER_SECOND: '0.01',
  RATE_LIMIT_ANONYMOUS_BURST: '3',
  RATE_LIMIT_PER_SECOND: '0.01',
  RATE_LIMIT_BURST: '3',
}

describe.each(targets)('requests without an API key, over HTTP on $name', (target) => {
  const kit = useKit(target, { env: SLOW })
  let server: Server
  let base: string
  beforeAll(async () => ({ server, base } = await listen(kit)))
  afterAll(() => new Promise((resolve) => server.close(resolve)))

  it('are limited per client address with 429 and Retry-After; keys and health checks are not', async () => {
    const { key } = await kit.seed().account()
    const statuses: number[] = []
    for (let i = 0; i < 3; i++) statuses.push((await fetch(`${base}/api/contacts`)).status)
    expect(statuses).toEqual([401, 401, 401])
    const limited = await fetch(`${base}/api/contacts`)
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(await limited.json()).toEqual({ error: 'Too many requests from this address', code: 'RATE_LIMITED' })
    const graphql = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query":"{__typename}"}',
    })
    expect(graphql.status).toBe(429)
    // The channel API answers in its own error shape, with CORS so browsers can read it.
    const channel = await fetch(`${base}/api/channels/6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f/status`)
    expect(channel.status).toBe(429)
    expect(channel.headers.get('access-control-allow-origin')).toBe('*')
    expect(await channel.json()).toEqual({ error: 'Too many requests from this address' })
    const programs = await fetch(`${base}/api/programs/x`)
    expect(programs.status).toBe(429)
    expect(await programs.json()).toEqual({ error: 'Too many requests from this address' })
    // The same address with an API key spends the key's budget, not the anonymous one.
    for (let i = 0; i < 3; i++)
      expect((await fetch(`${base}/api/contacts`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200)
    expect((await fetch(`${base}/api/contacts`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(429)
    // Another account's key has a budget of its own.
    const other = await kit.seed().account('Other')
    expect((await fetch(`${base}/api/contacts`, { headers: { authorization: `Bearer ${other.key}` } })).status).toBe(200)
    for (const path of ['/healthz', '/readyz']) expect((await fetch(base + path)).status, path).toBe(200)
  })

  it('ignore X-Forwarded-For unless TRUST_PROXY is set', async () => {
    const res = await fetch(`${base}/api/contacts`, { headers: { 'x-forwarded-for': '198.51.100.20' } })
    expect(res.status).toBe(429) // still 127.0.0.1, already out of budget
  })
})

describe.each(targets)('requests without an API key behind a trusted proxy on $name', (target) => {
  const kit = useKit(target, { env: { ...SLOW, TRUST_PROXY: 'true' } })
  let server: Server
  let base: string
  beforeAll(async () => ({ server, base } = await listen(kit)))
  afterAll(() => new Promise((resolve) => server.close(resolve)))

  it('are limited per the last X-Forwarded-For hop', async () => {
    const from = (hops: string) => fetch(`${base}/api/contacts`, { headers: { 'x-forwarded-for': hops } }).then((r) => r.status)
    for (let i = 0; i < 3; i++) expect(await from(`10.9.9.${i}, 198.51.100.20`)).toBe(401)
    expect(await from('198.51.100.20')).toBe(429)
    expect(await from('198.51.100.21')).toBe(401)
    // Without the header, the socket's peer is the client.
    expect(await fetch(`${base}/api/contacts`).then((r) => r.status)).toBe(401)
  })
})

describe.each(targets)('tokens that are not keys, over HTTP on $name', (target) => {
  const kit = useKit(target, { env: SLOW })
  let server: Server
  let base: string
  beforeAll(async () => ({ server, base } = await listen(kit)))
  afterAll(() => new Promise((resolve) => server.close(resolve)))

  it('spend the address budget like no token: random junk, well-formed unknown and revoked keys alike', async () => {
    const junk = (i: number) => [`junk-${i}-${Math.random()}`, `gk_${'0'.repeat(11)}${i % 10}_${'A'.repeat(43)}`][i % 2]!
    const statuses: number[] = []
    for (let i = 0; i < 30; i++) {
      statuses.push(
        (
          await fetch(`${base}/api/channels/6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f/status`, {
            headers: { authorization: `Bearer ${junk(i)}` },
          })
        ).status,
      )
    }
    // The burst of 3, then refused: each new token no longer brings a budget of its own.
    expect(statuses.slice(0, 3)).toEqual([404, 404, 404])
    expect(statuses.slice(3)).toEqual(Array.from({ length: 27 }, () => 429))
    // A real key still has its own budget from the same, spent address.
    const { key } = await kit.seed().account()
    expect((await fetch(`${base}/api/contacts`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200)
    // Once revoked it is a token like any other: the address is spent.
    await kit.rest('GET', '/api/contacts', { key })
    await revokeApiKey(kit.deps, key)
    expect((await fetch(`${base}/api/contacts`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(429)
  })
})

describe.each(targets)('RateLimit headers over HTTP on $name', (target) => {
  const kit = useKit(target, { env: SLOW })
  let server: Server
  let base: string
  beforeAll(async () => ({ server, base } = await listen(kit)))
  afterAll(() => new Promise((resolve) => server.close(resolve)))

  it('tell each client its policy and what is left, on answers and on the 429 (IETF RateLimit, RateLimit-Policy)', async () => {
    // t counts down with the clock: a slow machine may see a second less.
    const left = (policy: string, r: number, t: number) => expect.stringMatching(new RegExp(`^"${policy}";r=${r};t=(${t}|${t - 1})$`))
    const headersOf = (res: Response) => [res.status, res.headers.get('ratelimit-policy'), res.headers.get('ratelimit')]
    // Burst 3 at 0.01 per second: a window of 300 s, each token back after 100 s.
    const anonymous = []
    for (let i = 0; i < 4; i++) anonymous.push(headersOf(await fetch(`${base}/api/programs/x`)))
    expect(anonymous).toEqual([
      [404, '"address";q=3;w=300', left('address', 2, 100)],
      [404, '"address";q=3;w=300', left('address', 1, 200)],
      [404, '"address";q=3;w=300', left('address', 0, 300)],
      [429, '"address";q=3;w=300', left('address', 0, 300)],
    ])
    const { key } = await kit.seed().account()
    const keyed = headersOf(await fetch(`${base}/api/contacts`, { headers: { authorization: `Bearer ${key}` } }))
    expect(keyed).toEqual([200, '"key";q=3;w=300', left('key', 2, 100)])
    // Health checks are never limited, and say nothing about it.
    expect(headersOf(await fetch(`${base}/healthz`))).toEqual([200, null, null])
  })
})
