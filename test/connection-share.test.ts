// One client cannot hold the server's connections (issue 52 item 3), against real server processes
// on each database (two instances on PostgreSQL): an address's share of the sockets, WebSocket
// and HTTP together, and the timers that close WebSockets which never authenticate or never run
// an operation. "Another address" is another loopback address (127.0.0.2 ...), bound with localAddress.
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { runCli, spawnServer } from './kit/server-process.js'
import { targets, type TestDatabase } from './kit/databases.js'
import { connectionsPerAddress } from '../src/process/connection-share.js'
import { parseEnv } from '../src/core/env.js'

const PROTOCOL = 'graphql-transport-ws'
/** The flood: more WebSockets from one address than the server's HTTP_MAX_CONNECTIONS (1,024). */
const FLOOD = 1100

/** A GET from `localAddress`: its status, or the socket error's code. */
function get(url: string, localAddress: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(`${url}/healthz`, { localAddress, agent: false }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode!))
    })
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message))
    req.end()
  })
}

interface Socket {
  ws: WebSocket
  /** Resolves with 'ack' once connection_ack came, or with how it ended before. */
  acked: Promise<'ack' | 'refused'>
  closed: Promise<number>
}

/** A graphql-ws socket from `localAddress`; sends connection_init (with `payload`) unless `init` is false. */
function socket(url: string, localAddress: string, { init = true, payload = {} as Record<string, unknown> } = {}): Socket {
  const ws = new WebSocket(url.replace(/^http/, 'ws') + '/graphql', PROTOCOL, { localAddress })
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)))
  const acked = new Promise<'ack' | 'refused'>((resolve) => {
    ws.on('error', () => resolve('refused'))
    ws.on('close', () => resolve('refused'))
    ws.on('message', (data) => {
      if ((JSON.parse(String(data)) as { type: string }).type === 'connection_ack') resolve('ack')
    })
  })
  if (init) ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload })))
  return { ws, acked, closed }
}

/** Runs `query` on an acked socket and resolves with its first `next` payload. */
function run(s: Socket, id: string, query: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    s.ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string; id?: string; payload?: unknown }
      if (message.id !== id) return
      if (message.type === 'next') resolve(message.payload)
      if (message.type === 'error') reject(new Error(JSON.stringify(message.payload)))
    })
    s.ws.send(JSON.stringify({ id, type: 'subscribe', payload: { query } }))
  })
}

describe('the per-address share of connections: configuration', () => {
  it('defaults to an eighth of HTTP_MAX_CONNECTIONS, and refuses a share that is not a whole number of at least 1', () => {
    expect(connectionsPerAddress(parseEnv({}))).toBe(128)
    expect(connectionsPerAddress(parseEnv({ HTTP_MAX_CONNECTIONS: '4' }))).toBe(1)
    expect(connectionsPerAddress(parseEnv({ HTTP_MAX_CONNECTIONS_PER_ADDRESS: '10' }))).toBe(10)
    expect(() => parseEnv({ HTTP_MAX_CONNECTIONS_PER_ADDRESS: '0' })).toThrow(/HTTP_MAX_CONNECTIONS_PER_ADDRESS/)
    expect(() => parseEnv({ WEBSOCKET_IDLE_TIMEOUT_MS: 'soon' })).toThrow(/WEBSOCKET_IDLE_TIMEOUT_MS/)
  })
})

describe.each(targets)('connections on $name', (target) => {
  let database: TestDatabase
  let env: Record<string, string | undefined>
  let key: string
  const servers: ReturnType<typeof spawnServer>[] = []
  let urls: string[] = []
  let timers: string
  const opened: WebSocket[] = []

  beforeAll(async () => {
    database = await target.create()
    env = { ...process.env, DATABASE_URL: database.url, HOST: '127.0.0.1', PORT: '0' }
    key = JSON.parse(await runCli(env, 'account:create', '--name', 'Shares')).apiKey
    // The defaults: 1,024 sockets, 128 per address, WebSockets idle for 30 s closed.
    const serverEnv = { ...env, WORKER_ENABLED: 'false' }
    servers.push(spawnServer(serverEnv))
    if (target.name === 'postgresql') servers.push(spawnServer(serverEnv))
    // The timers' test: one instance with short ones.
    servers.push(spawnServer({ ...serverEnv, WEBSOCKET_IDLE_TIMEOUT_MS: '1000', WEBSOCKET_INIT_TIMEOUT_MS: '500' }))
    urls = await Promise.all(servers.map((s) => s.listening(90_000)))
    timers = urls.pop()!
  }, 180_000)
  afterAll(async () => {
    for (const ws of opened) ws.terminate()
    for (const s of servers) s.child.kill('SIGKILL')
    await Promise.all(servers.map((s) => s.exited))
    await database?.drop()
  })

  it('while one address floods an instance with 1,100 WebSockets, it holds its share (128) and another address is served at once', async () => {
    const [first] = urls
    // Each of the flood's sockets sends connection_init, as the did; none is idle for 30 s.
    const flood = Array.from({ length: FLOOD }, () => socket(first!, '127.0.0.1'))
    for (const s of flood) opened.push(s.ws)
    const outcomes = await Promise.all(flood.map((s) => s.acked))
    const held = flood.filter((_, i) => outcomes[i] === 'ack')
    expect(held).toHaveLength(128)
    // The flood's address gets no more, neither HTTP nor WebSocket.
    expect(await get(first!, '127.0.0.1')).not.toBe(200)
    // Another address: HTTP and a WebSocket that runs a query, on every instance.
    for (const url of urls) {
      expect(await get(url, '127.0.0.2')).toBe(200)
      const other = socket(url, '127.0.0.3', { payload: { authorization: `Bearer ${key}` } })
      opened.push(other.ws)
      expect(await other.acked).toBe('ack')
      expect(await run(other, 'q', '{ __typename }')).toEqual({ data: { __typename: 'Query' } })
      other.ws.close()
    }
    // The share comes back as the flood's sockets close.
    for (const s of held) s.ws.close()
    await Promise.all(held.map((s) => s.closed))
    await expect.poll(() => get(first!, '127.0.0.1'), { timeout: 10_000 }).toBe(200)
  }, 120_000)

  it('closes a WebSocket that never sends connection_init (4408), and one that never runs an operation (1000); keeps one whose subscription runs', async () => {
    const url = timers
    const silent = socket(url, '127.0.0.4', { init: false })
    const idle = socket(url, '127.0.0.4')
    const busy = socket(url, '127.0.0.4', { payload: { authorization: `Bearer ${key}` } })
    opened.push(silent.ws, idle.ws, busy.ws)
    expect(await idle.acked).toBe('ack')
    expect(await busy.acked).toBe('ack')
    busy.ws.send(JSON.stringify({ id: 'live', type: 'subscribe', payload: { query: 'subscription { deliveryReports { uuid } }' } }))
    expect(await silent.closed).toBe(4408)
    expect(await idle.closed).toBe(1000)
    // The idle one was closed after the busy one subscribed; the busy one is still open.
    expect(busy.ws.readyState).toBe(WebSocket.OPEN)
    // Once its subscription ends, it is idle too.
    busy.ws.send(JSON.stringify({ id: 'live', type: 'complete' }))
    expect(await busy.closed).toBe(1000)
  }, 60_000)
})
