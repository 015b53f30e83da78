// Issue 52 item 1: a credential that ends, ends everywhere at once. Real server processes on each
// database (two instances on one PostgreSQL database, one on SQLite): a revoked API key, and a
// console session signed out everywhere or expiring, close their WebSockets with 4403 and end
// their SSE streams, on the instance that ended them and on the other one; a key revoked by the
// CLI (another process: NOTIFY on PostgreSQL, the database file's probe on SQLite) as well.
import type { ChildProcess } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { runCli, spawnServer, waitFor } from './kit/server-process.js'
import { targets, type TestDatabase } from './kit/databases.js'
import { csrfTokenOf } from '../src/console/sessions.js'
import { openDatabase, type Database } from '../src/db/client.js'

const PROTOCOL = 'graphql-transport-ws'

type Message = { type: string; id?: string; payload?: any }

async function socket(base: string, init: Record<string, unknown>, headers: Record<string, string> = {}) {
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/graphql`, PROTOCOL, { headers })
  const messages: Message[] = []
  const state = { closeCode: null as number | null }
  ws.on('message', (data) => messages.push(JSON.parse(String(data))))
  ws.on('close', (code) => (state.closeCode = code))
  await new Promise((resolve, reject) => {
    ws.once('open', resolve)
    ws.once('error', reject)
  })
  ws.send(JSON.stringify({ type: 'connection_init', payload: init }))
  await waitFor('connection_ack', () => messages.some((m) => m.type === 'connection_ack'), 15_000)
  let next = 0
  return {
    state,
    messages,
    async run(query: string): Promise<{ data?: any; errors?: any[] }> {
      const id = String(++next)
      ws.send(JSON.stringify({ type: 'subscribe', id, payload: { query } }))
      const answer = await waitFor(
        'the answer',
        () => messages.find((m) => m.id === id && (m.type === 'next' || m.type === 'error')),
        15_000,
      )
      return answer.type === 'error' ? { errors: answer.payload } : answer.payload
    },
    /** Starts a subscription and leaves it running. */
    subscribe(query: string) {
      ws.send(JSON.stringify({ type: 'subscribe', id: `sub${++next}`, payload: { query } }))
    },
    close: () => ws.terminate(),
  }
}

/** An SSE subscription stream; `ended` turns true when the server ends the body. */
async function sse(base: string, query: string, headers: Record<string, string>) {
  const response = await fetch(`${base}/graphql?query=${encodeURIComponent(query)}`, {
    headers: { accept: 'text/event-stream', ...headers },
  })
  expect(response.headers.get('content-type')).toContain('text/event-stream')
  const stream = { ended: false, text: '' }
  const reader = response.body!.getReader()
  void (async () => {
    const decoder = new TextDecoder()
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        stream.text += decoder.decode(value)
      }
    } catch {
      // cut: ended as well
    }
    stream.ended = true
  })()
  return stream
}

describe.each(targets)('a credential that ends closes its live connections on $name', (target) => {
  let database: TestDatabase
  let db: Database
  let env: Record<string, string | undefined>
  const servers: ChildProcess[] = []
  const sockets: { close(): void }[] = []
  let http: string
  let other: string
  let key: string
  let accountId: string
  let groupId: string

  const cli = (...args: string[]) => runCli(env, ...args)
  const gqlOver = async (base: string, query: string, bearer = key) => {
    const response = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    })
    return { status: response.status, body: (await response.json()) as { data?: any; errors?: any[] } }
  }
  const open = async (...args: Parameters<typeof socket>) => {
    const s = await socket(...args)
    sockets.push(s)
    return s
  }
  const membership = () => `subscription { groupMembership(groupId: "${groupId}") { count } }`

  beforeAll(async () => {
    database = await target.create()
    env = { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: '0' }
    const created = JSON.parse(await cli('account:create', '--name', 'Doors'))
    key = created.apiKey
    accountId = created.account.uuid
    const a = spawnServer({ ...env, LOG_LEVEL: 'info' })
    servers.push(a.child)
    const b = target.name === 'postgresql' ? spawnServer({ ...env, LOG_LEVEL: 'info', WORKER_ENABLED: 'false' }) : null
    if (b) servers.push(b.child)
    http = await a.listening(90_000)
    other = b ? await b.listening(90_000) : http
    db = await openDatabase(database.url)
    groupId = (await gqlOver(http, 'mutation { createGroup(input: { name: "Doors" }) { group { uuid } } }')).body.data.createGroup.group
      .uuid
  }, 200_000)

  afterAll(async () => {
    for (const s of sockets) s.close()
    for (const s of servers) s.kill('SIGTERM')
    await db?.close()
    await database?.drop()
  })

  async function newKey(label: string) {
    const made = await gqlOver(http, `mutation { createApiKey(label: "${label}") { key apiKey { prefix } } }`)
    return { key: made.body.data.createApiKey.key as string, prefix: made.body.data.createApiKey.apiKey.prefix as string }
  }

  it('a key revoked over HTTP on either instance: its sockets on both close with 4403, its SSE stream ends, HTTP answers UNAUTHENTICATED', async () => {
    const doomed = await newKey('doomed')
    const onA = await open(http, { authorization: `Bearer ${doomed.key}` })
    const onB = await open(other, { authorization: `Bearer ${doomed.key}` })
    expect((await onA.run('{ account { id } }')).data.account.id).toBe(accountId)
    expect((await onB.run('{ account { id } }')).data.account.id).toBe(accountId)
    onA.subscribe(membership())
    const stream = await sse(http, membership(), { authorization: `Bearer ${doomed.key}` })

    const revoked = await gqlOver(other, `mutation { revokeApiKey(id: "${doomed.prefix}") { revokedAt } }`)
    expect(revoked.body.data.revokeApiKey.revokedAt).toBeTruthy()
    await waitFor('both sockets closed', () => onA.state.closeCode !== null && onB.state.closeCode !== null, 15_000)
    expect([onA.state.closeCode, onB.state.closeCode]).toEqual([4403, 4403])
    await waitFor('the SSE stream ended', () => stream.ended, 15_000)
    for (const base of [http, other])
      expect((await gqlOver(base, '{ account { id } }', doomed.key)).body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED')
    // The account's other key is untouched.
    expect((await gqlOver(other, '{ account { id } }')).body.data.account.id).toBe(accountId)
  }, 60_000)

  it('a key revoked by the CLI (another process) closes its sockets on every instance', async () => {
    const doomed = await newKey('cli doomed')
    const onA = await open(http, { authorization: `Bearer ${doomed.key}` })
    const onB = await open(other, { authorization: `Bearer ${doomed.key}` })
    expect((await onA.run('{ account { id } }')).data.account.id).toBe(accountId)
    expect((await onB.run('{ account { id } }')).data.account.id).toBe(accountId)
    await cli('apikey:revoke', '--key', doomed.prefix)
    await waitFor('both sockets closed', () => onA.state.closeCode !== null && onB.state.closeCode !== null, 15_000)
    expect([onA.state.closeCode, onB.state.closeCode]).toEqual([4403, 4403])
  }, 60_000)

  async function signIn(base: string) {
    const link = new URL(await cli('console:link', '--account', accountId))
    const signedIn = await fetch(`${base}/console/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${link.searchParams.get('token')}`,
    })
    return signedIn.headers.get('set-cookie')!.split(';')[0]!.split('=')[1]!
  }
  const consoleSocket = (base: string, session: string) =>
    open(base, { csrfToken: csrfTokenOf(session) }, { cookie: `console_session=${session}`, origin: base })

  it('signOut(everywhere: true): the console sockets on both instances close with 4403 and its SSE stream ends', async () => {
    const session = await signIn(http)
    const onA = await consoleSocket(http, session)
    const onB = await consoleSocket(other, session)
    expect((await onA.run('{ account { id } }')).data.account.id).toBe(accountId)
    expect((await onB.run('{ account { id } }')).data.account.id).toBe(accountId)
    const stream = await sse(other, membership(), {
      cookie: `console_session=${session}`,
      'x-csrf-token': csrfTokenOf(session),
      origin: other,
    })
    const out = await gqlOver(other, 'mutation { signOut(everywhere: true) { sessionsEnded } }')
    expect(out.body.data.signOut.sessionsEnded).toBeGreaterThanOrEqual(1)
    await waitFor('both sockets closed', () => onA.state.closeCode !== null && onB.state.closeCode !== null, 15_000)
    expect([onA.state.closeCode, onB.state.closeCode]).toEqual([4403, 4403])
    await waitFor('the SSE stream ended', () => stream.ended, 15_000)
  }, 60_000)

  it('a console session that expires closes its socket with 4403 when it expires', async () => {
    const session = await signIn(http)
    // Five seconds left (written straight to the table): the socket opened now must end by itself.
    await db.prisma.consoleSession.updateMany({
      where: { accountId, revokedAt: null },
      data: { expiresAt: new Date(Date.now() + 5000) },
    })
    const s = await consoleSocket(other, session)
    expect((await s.run('{ account { id } }')).data.account.id).toBe(accountId)
    await waitFor('the socket closed', () => s.state.closeCode !== null, 15_000)
    expect(s.state.closeCode).toBe(4403)
  }, 60_000)
})
