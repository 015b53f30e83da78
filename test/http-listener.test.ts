import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit, fixedClock } from './kit/kit.js'
import { createDrain, createListener, requestIdSource } from '../src/process/http-listener.js'
import { importChannel } from '../src/channel/import-channel.js'
import { createMetrics } from '../src/metrics/create-metrics.js'
import { Microcache, OUT_HEADERS } from '../src/http/microcache.js'

describe.each(targets)('HTTP listener and microcache on $name', (target) => {
  const clock = fixedClock('2026-03-03T12:30:00-05:00')
  const kit = useKit(target, { clock, env: { CHANNEL_CACHE_MS: '5000' } })
  let server: Server
  let base: string
  const metrics = createMetrics()
  const replays = async () => (await metrics.registry.getSingleMetric('http_microcache_replays_total')!.get()).values[0]?.value ?? 0
  beforeAll(async () => {
    await importChannel(kit.deps, readFileSync(new URL('../docs/channel-sample.json', import.meta.url), 'utf8'))
    server = createServer(createListener(kit.app, kit.deps, metrics))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise((resolve) => server.close(resolve)))
  const port = () => (server.address() as AddressInfo).port

  const path = '/api/channels/6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f/status'

  it('replays a public answer within its second with the same body and headers, fresh ids, and 304', async () => {
    kit.statements.length = 0
    const first = await fetch(base + path)
    const firstBody = await first.text()
    const queries = kit.statements.length
    expect(queries).toBeGreaterThan(0)
    const second = await fetch(base + path)
    expect(await second.text()).toBe(firstBody)
    expect(kit.statements.length).toBe(queries)
    for (const header of ['etag', 'cache-control', 'access-control-allow-origin', 'content-type']) {
      expect(second.headers.get(header), header).toBe(first.headers.get(header))
    }
    expect(second.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    expect(second.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'))
    const notModified = await fetch(base + path, { headers: { 'if-none-match': first.headers.get('etag')! } })
    expect(notModified.status).toBe(304)

    // The next second is computed afresh.
    clock.advance(1000)
    const next = await fetch(base + path)
    expect(JSON.parse(await next.text()).current_video.remaining_time).toBe(1799)
  })

  it('replays with unique cheap ids, a client id when valid, Content-Length, HEAD without body, and counts replays', async () => {
    clock.advance(1000)
    const before = await replays()
    const first = await fetch(base + path)
    const body = await first.text()
    expect(await replays()).toBe(before) // computed by app.fetch, not replayed
    const ids = new Set<string>()
    for (let i = 0; i < 20; i++) {
      const r = await fetch(base + path)
      expect(await r.text()).toBe(body)
      expect(r.headers.get('content-length')).toBe(String(Buffer.byteLength(body)))
      expect(r.headers.get('transfer-encoding')).toBeNull()
      ids.add(r.headers.get('x-request-id')!)
    }
    expect(ids.size).toBe(20)
    for (const id of ids) expect(id).toMatch(/^[\w.:-]{1,128}$/)
    const mine = await fetch(base + path, { headers: { 'x-request-id': 'client-42.a:b' } })
    expect(mine.headers.get('x-request-id')).toBe('client-42.a:b')
    const bad = await fetch(base + path, { headers: { 'x-request-id': 'not valid!' } })
    expect(bad.headers.get('x-request-id')).not.toBe('not valid!')
    expect(bad.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    const head = await fetch(base + path, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(await head.text()).toBe('')
    expect(head.headers.get('etag')).toBe(first.headers.get('etag'))
    const notModified = await fetch(base + path, { headers: { 'if-none-match': `W/${first.headers.get('etag')}, "other"` } })
    expect(notModified.status).toBe(304)
    expect(notModified.headers.get('access-control-allow-origin')).toBe('*')
    expect(notModified.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    expect(await replays()).toBe(before + 24)
  })

  it('drains with the listener: a replay says Connection: close once the drain has begun; a request still running holds the listener open', async () => {
    const own = createServer()
    const drain = createDrain(own)
    const ownMetrics = createMetrics()
    own.on('request', createListener(kit.app, kit.deps, ownMetrics, { drain }))
    await new Promise<void>((resolve) => own.listen(0, '127.0.0.1', resolve))
    const port = (own.address() as AddressInfo).port
    const replayed = async () => (await ownMetrics.registry.getSingleMetric('http_microcache_replays_total')!.get()).values[0]?.value ?? 0
    const get = async () => {
      const r = await fetch(`http://127.0.0.1:${port}${path}`)
      return [r.status, r.headers.get('connection'), (await r.text()).length > 0]
    }
    await get() // fills the microcache if the tests before have not
    const replaysBefore = await replayed()
    expect(await get()).toEqual([200, 'keep-alive', true])
    // A request whose body has not all arrived: the listener has handed it to the app.
    const slow = connect(port, '127.0.0.1')
    let answer = ''
    slow.on('data', (chunk: Buffer) => (answer += chunk.toString()))
    const slowEnded = new Promise((resolve) => slow.on('close', resolve))
    slow.write('POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 26\r\n\r\n{"query":')
    await new Promise((r) => setTimeout(r, 100))
    const drained = drain.drain(10_000)
    expect(await get()).toEqual([200, 'close', true])
    expect(await replayed()).toBe(replaysBefore + 2)
    // Past the drain's quiet time: the running request is tracked, so the listener is still open.
    await new Promise((r) => setTimeout(r, 1000))
    expect(own.listening).toBe(true)
    slow.write('"{ __typename }"}')
    await slowEnded
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    expect(answer).toMatch(/\r\nConnection: close\r\n/i)
    expect(answer).toContain('{"data":{"__typename":"Query"}}')
    await drained
    expect(own.listening).toBe(false)
  })

  it('writes a turn’s replays after the turn’s parses, in the order the requests came', async () => {
    const first = await fetch(base + path) // an entry for this second, whatever ran before
    const body = await first.text()
    // A second listener runs right after the service's for each request: none is written yet.
    const seen: [string, boolean][] = []
    const written: boolean[] = []
    const probe = (req: IncomingMessage, res: ServerResponse) => {
      seen.push([req.headers['x-request-id'] as string, res.headersSent])
      setImmediate(() => written.push(res.headersSent))
    }
    server.on('request', probe)
    try {
      // Three requests in one write: node parses all three in one turn.
      const request = (id: string, last = false) =>
        `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\n${last ? 'Connection: close\r\n' : ''}\r\n`
      const raw = await rawExchange(port(), request('p-1') + request('p-2') + request('p-3', true))
      const answers = raw.split(/(?=HTTP\/1\.1 )/)
      expect(answers.map((a) => a.match(/^HTTP\/1\.1 (\d+)/)?.[1])).toEqual(['200', '200', '200'])
      expect(answers.map((a) => a.match(/\r\nX-Request-Id: ([^\r]+)/i)?.[1])).toEqual(['p-1', 'p-2', 'p-3'])
      for (const a of answers) expect(a.endsWith(body)).toBe(true)
      expect(seen).toEqual([
        ['p-1', false],
        ['p-2', false],
        ['p-3', false],
      ])
      expect(written).toEqual([true, true, true])
    } finally {
      server.off('request', probe)
    }
  })

  it('replays the rest of a turn when a client has gone before its answer is written', async () => {
    await (await fetch(base + path)).text()
    // The client of the first request is cut before the turn's end: its replay finds the socket
    // destroyed; the second, in the same write, is on a socket of its own that stays.
    const cut = (req: IncomingMessage) => {
      if (req.headers['x-request-id'] === 'gone') req.socket.destroy()
    }
    server.on('request', cut)
    try {
      const gone = connect(port(), '127.0.0.1')
      await new Promise((resolve) => gone.on('connect', resolve))
      let received = ''
      gone.on('data', (chunk: Buffer) => (received += chunk.toString()))
      const closed = new Promise((resolve) => gone.on('close', resolve))
      gone.on('error', () => {})
      gone.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nX-Request-Id: gone\r\n\r\n`)
      const kept = rawExchange(port(), `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Request-Id: kept\r\nConnection: close\r\n\r\n`)
      await closed
      expect(received).toBe('') // cut before the turn's end: nothing was written to it
      expect(await kept).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*\r\nX-Request-Id: kept\r\n/i)
      expect((await fetch(base + path)).status).toBe(200)
    } finally {
      server.off('request', cut)
    }
  })

  it('never replays authenticated answers', async () => {
    const { key } = await kit.seed().account()
    const a = await fetch(`${base}/api/contacts`, { headers: { authorization: `Bearer ${key}` } })
    expect(a.status).toBe(200)
    const b = await fetch(`${base}/api/contacts`)
    expect(b.status).toBe(401)
  })
})

/** One request on a fresh socket, as raw bytes; the answer's bytes up to the server's close. */
function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(request))
    let received = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => (received += chunk))
    socket.on('end', () => resolve(received))
    socket.on('error', reject)
  })
}

describe('a replay written with the header list validated once (Microcache.replay)', () => {
  const answer = {
    status: 200,
    headers: {
      'Cache-Control': 'public, max-age=20',
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Expose-Headers': 'ETag, X-Request-Id',
    },
    body: '{"now":"é"}',
    etag: '"e-1"',
  }

  it('finds node’s own header list on this node release (else replays validate every header again)', () => {
    expect(OUT_HEADERS).toBeTypeOf('symbol')
  })

  it('writes the same bytes as writeHead given the list, for 200, 304 and HEAD', async () => {
    const cache = new Microcache(60_000)
    cache.addHeaders(['X-Worker', '3'])
    // One instant for the entry and every lookup: the exchanges may cross a second's boundary.
    const now = Date.now()
    cache.set(cache.key('/api/now', new Date(now)), answer)
    let listed = 0
    const server = createServer((req, res) => {
      // A response that already holds a header list takes the other path: writeHead given a flat list.
      if (req.headers['x-path'] === 'list') {
        ;(res as unknown as Record<symbol, unknown>)[OUT_HEADERS!] = undefined
        listed++
      }
      cache.replay(cache.hit(req, now)!, req, res, req.headers['x-request-id'] as string)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    try {
      for (const [method, extra] of [
        ['GET', ''],
        ['GET', 'If-None-Match: "e-1"\r\n'],
        ['HEAD', ''],
      ] as const) {
        const request = (path: string, id: string) =>
          `${method} /api/now HTTP/1.1\r\nHost: x\r\nX-Path: ${path}\r\nX-Request-Id: ${id}\r\nConnection: close\r\n${extra}\r\n`
        const fast = await rawExchange(port, request('own', 'id-1'))
        const listedAnswer = await rawExchange(port, request('list', 'id-1'))
        const withoutDate = (raw: string) => raw.replace(/\r\nDate: [^\r]+/, '')
        expect(withoutDate(fast)).toBe(withoutDate(listedAnswer))
        expect(fast).toContain('\r\nX-Worker: 3\r\nETag: "e-1"\r\nX-Request-Id: id-1\r\n')
        if (extra) expect(fast).toMatch(/^HTTP\/1\.1 304 /)
        else expect(fast).toContain(`\r\nContent-Length: ${Buffer.byteLength(answer.body)}\r\n`)
        expect(fast.endsWith(method === 'GET' && !extra ? Buffer.from(answer.body).toString('latin1') : '\r\n\r\n')).toBe(true)
        // The next replay carries its own id, not the last one written into the shared list.
        expect(await rawExchange(port, request('own', 'id-2'))).toContain('\r\nX-Request-Id: id-2\r\n')
      }
      expect(listed).toBe(3)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('leaves node the headers it looks for: an answer’s own Connection and Date are written once and obeyed', async () => {
    const cache = new Microcache(60_000)
    const now = Date.now()
    cache.set(cache.key('/api/own', new Date(now)), {
      ...answer,
      headers: { ...answer.headers, Date: 'Tue, 03 Mar 2026 17:30:00 GMT', 'X-After': 'a', Connection: 'close', 'X-Last': 'b' },
    })
    const server = createServer((req, res) => {
      if (req.headers['x-path'] === 'list') (res as unknown as Record<symbol, unknown>)[OUT_HEADERS!] = undefined
      cache.replay(cache.hit(req, now)!, req, res, 'id-1')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    try {
      // Keep-alive asked for: the answer's own Connection: close must still end the exchange.
      const request = (path: string) => `GET /api/own HTTP/1.1\r\nHost: x\r\nX-Path: ${path}\r\n\r\n`
      const fast = await rawExchange(port, request('own'))
      expect(fast).toBe(await rawExchange(port, request('list')))
      const head = fast.slice(0, fast.indexOf('\r\n\r\n'))
      expect(head.match(/^Date: /gim)).toEqual(['Date: '])
      expect(head).toContain('\r\nDate: Tue, 03 Mar 2026 17:30:00 GMT\r\n')
      expect(head.match(/^Connection: /gim)).toEqual(['Connection: '])
      expect(head).toContain('\r\nConnection: close\r\n')
      expect(head).toContain('\r\nX-After: a\r\n')
      expect(head).toContain('\r\nX-Last: b\r\n')
      expect(head).not.toMatch(/keep-alive|transfer-encoding/i)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('finds each path’s own entry when paths alternate, and the new one after an entry is replaced or dropped', () => {
    const cache = new Microcache(60_000)
    const now = new Date()
    const request = (url: string) => ({ method: 'GET', url }) as never
    const body = (url: string) => cache.hit(request(url), now.getTime())?.body
    cache.set(cache.key('/api/a', now), { ...answer, body: 'a1' })
    cache.set(cache.key('/api/b', now), { ...answer, body: 'b1' })
    expect(['/api/a', '/api/b', '/api/a', '/api/a', '/api/b'].map(body)).toEqual(['a1', 'b1', 'a1', 'a1', 'b1'])
    // Replaced within the same second, right after a hit on it.
    cache.set(cache.key('/api/b', now), { ...answer, body: 'b2' })
    expect(body('/api/b')).toBe('b2')
    cache.set(cache.key('/api/g', now, 60), { ...answer, body: 'g1' })
    expect(body('/api/g')).toBe('g1')
    cache.dropLongLived()
    expect(body('/api/g')).toBeUndefined()
    expect(body('/api/b')).toBe('b2')
  })

  it('never keeps an answer with a header node refuses to write, or a name twice', () => {
    const cache = new Microcache(60_000)
    const key = cache.key('/api/bad', new Date())
    cache.set(key, { ...answer, headers: { 'Cache-Control': 'public\r\nX-Injected: 1' } })
    expect(cache.get(key)).toBeUndefined()
    cache.set(key, { ...answer, headers: { 'Bad Name': 'x' } })
    expect(cache.get(key)).toBeUndefined()
    // One name twice: the list keeps one value per name, so such an answer is not replayed either.
    cache.set(key, { ...answer, headers: { 'x-request-id': 'from the route' } })
    expect(cache.get(key)).toBeUndefined()
    cache.set(key, answer)
    expect(cache.get(key)?.body).toBe(answer.body)
  })
})

describe('request ids of replays (requestIdSource)', () => {
  it('counts in the last 12 hex digits after a random prefix, unique across the table’s wrap', () => {
    const next = requestIdSource()
    const ids = Array.from({ length: 600 }, next)
    expect(new Set(ids).size).toBe(600)
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(ids.map((id) => parseInt(id.slice(24), 16))).toEqual(ids.map((_, n) => n))
    expect(new Set(ids.map((id) => id.slice(0, 24))).size).toBe(1)
    expect(requestIdSource()().slice(0, 24)).not.toBe(ids[0]!.slice(0, 24))
  })
})

describe('access line of a replay', () => {
  it('names the path of each request when paths alternate (the last path is remembered)', async () => {
    const { execFileSync } = await import('node:child_process')
    const script = `
      import { createLogger, replayLog } from './src/core/logger.ts'
      const log = replayLog(createLogger('info'))
      for (const path of ['/api/a', '/api/b?x="é', '/api/b?x="é', '/api/a', '/api/c']) log('id', 'GET', path, 200, 0)`
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' })
    const paths = out
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { path: string }).path)
    expect(paths).toEqual(['/api/a', '/api/b?x="é', '/api/b?x="é', '/api/a', '/api/c'])
  })

  it('carries each request’s own status, method, ms and time (the kept end and second change with them)', async () => {
    const { execFileSync } = await import('node:child_process')
    const script = `
      import { createLogger, replayLog } from './src/core/logger.ts'
      const log = replayLog(createLogger('info'))
      const times = [1795787151005, 1795787151999, 1795787152000, 1795787152040, 1795787152040]
      const fields = [[200, 'GET', 0], [304, 'GET', 0], [304, 'HEAD', 0], [304, 'HEAD', 7], [200, 'GET', 0]]
      fields.forEach(([status, method, ms], i) => {
        Date.now = () => times[i]
        log('id-' + i, method, '/api/x', status, ms)
      })`
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' })
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { time: number; requestId: string; method: string; status: number; ms: number })
    expect(lines.map((l) => [l.time, l.requestId, l.method, l.status, l.ms])).toEqual([
      [1795787151005, 'id-0', 'GET', 200, 0],
      [1795787151999, 'id-1', 'GET', 304, 0],
      [1795787152000, 'id-2', 'HEAD', 304, 0],
      [1795787152040, 'id-3', 'HEAD', 304, 7],
      [1795787152040, 'id-4', 'GET', 200, 0],
    ])
  })

  it('fills the turn’s writes up to 4,096 bytes, each ending a line, and writes a longer line alone', async () => {
    // 60 lines in one turn (over 4,096 bytes in all), paths alternating with a multi-byte one and
    // one longer than a write; every write to stdout is recorded.
    const script = `
      import fs from 'node:fs'
      import { syncBuiltinESMExports } from 'node:module'
      import { createLogger, replayLog } from './src/core/logger.ts'
      const writes = []
      const writeSync = fs.writeSync
      fs.writeSync = (fd, buffer, offset = 0, length = buffer.length - offset) => {
        if (fd === 1) writes.push(Buffer.from(buffer.subarray(offset, offset + length)).toString())
        return writeSync(fd, buffer, offset, length)
      }
      syncBuiltinESMExports()
      const log = replayLog(createLogger('info'))
      const paths = ['/api/a', '/api/é?x="y\\\\"', '/api/' + 'l'.repeat(5000)]
      for (let i = 0; i < 60; i++) log('id-' + i, i % 2 ? 'HEAD' : 'GET', paths[i % 3], 200 + (i % 2) * 104, i % 4)
      await new Promise((resolve) => setImmediate(resolve))
      process.stderr.write(JSON.stringify(writes))`
    const { spawnSync } = await import('node:child_process')
    // stdout is a file, not a pipe: a full pipe (a busy machine, a slow reader) makes writeSync throw
    // EAGAIN part-way and the logger write the rest again, which the recorder above would count twice.
    const dir = mkdtempSync(join(tmpdir(), 'turn-writes-'))
    const out = openSync(join(dir, 'stdout'), 'w+')
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      stdio: ['ignore', out, 'pipe'],
    })
    closeSync(out)
    const stdout = readFileSync(join(dir, 'stdout'), 'utf8')
    rmSync(dir, { recursive: true, force: true })
    const writes = JSON.parse(run.stderr) as string[]
    expect(writes.join('')).toBe(stdout)
    const paths = ['/api/a', '/api/é?x="y\\"', '/api/' + 'l'.repeat(5000)]
    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(lines.map((l) => [l.requestId, l.method, l.path, l.status, l.ms, l.cached, l.msg, l.level])).toEqual(
      Array.from({ length: 60 }, (_, i) => [
        `id-${i}`,
        i % 2 ? 'HEAD' : 'GET',
        paths[i % 3],
        200 + (i % 2) * 104,
        i % 4,
        true,
        'request',
        30,
      ]),
    )
    for (const line of lines) expect(Math.abs((line.time as number) - Date.now())).toBeLessThan(60_000)
    for (const chunk of writes) {
      expect(chunk.endsWith('\n')).toBe(true)
      // A write of more than 4,096 bytes is one long line alone.
      if (Buffer.byteLength(chunk) > 4096) expect(chunk.split('\n')).toHaveLength(2)
    }
    expect(writes.length).toBeGreaterThan(20)
  })

  it('is written in the check phase that writes its replay: the turn schedules one setImmediate, not two', async () => {
    const { spawnSync } = await import('node:child_process')
    // The real listener and logger in a process of their own, stdout a pipe. Each setImmediate is
    // recorded with its callback's name, and each write to stdout with the immediate it ran in.
    const script = `
      import fs from 'node:fs'
      import { syncBuiltinESMExports } from 'node:module'
      import { createServer } from 'node:http'
      import { connect } from 'node:net'
      import { createLogger } from './src/core/logger.ts'
      import { fixedClock } from './src/core/clock.ts'
      import { Microcache } from './src/http/microcache.ts'
      import { createListener } from './src/process/http-listener.ts'
      // A pinned clock: the entry is the current second's, and the request may come a second later.
      const clock = fixedClock(new Date())
      const microcache = new Microcache(60_000)
      microcache.set(microcache.key('/api/x', clock.now()), { status: 200, headers: {}, body: '{}', etag: '"e"' })
      const app = { microcache, fetch: () => new Response('not cached', { status: 500 }) }
      const listener = createListener(app, { clock, logger: createLogger('info') })
      const events = []
      let running = 'none'
      const plain = globalThis.setImmediate
      globalThis.setImmediate = (callback, ...args) => {
        events.push('schedule ' + callback.name)
        return plain(() => {
          running = callback.name
          try { callback(...args) } finally { running = 'none' }
        })
      }
      const writeSync = fs.writeSync
      fs.writeSync = (fd, ...rest) => {
        if (fd === 1) events.push('stdout in ' + running)
        return writeSync(fd, ...rest)
      }
      // The logger imports writeSync by name: its binding follows fs once synced.
      syncBuiltinESMExports()
      const server = createServer(listener).listen(0, '127.0.0.1', () => {
        const socket = connect(server.address().port, '127.0.0.1')
        socket.write('GET /api/x HTTP/1.1\\r\\nHost: a\\r\\nConnection: close\\r\\n\\r\\n')
        let answer = ''
        socket.on('data', (chunk) => (answer += chunk))
        socket.on('close', () => {
          globalThis.setImmediate = plain
          server.close()
          process.stderr.write(JSON.stringify({ answer: answer.split('\\r\\n')[0], events }))
        })
      })`
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' })
    const { answer, events } = JSON.parse(run.stderr) as { answer: string; events: string[] }
    expect(answer).toBe('HTTP/1.1 200 OK')
    const line = JSON.parse(run.stdout.trim()) as { path: string; status: number; cached: boolean }
    expect(line).toMatchObject({ path: '/api/x', status: 200, cached: true })
    // The listener's flush is the only immediate our code schedules, and the line is written in it.
    expect(events.filter((e) => e === 'schedule flush' || e === 'schedule endTurn')).toEqual(['schedule flush'])
    expect(events.filter((e) => e.startsWith('stdout'))).toEqual(['stdout in flush'])
  })

  it('is the line pino writes for the same fields, on the same stdout', async () => {
    const { execFileSync } = await import('node:child_process')
    const script = `
      import { createLogger, replayLog } from './src/core/logger.ts'
      const logger = createLogger('info')
      const fields = ['abc-1.2:3', 'GET', '/api/channels/x/status?q="\\\\é', 304, 2]
      replayLog(logger)(...fields)
      const [requestId, method, path, status, ms] = fields
      logger.info({ requestId, method, path, status, ms, cached: true }, 'request')
      replayLog(createLogger('warn'))(...fields)`
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' })
    const lines = out.trim().split('\n')
    expect(lines).toHaveLength(2) // nothing at warn
    const [direct, viaPino] = lines.map((l) => JSON.parse(l))
    expect(Object.keys(direct)).toEqual(Object.keys(viaPino))
    expect({ ...direct, time: 0 }).toEqual({ ...viaPino, time: 0 })
    expect(direct.path).toBe('/api/channels/x/status?q="\\é')
    expect(Math.abs(direct.time - viaPino.time)).toBeLessThan(1000)
  })
})

describe('drain of a plain node:http server (createDrain)', () => {
  it('tracks responses that end in any order: the ones still running when it starts answer with Connection: close, and it ends', async () => {
    // Each request names how long it runs; they end in an order unrelated to their start.
    const server = createServer()
    const drain = createDrain(server)
    server.on('request', (req, res) => {
      drain.track(res)
      const ms = Number(new URL(req.url!, 'http://x').searchParams.get('ms'))
      setTimeout(() => res.end('ok'), ms)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const delays = Array.from({ length: 40 }, (_, i) => (i * 37) % 23)
    // A first wave ends before the drain, a second one is still running when it starts.
    await Promise.all(delays.map((ms) => fetch(`${base}/?ms=${ms}`).then((r) => r.text())))
    const running = delays.map((ms) =>
      fetch(`${base}/?ms=${300 + ms * 10}`).then(async (r) => ({ connection: r.headers.get('connection'), body: await r.text() })),
    )
    await new Promise((r) => setTimeout(r, 100))
    const drained = drain.drain(10_000)
    const answers = await Promise.all(running)
    expect(answers.every((a) => a.body === 'ok' && a.connection === 'close')).toBe(true)
    await drained // resolves only when every tracked response has left the list
    expect(server.listening).toBe(false)
  })

  it('waits for a response written whole but not tracked while its bytes are still queued (a slow reader)', async () => {
    // 64 MiB: more than the kernel's buffers on both ends of a loopback connection hold.
    const body = 'x'.repeat(64 << 20)
    const server = createServer()
    const drain = createDrain(server)
    server.on('request', (_req, res) => {
      res.end(body)
      drain.written(res)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1')
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    socket.pause() // reads nothing until the drain's quiet time has long passed
    let received = 0
    let head = ''
    socket.on('data', (chunk: Buffer) => {
      if (!head) head = chunk.subarray(0, chunk.indexOf('\r\n\r\n') + 4).toString()
      received += chunk.length
    })
    const ended = new Promise((resolve) => socket.on('close', resolve))
    await new Promise((r) => setTimeout(r, 100))
    const drained = drain.drain(20_000)
    await new Promise((r) => setTimeout(r, 1500))
    expect(server.listening).toBe(true)
    socket.resume()
    await drained
    await ended
    expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    expect(received - head.length).toBe(body.length)
  })
})
