// Issue 52, "every door has the same locks", in-process on each database (the app behind a real
// HTTP server with its WebSocket door): operations over a socket spend the HTTP budget (per
// account, per address, per IPv6 /64) and get RATE_LIMITED on the operation with the socket left
// open; an account's keys and console sessions share one budget; live keys per account are capped;
// subscription caps count an IPv6 /64 as one client; and a socket checks its credential before
// each operation, so a session ended without any announcement refuses the next one.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { targets } from './kit/databases.js'
import { useKit, type TestKit } from './kit/kit.js'
import { runCli, waitFor } from './kit/server-process.js'
import { createListener } from '../src/process/http-listener.js'
import { createApiKey, revokeApiKey } from '../src/auth/api-keys.js'
import { csrfTokenOf } from '../src/console/sessions.js'

const PROTOCOL = 'graphql-transport-ws'

// A refill far slower than the test, so the budgets only go down.
const SLOW = {
  RATE_LIMIT_ANONYMOUS_PER_SECOND: '0.01',
  RATE_LIMIT_ANONYMOUS_BURST: '3',
  RATE_LIMIT_PER_SECOND: '0.01',
  RATE_LIMIT_BURST: '3',
}

async function listen(kit: TestKit) {
  const server: Server = createServer(createListener(kit.app, kit.deps))
  const sockets = kit.app.attachWebSocket(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const close = () => {
    sockets.close()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return { server, base, close }
}

type Message = { type: string; id?: string; payload?: any }

/** A graphql-transport-ws socket, acknowledged; `run` sends one operation and gives its first answer. */
async function socket(base: string, init: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/graphql`, PROTOCOL, { headers })
  const messages: Message[] = []
  let closeCode: number | null = null
  ws.on('message', (data) => messages.push(JSON.parse(String(data))))
  ws.on('close', (code) => (closeCode = code))
  await new Promise((resolve, reject) => {
    ws.once('open', resolve)
    ws.once('error', reject)
  })
  ws.send(JSON.stringify({ type: 'connection_init', payload: init }))
  await waitFor('connection_ack', () => messages.some((m) => m.type === 'connection_ack') || closeCode !== null, 10_000)
  let next = 0
  return {
    ws,
    get closeCode() {
      return closeCode
    },
    /** The operation's first `next` payload, or its `error` list as `{ errors }`. */
    async run(query: string, variables: Record<string, unknown> = {}): Promise<{ data?: any; errors?: any[] }> {
      const id = String(++next)
      ws.send(JSON.stringify({ type: 'subscribe', id, payload: { query, variables } }))
      const answer = await waitFor(
        `the answer to ${id}`,
        () => messages.find((m) => m.id === id && (m.type === 'next' || m.type === 'error')),
        10_000,
      )
      return answer.type === 'error' ? { errors: answer.payload } : answer.payload
    },
    close: () => ws.close(),
  }
}

const codeOf = (answer: { errors?: any[] }) => answer.errors?.[0]?.extensions?.code

describe.each(targets)('WebSocket operations spend the HTTP budget on $name', (target) => {
  const kit = useKit(target, { env: SLOW })
  let base: string
  let close: () => Promise<void>
  beforeAll(async () => ({ base, close } = await listen(kit)))
  afterAll(() => close())

  it('per account: each operation spends one token, the fourth is RATE_LIMITED on the socket (left open) and HTTP is spent too', async () => {
    const { key } = await kit.seed().account('Budgeted')
    const s = await socket(base, { authorization: `Bearer ${key}` })
    for (let i = 0; i < 3; i++) expect((await s.run('{ account { name } }')).data.account.name).toBe('Budgeted')
    const limited = await s.run('{ account { name } }')
    expect(codeOf(limited)).toBe('RATE_LIMITED')
    expect(limited.errors?.[0]?.message).toBe('Too many requests for this API key')
    expect(s.closeCode).toBeNull()
    expect(s.ws.readyState).toBe(WebSocket.OPEN)
    // A subscribe flood is counted like any operation.
    expect(codeOf(await s.run('subscription { nowPlaying(channel: "nope") { channelName } }'))).toBe('RATE_LIMITED')
    // The socket spent the budget HTTP spends.
    const http = await fetch(`${base}/api/contacts`, { headers: { authorization: `Bearer ${key}` } })
    expect(http.status).toBe(429)
    s.close()
  })

  it('per address without a key: the socket and HTTP from one address share the anonymous budget', async () => {
    const s = await socket(base)
    for (let i = 0; i < 3; i++) expect((await s.run('{ __typename }')).data.__typename).toBe('Query')
    expect(codeOf(await s.run('{ __typename }'))).toBe('RATE_LIMITED')
    expect((await fetch(`${base}/api/contacts`)).status).toBe(429)
    expect(s.ws.readyState).toBe(WebSocket.OPEN)
    s.close()
  })
})

describe.each(targets)('WebSocket budgets behind a trusted proxy on $name', (target) => {
  const kit = useKit(target, { env: { ...SLOW, TRUST_PROXY: 'true' } })
  let base: string
  let close: () => Promise<void>
  beforeAll(async () => ({ base, close } = await listen(kit)))
  afterAll(() => close())

  it('count an IPv6 /64 as one client, like HTTP does', async () => {
    const from = (address: string) => socket(base, {}, { 'x-forwarded-for': address })
    const a = await from('2001:db8:1:2::1')
    for (let i = 0; i < 3; i++) expect((await a.run('{ __typename }')).data).toBeDefined()
    const b = await from('2001:db8:1:2:ffff::9')
    expect(codeOf(await b.run('{ __typename }'))).toBe('RATE_LIMITED')
    const other = await from('2001:db8:1:3::1')
    expect((await other.run('{ __typename }')).data.__typename).toBe('Query')
    for (const s of [a, b, other]) s.close()
  })
})

describe.each(targets)("an account's budget on $name", (target) => {
  const kit = useKit(target, { env: SLOW })
  let base: string
  let close: () => Promise<void>
  beforeAll(async () => ({ base, close } = await listen(kit)))
  afterAll(() => close())

  it('does not grow with its keys: two keys of one account spend one budget; another account has its own', async () => {
    const s = await kit.seed().account('Shared')
    const second = (await createApiKey(kit.deps, s.account.id)).apiKey
    const get = (key: string) => fetch(`${base}/api/contacts`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status)
    expect([await get(s.key), await get(second), await get(s.key)]).toEqual([200, 200, 200])
    expect(await get(second)).toBe(429)
    // The account's WebSocket spends it too.
    const socketOfSecond = await socket(base, { authorization: `Bearer ${second}` })
    expect(codeOf(await socketOfSecond.run('{ account { name } }'))).toBe('RATE_LIMITED')
    socketOfSecond.close()
    const other = await kit.seed().account('Other')
    expect(await get(other.key)).toBe(200)
  })
})

describe.each(targets)('live keys per account on $name', (target) => {
  const kit = useKit(target, { env: { API_KEYS_PER_ACCOUNT: '3' } })

  it('caps live keys per account (API_KEYS_PER_ACCOUNT): createApiKey past it is a CONFLICT and creates nothing; revoking makes room', async () => {
    const s = await kit.seed().account('Capped')
    const create = (label: string) =>
      kit.graphql('mutation($l: String!) { createApiKey(label: $l) { key apiKey { id } } }', { l: label }, s.key)
    expect((await create('two')).data.createApiKey.key).toMatch(/^gk_/)
    expect((await create('three')).data.createApiKey.key).toMatch(/^gk_/)
    const refused = await create('four')
    expect(refused.errors?.[0]?.extensions.code).toBe('CONFLICT')
    expect(refused.errors?.[0]?.message).toBe(
      'The account already has 3 live API keys, the most it may hold; revoke one before creating another',
    )
    expect(await kit.db.apiKey.count({ where: { accountId: s.account.id } })).toBe(3)
    // Concurrent creations cannot both take a place that is not there.
    const raced = await Promise.all([create('five'), create('six')])
    expect(raced.map((r) => r.errors?.[0]?.extensions.code)).toEqual(['CONFLICT', 'CONFLICT'])
    const [, two] = await kit.db.apiKey.findMany({ where: { accountId: s.account.id }, orderBy: { createdAt: 'asc' } })
    await revokeApiKey(kit.deps, two!.id)
    const both = await Promise.all([create('seven'), create('eight')])
    expect(both.filter((r) => r.data?.createApiKey).length).toBe(1)
    expect(both.filter((r) => r.errors?.[0]?.extensions.code === 'CONFLICT').length).toBe(1)
    expect(await kit.db.apiKey.count({ where: { accountId: s.account.id, revokedAt: null } })).toBe(3)
  })

  it("the CLI's apikey:create refuses past the cap with one line and a non-zero exit, creating nothing", async () => {
    const s = await kit.seed().account('Cli capped')
    for (let i = 0; i < 2; i++) await createApiKey(kit.deps, s.account.id)
    const env = { ...process.env, DATABASE_URL: kit.url, API_KEYS_PER_ACCOUNT: '3', LOG_LEVEL: 'warn' }
    const failure = await runCli(env, 'apikey:create', '--account', s.account.id).then(
      () => null,
      (error: { code?: number; stderr?: string }) => error,
    )
    expect(failure?.code).not.toBe(0)
    expect(failure?.stderr?.trim().split('\n')).toHaveLength(1)
    expect(failure?.stderr).toContain('the most it may hold')
    expect(await kit.db.apiKey.count({ where: { accountId: s.account.id } })).toBe(3)
  }, 60_000)
})

describe.each(targets)('subscription caps behind a trusted proxy on $name', (target) => {
  const kit = useKit(target, { env: { TRUST_PROXY: 'true', SUBSCRIPTIONS_PER_IP: '1', SUBSCRIPTIONS_PER_KEY: '50' } })

  it('count an IPv6 /64 as one client, as the rate limiter does', async () => {
    const { key, group } = await kit.seed().account().group()
    const query = `subscription { groupMembership(groupId: "${group.id}") { count } }`
    const open = (address: string) =>
      kit.app.fetch(
        new Request(`http://localhost/graphql?query=${encodeURIComponent(query)}`, {
          headers: { accept: 'text/event-stream', authorization: `Bearer ${key}`, 'x-forwarded-for': address },
        }),
        { req: { socket: { remoteAddress: '127.0.0.1' } } },
      )
    const first = await open('2001:db8:1:2::1')
    expect(first.headers.get('content-type')).toContain('text/event-stream')
    const sameSlash64 = await open('2001:db8:1:2:abcd::7')
    expect(sameSlash64.status).toBe(429)
    expect((await sameSlash64.json()).errors[0].extensions.code).toBe('RATE_LIMITED')
    const otherSlash64 = await open('2001:db8:1:3::1')
    expect(otherSlash64.headers.get('content-type')).toContain('text/event-stream')
    await first.body?.cancel()
    await otherSlash64.body?.cancel()
  })
})

describe.each(targets)('a socket checks its credential before each operation on $name', (target) => {
  const BASE = 'http://127.0.0.1:4000'
  const kit = useKit(target, { env: { PUBLIC_BASE_URL: BASE } })
  let base: string
  let close: () => Promise<void>
  beforeAll(async () => ({ base, close } = await listen(kit)))
  afterAll(() => close())

  it('a session ended without an announcement (no event reached this instance) refuses the next operation with UNAUTHENTICATED', async () => {
    const { key, account } = await kit.seed().account('Quiet')
    const link = (await kit.gql('mutation { createConsoleLink { url } }', {}, key)).createConsoleLink.url as string
    const signedIn = await kit.app.fetch(
      new Request(`${BASE}/console/sign-in`, {
        method: 'POST',
        headers: { origin: BASE, 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${new URL(link).searchParams.get('token')}`,
      }),
    )
    const session = signedIn.headers.get('set-cookie')!.split(';')[0]!.split('=')[1]!
    const s = await socket(base, { csrfToken: csrfTokenOf(session) }, { cookie: `console_session=${session}`, origin: base })
    expect((await s.run('{ account { name } }')).data.account.name).toBe('Quiet')
    // Written straight to the table: nothing is published, so only the per-operation check can see it.
    await kit.db.consoleSession.updateMany({ where: { accountId: account.id }, data: { revokedAt: new Date() } })
    for (const query of ['{ account { name } }', 'mutation { createApiKey(label: "late") { key } }']) {
      expect(codeOf(await s.run(query)), query).toBe('UNAUTHENTICATED')
    }
    expect(await kit.db.apiKey.count({ where: { accountId: account.id } })).toBe(1)
    s.close()
  })
})
