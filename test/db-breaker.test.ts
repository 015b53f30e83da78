// The database's circuit breaker against a real PostgreSQL behind the test kit's fault proxy, two
// instances on one database: a black-holed database makes new requests answer 503 at once, the
// requests already waiting on it answer 503 when the breaker opens (not at their statement
// timeout), and the breaker closes by itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { startFaultProxy, type FaultProxy } from './kit/fault-proxy.js'
import { spawnServer } from './kit/server-process.js'
import { applyMigrations } from '../src/db/migrate.js'

const postgres = targets.find((t) => t.name === 'postgresql')
/** The statement, connection and transaction timeouts of the servers under test. */
const LONG_WAIT_MS = 60_000
const UNKNOWN_KEY = `Bearer gk_000000000000_${'A'.repeat(43)}`

describe.skipIf(!postgres)('circuit breaker for the database (PostgreSQL through a fault proxy)', () => {
  let proxy: FaultProxy
  let drop: () => Promise<void>
  let servers: ReturnType<typeof spawnServer>[] = []
  let bases: string[] = []
  let server: ReturnType<typeof spawnServer>
  let base: string
  beforeAll(async () => {
    const database = await postgres!.create()
    drop = database.drop
    await applyMigrations(database.url)
    proxy = await startFaultProxy()
    // Waits on the database as long as a minute, so that a request which waits for its timeout
    // cannot be mistaken for one the breaker answered.
    const env = {
      DATABASE_URL: proxy.url(database.url),
      WORKER_ENABLED: 'false',
      RATE_LIMIT_ANONYMOUS_PER_SECOND: '0',
      DB_STATEMENT_TIMEOUT_MS: String(LONG_WAIT_MS),
      DB_CONNECT_TIMEOUT_MS: String(LONG_WAIT_MS),
      DB_TRANSACTION_TIMEOUT_MS: String(LONG_WAIT_MS),
      // Longer than the default, so that the requests sent right after the freeze are all waiting
      // on the database before the breaker can open.
      DB_PROBE_TIMEOUT_MS: '2000',
    }
    servers = [spawnServer(env), spawnServer(env)]
    bases = await Promise.all(servers.map((s) => s.listening()))
    server = servers[0]!
    base = bases[0]!
  }, 120_000)
  afterAll(async () => {
    for (const s of servers) s.child.kill('SIGKILL')
    await Promise.all(servers.map((s) => s.exited))
    await proxy?.close()
    await drop?.()
  })

  /** A request with the 1.5 s patience of the clients: its status, or 'timeout'. */
  const within = async (path: string, init: RequestInit = {}, patienceMs = 1500, at = base) => {
    try {
      const res = await fetch(at + path, { ...init, signal: AbortSignal.timeout(patienceMs) })
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() }
    } catch {
      return 'timeout' as const
    }
  }
  const graphql = {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ streamChannels { name } }' }),
  }

  it('answers 503 with Retry-After within 1.5 s while the database is black-holed, on REST, the channel API and GraphQL; closes again by itself', async () => {
    expect(await within('/api/channels/demo/status')).toMatchObject({ status: 404 })
    await proxy.blackhole()
    // The probe notices within about two seconds; from then on every new request answers at once.
    await expect.poll(() => within('/api/channels/demo/status'), { timeout: 10_000, interval: 200 }).toMatchObject({ status: 503 })
    for (let i = 0; i < 3; i++) {
      expect(await within('/api/channels/demo/status')).toEqual({
        status: 503,
        retryAfter: '1',
        body: { error: 'The database is unavailable; try again shortly' },
      })
      expect(await within('/api/contacts', { headers: { authorization: UNKNOWN_KEY } })).toEqual({
        status: 503,
        retryAfter: '1',
        body: { error: 'The database is unavailable; try again shortly', code: 'SERVICE_UNAVAILABLE' },
      })
      expect(await within('/graphql', graphql)).toEqual({
        status: 503,
        retryAfter: '1',
        body: { errors: [{ message: 'The database is unavailable; try again shortly', extensions: { code: 'SERVICE_UNAVAILABLE' } }] },
      })
    }
    expect((await fetch(`${base}/healthz`)).status).toBe(200)
    await proxy.heal()
    await expect.poll(() => within('/api/channels/demo/status'), { timeout: 15_000, interval: 200 }).toMatchObject({ status: 404 })
    // Recovery opens new connections (the frozen ones were cut): a correctness check, not a bound.
    expect(await within('/graphql', graphql, 10_000)).toMatchObject({ status: 200, body: { data: { streamChannels: [] } } })
    expect(server.lines().map((l) => l.msg)).toEqual(
      expect.arrayContaining(['database unreachable: answering 503 until a probe succeeds', 'database reachable again']),
    )
  }, 60_000)

  it('answers the requests already waiting on the frozen database 503 with Retry-After when the breaker opens, on both instances', async () => {
    for (const at of bases)
      await expect.poll(() => within('/api/channels/demo/status', {}, 10_000, at), { timeout: 30_000 }).toMatchObject({ status: 404 })
    const before = servers.map((s) => s.lines().length)
    await proxy.blackhole()
    // Sent at once: the breaker's probe needs at least DB_PROBE_TIMEOUT_MS to fail, so each of these
    // is waiting on the database (more than the pool's 10 connections: some wait for a connection).
    // Without the breaker's interrupt each would wait LONG_WAIT_MS; the patience is a quarter of it.
    const patience = LONG_WAIT_MS / 4
    const waiting = bases.flatMap((at) => [
      ...Array.from({ length: 12 }, () => within('/api/contacts', { headers: { authorization: UNKNOWN_KEY } }, patience, at)),
      within('/graphql', graphql, patience, at),
      within(
        '/api/contact/group/create',
        { method: 'POST', headers: { authorization: UNKNOWN_KEY, 'content-type': 'application/json' }, body: '{"name":"x"}' },
        patience,
        at,
      ),
    ])
    const answers = await Promise.all(waiting)
    for (const answer of answers) expect(answer).toMatchObject({ status: 503, retryAfter: '1' })
    expect(answers.filter((a) => a !== 'timeout' && a.body.code === 'SERVICE_UNAVAILABLE')).toHaveLength(2 * 13)
    for (const [i, s] of servers.entries())
      await expect
        .poll(() =>
          s
            .lines()
            .slice(before[i])
            .map((l) => l.msg),
        )
        .toContain('database unreachable: answering 503 until a probe succeeds')
    await proxy.heal()
    for (const at of bases)
      await expect
        .poll(() => within('/api/channels/demo/status', {}, 1500, at), { timeout: 15_000, interval: 200 })
        .toMatchObject({ status: 404 })
    expect(await within('/graphql', graphql, 10_000, bases[1])).toMatchObject({ status: 200, body: { data: { streamChannels: [] } } })
  }, 60_000)
})
