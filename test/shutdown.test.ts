import { Agent, request, type IncomingHttpHeaders } from 'node:http'
import { connect } from 'node:net'
import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { portIsFree, sleep, spawnServer } from './kit/server-process.js'

/** The real server (src/process/server.ts) as a child process on a free port. */
async function startServer(env: Record<string, string>) {
  const { child, exited, output, errors } = spawnServer(env)
  const deadline = Date.now() + 30_000
  while (!output().includes('"msg":"listening"') && Date.now() < deadline && child.exitCode === null) await sleep(50)
  const line = output()
    .split('\n')
    .find((l) => l.includes('"msg":"listening"'))
  if (!line) throw new Error(`server did not start\n${output()}\n${errors()}`)
  const { url } = JSON.parse(line) as { url: string }
  return { child, exited, port: Number(new URL(url).port), output }
}

interface Answer {
  status: number
  headers: IncomingHttpHeaders
  body: string
  /** The request went out on a kept-alive socket. */
  reused: boolean
}

function send(port: number, agent: Agent | false, method: string, path: string, options: { key?: string; body?: unknown } = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const body = options.body === undefined ? undefined : JSON.stringify(options.body)
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: {
          ...(options.key ? { authorization: `Bearer ${options.key}` } : {}),
          ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}),
        },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (d) => (text += d))
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text, reused: req.reusedSocket }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

const settled = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ value }),
    (error: NodeJS.ErrnoException) => ({ error }),
  )

describe.each(targets)('graceful shutdown of the real server on $name', (target) => {
  const kit = useKit(target)

  it("ends every open subscription stream with the protocol's complete event on SIGTERM", async () => {
    const { key } = await kit.seed().account()
    const server = await startServer({ DATABASE_URL: kit.url })
    try {
      const query = encodeURIComponent('subscription { deliveryReports { uuid status } }')
      const res = await fetch(`http://127.0.0.1:${server.port}/graphql?query=${query}`, {
        headers: { accept: 'text/event-stream', authorization: `Bearer ${key}` },
      })
      expect(res.headers.get('content-type')).toContain('text/event-stream')
      const reader = res.body!.getReader()
      await reader.read() // the stream is open (Yoga's first comment)
      server.child.kill('SIGTERM')
      let text = ''
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += new TextDecoder().decode(chunk.value)
      const complete = 'event: complete\ndata:\n\n'
      expect(text.slice(-complete.length)).toBe(complete)
      expect(await server.exited).toBe(0)
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL')
    }
  }, 60_000)

  it('answers every in-flight and just-sent keep-alive request, fails readiness at once, exits 0 and frees the port', async () => {
    const { key, group } = await kit.seed().account().group({ name: 'Drain' })
    // Generous grace and pool wait: this is about the drain, not about shedding load (a busy pool
    // answers 503 after DB_CONNECT_TIMEOUT_MS, see db-faults.test.ts).
    const server = await startServer({ DATABASE_URL: kit.url, SHUTDOWN_GRACE_MS: '30000', DB_CONNECT_TIMEOUT_MS: '30000' })
    const agents = Array.from({ length: 20 }, () => new Agent({ keepAlive: true, maxSockets: 1 }))
    const idle = Array.from({ length: 5 }, () => new Agent({ keepAlive: true, maxSockets: 1 }))
    const late = Array.from({ length: 5 }, () => new Agent({ keepAlive: true, maxSockets: 1 }))
    try {
      // Every client holds an open keep-alive socket.
      for (const agent of [...agents, ...idle, ...late]) expect((await send(server.port, agent, 'GET', '/healthz')).status).toBe(200)

      // Slow work in flight on the 20 sockets: 200 contacts each, the writes serialize in the database.
      let n = 0
      const addContacts = (agent: Agent) =>
        send(server.port, agent, 'POST', `/api/contact/group/${group.id}/add-contacts`, {
          key,
          body: { contacts: Array.from({ length: 200 }, () => ({ first_name: `Drain ${n}`, mobile: `+2547${12_000_000 + n++}` })) },
        })
      const inFlight = agents.map((agent) => settled(addContacts(agent)))
      await new Promise((r) => setTimeout(r, 150))

      server.child.kill('SIGTERM')
      // Sent as the signal arrives: queued behind the in-flight request of each client, and on the
      // idle kept-alive sockets.
      const justSent = [
        ...agents.map((agent) => settled(send(server.port, agent, 'GET', '/api/contacts?perPage=5', { key }))),
        ...idle.map((agent) => settled(send(server.port, agent, 'GET', '/api/contact/groups', { key }))),
      ]
      // Once the child is draining: requests on sockets it kept alive, and readiness.
      while (!server.output().includes('"msg":"shutting down"')) await new Promise((r) => setTimeout(r, 10))
      const afterDrain = await Promise.all(late.map((agent) => send(server.port, agent, 'GET', '/api/contacts?perPage=1', { key })))
      expect(afterDrain.map((a) => [a.status, a.headers.connection])).toEqual(late.map(() => [200, 'close']))
      const ready = await send(server.port, false, 'GET', '/readyz')
      expect([ready.status, JSON.parse(ready.body)]).toEqual([503, { status: 'not ready' }])

      const answers = await Promise.all([...inFlight, ...justSent])
      const failures = answers.flatMap((a) => ('error' in a ? [`${a.error.code}: ${a.error.message}`] : []))
      expect(failures).toEqual([])
      const ok = answers.map((a) => ('value' in a ? a.value : null))
      expect(ok.map((a) => a!.status)).toEqual(answers.map(() => 200))
      expect(ready.headers.connection).toBe('close')

      expect(await server.exited).toBe(0)
      expect(server.output()).toContain('"msg":"shutting down"')
      expect(await portIsFree(server.port)).toBe(true)
      expect(await kit.db.membership.count({ where: { groupId: group.id } })).toBe(20 * 200)
    } finally {
      server.child.kill('SIGKILL')
      for (const agent of [...agents, ...idle, ...late]) agent.destroy()
    }
  }, 90_000)
})

describe('server timeouts', () => {
  const kit = useKit(targets[0]!)

  it('cuts a client that trickles its request head slower than headersTimeout while others are answered', async () => {
    const server = await startServer({ DATABASE_URL: kit.url, HTTP_HEADERS_TIMEOUT_MS: '1000', WORKER_ENABLED: 'false' })
    try {
      const socket = connect(server.port, '127.0.0.1')
      socket.setEncoding('utf8')
      let received = ''
      socket.on('data', (d) => (received += d))
      const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(performance.now())))
      socket.on('error', () => {})
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
      const started = performance.now()
      const head = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ' + 'a'.repeat(200) + '\r\n\r\n'
      let sent = 0
      const trickle = setInterval(() => {
        if (sent < head.length && !socket.destroyed) socket.write(head[sent++]!)
      }, 100)
      // Another client is served while the slow one trickles.
      const other = await send(server.port, false, 'GET', '/healthz')
      expect(other.status).toBe(200)
      const closedAt = await closed
      clearInterval(trickle)
      expect(sent).toBeLessThan(head.length)
      expect(received).toMatch(/^HTTP\/1\.1 408 /)
      const ms = closedAt - started
      expect(ms).toBeGreaterThanOrEqual(900)
      expect(ms).toBeLessThan(5000)

      // headersTimeout counts from the first byte of a request: a kept-alive socket that idles
      // longer than it (but within the keep-alive timeout) still serves its next request.
      const agent = new Agent({ keepAlive: true, maxSockets: 1 })
      try {
        expect((await send(server.port, agent, 'GET', '/healthz')).status).toBe(200)
        await new Promise((r) => setTimeout(r, 2500))
        const again = await send(server.port, agent, 'GET', '/healthz')
        expect([again.status, again.reused]).toEqual([200, true])
      } finally {
        agent.destroy()
      }
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
    }
  }, 60_000)

  it('cuts what still runs after SHUTDOWN_GRACE_MS and exits 1', async () => {
    const server = await startServer({ DATABASE_URL: kit.url, SHUTDOWN_GRACE_MS: '1000', WORKER_ENABLED: 'false' })
    try {
      // A request whose body never completes keeps running until it is cut.
      const socket = connect(server.port, '127.0.0.1')
      socket.on('error', () => {})
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
      socket.write('POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query":')
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
      await new Promise((r) => setTimeout(r, 300))
      const started = performance.now()
      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(1)
      await closed
      const ms = performance.now() - started
      expect(ms).toBeGreaterThanOrEqual(900)
      expect(ms).toBeLessThan(8000)
      expect(server.output()).toContain('shutdown grace exceeded')
    } finally {
      server.child.kill('SIGKILL')
    }
  }, 60_000)
})
