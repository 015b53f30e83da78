// The database's circuit breaker against a real PostgreSQL behind the test kit's fault proxy: a
// black-holed database makes new requests answer 503 at once, and the breaker closes by itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { startFaultProxy, type FaultProxy } from './kit/fault-proxy.js'
import { spawnServer } from './kit/server-process.js'
import { applyMigrations } from '../src/db/migrate.js'

const postgres = targets.find((t) => t.name === 'postgresql')

describe.skipIf(!postgres)('circuit breaker for the database (PostgreSQL through a fault proxy)', () => {
  let proxy: FaultProxy
  let drop: () => Promise<void>
  let server: ReturnType<typeof spawnServer>
  let base: string
  beforeAll(async () => {
    const database = await postgres!.create()
    drop = database.drop
    await applyMigrations(database.url)
    proxy = await startFaultProxy()
    server = spawnServer({ DATABASE_URL: proxy.url(database.url), WORKER_ENABLED: 'false', RATE_LIMIT_ANONYMOUS_PER_SECOND: '0' })
    base = await server.listening()
  }, 120_000)
  afterAll(async () => {
    server?.child.kill('SIGKILL')
    await server?.exited
    await proxy?.close()
    await drop?.()
  })

  /** A request with the 1.5 s patience of the clients: its status, or 'timeout'. */
  const within = async (path: string, init: RequestInit = {}) => {
    try {
      const res = await fetch(base + path, { ...init, signal: AbortSignal.timeout(1500) })
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
      expect(await within('/api/contacts', { headers: { authorization: `Bearer gk_000000000000_${'A'.repeat(43)}` } })).toEqual({
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
    expect(await within('/graphql', graphql)).toMatchObject({ status: 200, body: { data: { streamChannels: [] } } })
    expect(server.lines().map((l) => l.msg)).toEqual(
      expect.arrayContaining(['database unreachable: answering 503 until a probe succeeds', 'database reachable again']),
    )
  }, 60_000)
})
