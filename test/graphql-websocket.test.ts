// GraphQL over WebSocket (graphql-transport-ws) against real server processes on each database:
// the graphql-ws client and urql (over that client) for queries, mutations and subscriptions, the
// console's cookie, the shared subscription caps, the protocol's close codes, keep-alive pings,
// 1001 on SIGTERM, and on PostgreSQL an event raised on one instance reaching a socket on another.
import type { ChildProcess } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { createClient, type Client } from 'graphql-ws'
import { Client as UrqlClient, subscriptionExchange, fetchExchange, gql } from '@urql/core'
import { runCli, spawnServer, waitFor } from './kit/server-process.js'
import { targets, type TestDatabase } from './kit/databases.js'
import { csrfTokenOf } from '../src/console/sessions.js'
import { CONSOLE_DOCUMENTS } from '../src/console/documents.js'

const PROTOCOL = 'graphql-transport-ws'

describe.each(targets)('GraphQL over WebSocket on $name', (target) => {
  let database: TestDatabase
  let env: Record<string, string | undefined>
  const servers: ChildProcess[] = []
  let http: string
  let other: string
  let key: string
  let accountId: string
  const clients: Client[] = []

  const cli = (...args: string[]) => runCli(env, ...args)

  beforeAll(async () => {
    database = await target.create()
    env = { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: '0' }
    const created = JSON.parse(await cli('account:create', '--name', 'Sockets'))
    key = created.apiKey
    accountId = created.account.uuid
    const a = spawnServer({ ...env, LOG_LEVEL: 'info', SUBSCRIPTIONS_PER_KEY: '3', SUBSCRIPTION_KEEPALIVE_MS: '300' })
    servers.push(a.child)
    // On PostgreSQL a second instance raises the events (the bus carries them); on SQLite the same one.
    const b = target.name === 'postgresql' ? spawnServer({ ...env, LOG_LEVEL: 'info', WORKER_ENABLED: 'false' }) : null
    if (b) servers.push(b.child)
    http = await a.listening(60_000)
    other = b ? await b.listening(60_000) : http
  }, 120_000)

  afterAll(async () => {
    for (const c of clients) await c.dispose()
    for (const s of servers) s.kill('SIGTERM')
    await database?.drop()
  })

  const wsUrl = (base: string) => `${base.replace(/^http/, 'ws')}/graphql`
  function client(connectionParams: Record<string, unknown> = { authorization: `Bearer ${key}` }, base = http) {
    const c = createClient({ url: wsUrl(base), webSocketImpl: WebSocket, connectionParams, retryAttempts: 0, lazy: true })
    clients.push(c)
    return c
  }
  /** The first result of an operation. */
  type Result = { data?: any; errors?: { message: string; extensions?: { code?: string } }[] }
  const once = (c: Client, query: string, variables: Record<string, unknown> = {}): Promise<Result> =>
    c
      .iterate({ query, variables })
      .next()
      .then(
        (r) => r.value as Result,
        // Refused before execution (the document limits, the caps): the protocol's error message.
        (errors) => ({ errors: Array.isArray(errors) ? errors : [errors] }),
      )

  /** A raw socket: what the protocol's close codes look like to any client. */
  async function raw(headers: Record<string, string> = {}) {
    const socket = new WebSocket(wsUrl(http), PROTOCOL, { headers })
    const messages: any[] = []
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      socket.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
    )
    socket.on('message', (data) => messages.push(JSON.parse(String(data))))
    await new Promise((resolve, reject) => {
      socket.once('open', resolve)
      socket.once('error', reject)
    })
    return { socket, messages, closed, send: (m: unknown) => socket.send(typeof m === 'string' ? m : JSON.stringify(m)) }
  }

  it('answers queries and mutations with the Bearer key from connection_init', async () => {
    const c = client()
    expect((await once(c, '{ account { id name } }')).data.account).toEqual({ id: accountId, name: 'Sockets' })
    const made = await once(c, 'mutation($n: String!) { createGroup(input: { name: $n }) { group { uuid name } } }', { n: 'Socket group' })
    expect(made.data.createGroup.group.name).toBe('Socket group')
    // Public data needs no key; account data without one is UNAUTHENTICATED.
    const anonymous = client({})
    expect((await once(anonymous, '{ account { id } }')).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED')
  })

  it('delivers a subscription event raised on another instance (or the same one on SQLite), over graphql-ws and over urql', async () => {
    const c = client()
    const group = (await once(c, 'mutation { createGroup(input: { name: "Live" }) { group { uuid } } }')).data.createGroup.group.uuid
    const query = 'subscription($g: ID!) { groupMembership(groupId: $g) { kind count via } }'
    const events: any[] = []
    const failures: unknown[] = []
    const stop = c.subscribe(
      { query, variables: { g: group } },
      { next: (r) => events.push(r), error: (e) => failures.push(e), complete: () => {} },
    )

    const urql = new UrqlClient({
      url: `${http}/graphql`,
      exchanges: [
        subscriptionExchange({
          forwardSubscription: (request) => ({
            subscribe: (sink) => ({ unsubscribe: client().subscribe({ ...request, query: request.query ?? '' }, sink as never) }),
          }),
        }),
        fetchExchange,
      ],
      fetchOptions: { headers: { authorization: `Bearer ${key}` } },
    })
    // (toPromise would wait for the end of the stream: a subscription's results carry hasNext.)
    let urqlStop = () => {}
    const viaUrql = new Promise<any>((resolve) => {
      urqlStop = urql.subscription(gql(query), { g: group }).subscribe(resolve).unsubscribe
    })
    // Both subscriptions are registered once the server has answered a query after them on each socket.
    await once(c, '{ account { id } }')
    await new Promise((r) => setTimeout(r, 300))

    const add = await fetch(`${other}/api/contact/save`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ mobile: '0712345678', first_name: 'Amina', groups: [group] }),
    })
    expect(add.status).toBe(200)
    await waitFor('the graphql-ws event', () => events.length > 0 || failures.length > 0, 15_000)
    expect(failures).toEqual([])
    expect(events[0].data.groupMembership).toEqual({ kind: 'JOIN', count: 1, via: 'API' })
    const first = await Promise.race([viaUrql, new Promise((r) => setTimeout(() => r('urql: no event'), 10_000))])
    expect((first as any).error).toBeUndefined()
    expect((first as any).data.groupMembership).toMatchObject({ kind: 'JOIN', count: 1, via: 'API' })
    // urql's queries go over HTTP (fetchExchange) in the same client.
    const answer = await urql.query(gql('{ account { id } }'), {}).toPromise()
    expect(answer.data.account.id).toBe(accountId)
    stop()
    urqlStop()
  }, 60_000)

  it('applies the HTTP document limits', async () => {
    const c = client()
    const aliases = Array.from({ length: 200 }, (_, i) => `a${i}: account { id }`).join(' ')
    const answer = await once(c, `{ ${aliases} }`)
    expect(answer.errors?.[0]?.extensions?.code).toBeDefined()
    expect(answer.data).toBeUndefined()
  })

  it('counts WebSocket and SSE subscriptions together against the per-key cap', async () => {
    const c = client()
    const group = (await once(c, 'mutation { createGroup(input: { name: "Capped" }) { group { uuid } } }')).data.createGroup.group.uuid
    const query = `subscription { groupMembership(groupId: "${group}") { count } }`
    // One SSE stream and two sockets fill the cap of 3; a third socket subscription is refused.
    const sse = await fetch(`${http}/graphql?query=${encodeURIComponent(query)}`, {
      headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
    })
    expect(sse.status).toBe(200)
    const errors: unknown[] = []
    const stops = [0, 1].map(() => c.subscribe({ query }, { next: () => {}, error: (e) => errors.push(e), complete: () => {} }))
    await once(c, '{ account { id } }')
    const refused = await once(c, query)
    expect(refused.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED')
    for (const s of stops) s()
    await sse.body?.cancel()
    // Slots come back when subscriptions end.
    await new Promise((r) => setTimeout(r, 300))
    const again = c.iterate({ query })
    const next = Promise.race([again.next(), new Promise((r) => setTimeout(() => r('open'), 500))])
    expect(await next).toBe('open')
    await again.return?.()
    expect(errors).toEqual([])
  }, 30_000)

  it('closes with the protocol codes: 4403 for a bad key, 4400 for a bad message, 4429 for a second init, and pings', async () => {
    const badKey = await raw()
    badKey.send({ type: 'connection_init', payload: { authorization: 'Bearer gk_000000000000_' + 'A'.repeat(43) } })
    expect((await badKey.closed).code).toBe(4403)

    const garbage = await raw()
    garbage.send({ type: 'connection_init', payload: {} })
    await waitFor('the ack', () => garbage.messages.some((m) => m.type === 'connection_ack'), 5000)
    garbage.send('{not json')
    expect((await garbage.closed).code).toBe(4400)

    const twice = await raw()
    twice.send({ type: 'connection_init', payload: {} })
    twice.send({ type: 'connection_init', payload: {} })
    expect((await twice.closed).code).toBe(4429)

    const subscribing = await raw()
    subscribing.send({ type: 'subscribe', id: '1', payload: { query: '{ __typename }' } })
    expect((await subscribing.closed).code).toBe(4401)

    const pinged = await raw()
    let pings = 0
    pinged.socket.on('ping', () => pings++)
    pinged.send({ type: 'connection_init', payload: {} })
    await waitFor('two pings', () => pings >= 2, 5000)
    pinged.socket.close()
  }, 30_000)

  it("accepts the console's session cookie with its CSRF token, from the service's own origin only", async () => {
    const link = new URL(await cli('console:link', '--account', accountId))
    const signedIn = await fetch(`${http}/console/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin: http, 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${link.searchParams.get('token')}`,
    })
    const session = signedIn.headers.get('set-cookie')!.split(';')[0]!.split('=')[1]!
    const cookie = `console_session=${session}`

    const good = await raw({ cookie, origin: http })
    good.send({ type: 'connection_init', payload: { csrfToken: csrfTokenOf(session) } })
    await waitFor('the ack', () => good.messages.some((m) => m.type === 'connection_ack'), 5000)
    good.send({ type: 'subscribe', id: 'a', payload: { query: '{ account { id } }' } })
    await waitFor('the answer', () => good.messages.find((m) => m.type === 'next'), 5000)
    expect(good.messages.find((m) => m.type === 'next').payload.data.account.id).toBe(accountId)
    good.socket.close()

    for (const [headers, payload] of [
      [{ cookie, origin: 'https://evil.example' }, { csrfToken: csrfTokenOf(session) }],
      [{ cookie, origin: http }, { csrfToken: 'wrong' }],
      [{ cookie }, { csrfToken: csrfTokenOf(session) }],
    ] as const) {
      const refused = await raw(headers as Record<string, string>)
      refused.send({ type: 'connection_init', payload })
      expect((await refused.closed).code, JSON.stringify(headers)).toBe(4403)
    }
  }, 30_000)

  it('answers trusted documents only when GRAPHQL_TRUSTED_DOCUMENTS=only, and closes every socket with 1001 on SIGTERM', async () => {
    const extra = spawnServer({ ...env, LOG_LEVEL: 'info', WORKER_ENABLED: 'false', GRAPHQL_TRUSTED_DOCUMENTS: 'only' })
    const base = await extra.listening(60_000)
    const c = client({ authorization: `Bearer ${key}` }, base)
    const refused = await once(c, '{ account { id } }')
    expect(refused.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_ALLOWED')
    expect((await once(c, CONSOLE_DOCUMENTS.apiKeys)).data.apiKeys.length).toBeGreaterThan(0)
    await c.dispose()
    const socket = new WebSocket(wsUrl(base), PROTOCOL)
    const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)))
    await new Promise((resolve) => socket.once('open', resolve))
    socket.send(JSON.stringify({ type: 'connection_init', payload: {} }))
    await new Promise((resolve) => socket.once('message', resolve))
    extra.child.kill('SIGTERM')
    expect(await closed).toBe(1001)
    expect(await extra.exited).toBe(0)
  }, 60_000)
})
