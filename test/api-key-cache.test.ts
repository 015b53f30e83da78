import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import pg from 'pg'
import BetterSqlite3 from 'better-sqlite3'
import { targets } from './kit/databases.js'
import { TestKit, useKit } from './kit/kit.js'
import { authenticateApiKey, createApiKey, revokeApiKey, sha256 } from '../src/auth/api-keys.js'
import { createApiKeyCache } from '../src/auth/api-key-cache.js'
import { ALL_SCOPES } from '../src/auth/scopes.js'
import { startFaultProxy, type FaultProxy } from './kit/fault-proxy.js'
import { API_KEY_REVOKED } from '../src/auth/api-key-revoked.js'
import { createInProcessBus } from '../src/events/in-process-bus.js'
import { RESYNC, type EventBus } from '../src/events/event-bus.js'
import type { PostgresBus } from '../src/events/postgres-bus.js'
import { parseDatabaseUrl } from '../src/db/connection-url.js'
import { createLogger } from '../src/core/logger.js'
import { openDatabase } from '../src/db/client.js'
import { createDeps } from '../src/deps.js'
import { createApp } from '../src/app.js'
import { parseEnv } from '../src/core/env.js'

const CACHED = { API_KEY_CACHE_MS: '30000' }
/**
 * A refusal this soon cannot come from the cache entry's expiry (API_KEY_CACHE_MS, 30 s): the
 * revocation was pushed. How soon it arrives is a figure of `npm run bench -- revocation`, not a
 * bound of these tests (a loaded machine only makes it later).
 */
const PUSHED_WITHIN_MS = Number(CACHED.API_KEY_CACHE_MS) / 3

/** Milliseconds until `kit` answers 401 for `key` (polled every 10 ms), or Infinity after `limitMs`. */
async function msUntilRefused(kit: TestKit, key: string, since: number, limitMs = PUSHED_WITHIN_MS): Promise<number> {
  while (performance.now() - since < limitMs) {
    if ((await kit.rest('GET', '/api/contacts', { key })).status === 401) return performance.now() - since
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return Infinity
}

const run = promisify(execFile)

/**
 * Revokes `key` with the CLI (its own process) on the database at `url` while `kit` is polled; the
 * milliseconds from the revocation's commit (its revokedAt) to the first 401 on `kit`.
 */
async function msFromCliRevocationToRefusal(kit: TestKit, url: string, key: string): Promise<number> {
  const polling = (async () => {
    const since = performance.now()
    const sinceWall = Date.now()
    return sinceWall + (await msUntilRefused(kit, key, since, 60_000))
  })()
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'apikey:revoke', '--key', key.slice(0, 15)], {
    env: { ...process.env, DATABASE_URL: url },
  })
  const revokedAt = Date.parse(JSON.parse(stdout).revokedAt)
  return (await polling) - revokedAt
}

/** The write of a key's lastUsedAt: at most once a minute per key, off the request's path (so it may land in the next request's statements). */
const LAST_USED = /^UPDATE .*ApiKey.*lastUsedAt/s
/** Statements but that write and its transaction's COMMIT (the reads measured here commit nothing). */
const lookupsOnly = (statements: string[]) => statements.filter((q) => !LAST_USED.test(q) && q !== 'COMMIT')

/** A request, with the SQL statements it sent on `kit` (lastUsedAt writes aside). */
async function statementsOf(kit: TestKit, key: string) {
  kit.statements.length = 0
  const res = await kit.rest('GET', '/api/contacts?perPage=1', { key })
  return { status: res.status, statements: lookupsOnly(kit.statements) }
}

function next(bus: EventBus, topic: string, ms = 5000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "${topic}" within ${ms} ms`)), ms)
    const off = bus.subscribe(topic, (payload) => {
      clearTimeout(timer)
      off()
      resolve(payload)
    })
  })
}

describe.each(targets)('API key cache on $name', (target) => {
  const kit = useKit(target, { env: CACHED })
  beforeAll(() => kit.deps.events.ready())

  it('looks a key and its account up in one SQL statement', async () => {
    const s = await kit.seed().account('One Statement')
    kit.statements.length = 0
    const account = await authenticateApiKey(kit.db, s.key)
    expect(account).toEqual({
      id: s.account.id,
      name: 'One Statement',
      timezone: 'UTC',
      keyId: expect.any(String),
      keyPrefix: s.key.slice(0, 15),
      scopes: ALL_SCOPES,
      keyExpiresAt: null,
    })
    expect(kit.statements).toHaveLength(1)
    expect(kit.statements[0]).toMatch(/JOIN "Account"/)
    // Directly (Database.directRead, what the service uses): the same answer, the same one statement.
    kit.statements.length = 0
    expect(await authenticateApiKey(kit.db, s.key, kit.deps.directRead)).toEqual(account)
    expect(kit.statements).toHaveLength(1)
    expect(kit.statements[0]).toMatch(/JOIN "Account"/)
  })

  it('refuses unknown and revoked keys directly as through Prisma, and a failed direct read falls back to Prisma', async () => {
    const s = await kit.seed().account()
    const revoked = await createApiKey(kit.deps, s.account.id)
    await revokeApiKey(kit.deps, revoked.id)
    const unknown = `${s.key.slice(0, -1)}${s.key.endsWith('A') ? 'B' : 'A'}`
    for (const direct of [kit.deps.directRead, undefined]) {
      await expect(authenticateApiKey(kit.db, unknown, direct)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' })
      await expect(authenticateApiKey(kit.db, revoked.apiKey, direct)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' })
    }
    // A connection that is not open yet: the direct read declines (SQLite) or fails to connect
    // through a closed pool (PostgreSQL); the lookup goes through Prisma instead.
    const database = await openDatabase(kit.url)
    await database.close()
    let directCalls = 0
    const closedDirect: typeof kit.deps.directRead = (query, options) => {
      directCalls++
      return database.directRead!(query, options)
    }
    expect((await authenticateApiKey(kit.db, s.key, closedDirect)).id).toBe(s.account.id)
    expect(directCalls).toBe(1)
  })

  it("sends a key's lastUsedAt write after the request's own statement, not before it", async () => {
    // A pool of one connection serves statements in the order they ask for it: a write sent first
    // held the request's page behind it (on a pool of ten, the request opened a connection).
    const s = await kit.seed().account().contacts(2)
    const order: string[] = []
    const database = await openDatabase(kit.url, { poolSize: 1, onQuery: (sql) => order.push(sql) })
    const env = parseEnv({ DATABASE_URL: kit.url, LOG_LEVEL: 'silent', RATE_LIMIT_PER_SECOND: '0', ...CACHED })
    const deps = createDeps(database, env, { events: kit.deps.events })
    try {
      const app = createApp({ deps, ready: database.ready })
      const res = await app.fetch(new Request('http://localhost/api/contacts?perPage=1', { headers: { authorization: `Bearer ${s.key}` } }))
      expect(res.status).toBe(200)
      await deps.apiKeyCache.idle()
      const lookup = order.findIndex((q) => q.includes('JOIN "Account"'))
      const page = order.findIndex((q) => q.includes('"ListTotal"'))
      const write = order.findIndex((q) => LAST_USED.test(q))
      expect(lookup).toBe(0)
      expect(page).toBeGreaterThan(lookup)
      expect(write).toBeGreaterThan(page)
      // The write is one statement, in no transaction (Prisma's updateMany sent BEGIN and COMMIT around it).
      expect(order.filter((q) => LAST_USED.test(q))).toHaveLength(1)
      expect(order.filter((q) => /^\s*(BEGIN|COMMIT)\b/i.test(q))).toEqual([])
    } finally {
      await deps.apiKeyCache.idle()
      await database.close()
    }
  })

  it('answers a cached key with no SQL for authentication on the second request', async () => {
    const s = await kit.seed().account()
    const first = await statementsOf(kit, s.key)
    const second = await statementsOf(kit, s.key)
    expect(first.status).toBe(200)
    expect(second.status).toBe(200)
    expect(first.statements.filter((q) => q.includes('"ApiKey"'))).toHaveLength(1)
    expect(second.statements.filter((q) => q.includes('"ApiKey"'))).toEqual([])
    expect(second.statements.length).toBe(first.statements.length - 1)
    kit.statements.length = 0
    expect(await kit.deps.apiKeyCache.authenticate(s.key)).toEqual({
      id: s.account.id,
      name: 'Acme',
      timezone: 'UTC',
      keyId: expect.any(String),
      keyPrefix: s.key.slice(0, 15),
      scopes: ALL_SCOPES,
      keyExpiresAt: null,
    })
    expect(kit.statements).toEqual([])
  })

  it('refuses a key revoked on this instance on the very next request', async () => {
    const s = await kit.seed().account()
    expect((await kit.rest('GET', '/api/contacts', { key: s.key })).status).toBe(200)
    expect((await statementsOf(kit, s.key)).statements.filter((q) => q.includes('"ApiKey"'))).toEqual([])
    await revokeApiKey(kit.deps, s.key)
    const res = await kit.rest('GET', '/api/contacts', { key: s.key })
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ error: 'A valid API key is required', code: 'UNAUTHENTICATED' })
  })

  it('does not remember a refusal: a key refused before it existed works once it is created', async () => {
    const s = await kit.seed().account()
    const prefix = `gk_${randomBytes(6).toString('hex')}`
    const key = `${prefix}_${randomBytes(32).toString('base64url')}`
    expect((await kit.rest('GET', '/api/contacts', { key })).status).toBe(401)
    expect((await kit.rest('GET', '/api/contacts', { key })).status).toBe(401)
    await kit.db.apiKey.create({ data: { accountId: s.account.id, prefix, hash: sha256(key).toString('hex') } })
    expect((await kit.rest('GET', '/api/contacts', { key })).status).toBe(200)
  })

  it('keeps keys for the TTL only, at most maxEntries (least recently used out)', async () => {
    const s = await kit.seed().account()
    const keys = [s.key, (await createApiKey(kit.deps, s.account.id)).apiKey, (await createApiKey(kit.deps, s.account.id)).apiKey]
    let now = 0
    const cache = createApiKeyCache({ db: kit.db, events: kit.deps.events, ttlMs: 1000, maxEntries: 2, now: () => now })
    const lookups = async (key: string) => {
      kit.statements.length = 0
      await cache.authenticate(key)
      return lookupsOnly(kit.statements).length
    }
    expect(await lookups(keys[0]!)).toBe(1)
    expect(await lookups(keys[1]!)).toBe(1)
    expect(await lookups(keys[0]!)).toBe(0) // keys[0] is now the most recently used
    expect(await lookups(keys[2]!)).toBe(1) // evicts keys[1]
    expect(cache.size()).toBe(2)
    expect(await lookups(keys[0]!)).toBe(0)
    expect(await lookups(keys[1]!)).toBe(1)
    now = 999
    expect(await lookups(keys[1]!)).toBe(0)
    now = 2000
    expect(await lookups(keys[1]!)).toBe(1)
  })

  it('looks every request up with API_KEY_CACHE_MS=0', async () => {
    const s = await kit.seed().account()
    const cache = createApiKeyCache({ db: kit.db, events: kit.deps.events, ttlMs: 0 })
    for (let i = 0; i < 3; i++) {
      kit.statements.length = 0
      await cache.authenticate(s.key)
      expect(lookupsOnly(kit.statements)).toHaveLength(1)
    }
    expect(cache.size()).toBe(0)
  })

  it.each(['directly', 'through Prisma'])(
    "writes a key's lastUsedAt on use, at most once a minute per key and instance (%s)",
    async (how) => {
      const s = await kit.seed().account()
      const id = (await kit.db.apiKey.findFirstOrThrow({ where: { accountId: s.account.id } })).id
      const lastUsed = async () => (await kit.db.apiKey.findUniqueOrThrow({ where: { id } })).lastUsedAt
      expect(await lastUsed()).toBeNull()
      let now = 0
      // Its own connection: the writes counted are this cache's, not those other tests' caches still
      // have queued for the check phase (on SQLite a test that never waits for I/O never reaches it).
      const statements: string[] = []
      const database = await openDatabase(kit.url, { onQuery: (sql) => statements.push(sql) })
      const direct = how === 'directly' ? { read: database.directRead!, kind: database.kind } : undefined
      const cache = createApiKeyCache({ db: database.prisma, direct, events: kit.deps.events, ttlMs: 1000, now: () => now })
      try {
        const before = Date.now()
        for (const at of [0, 10_000, 59_999]) {
          now = at
          await cache.authenticate(s.key)
        }
        await cache.idle()
        const after = Date.now()
        // Read back through Prisma as the time of the use (the direct write's text is Prisma's format).
        const first = await lastUsed()
        expect(first!.getTime()).toBeGreaterThanOrEqual(before)
        expect(first!.getTime()).toBeLessThanOrEqual(after)
        expect(statements.filter((q) => LAST_USED.test(q))).toHaveLength(1)
        now = 60_000
        await cache.authenticate(s.key)
        await vi.waitFor(() => expect(statements.filter((q) => LAST_USED.test(q))).toHaveLength(2))
        await vi.waitFor(async () => expect((await lastUsed())!.getTime()).toBeGreaterThanOrEqual(first!.getTime()))
      } finally {
        await cache.idle()
        await database.close()
      }
    },
  )

  it('does not store a lookup overtaken by a revocation event, nor anything while the bus is not live', async () => {
    const s = await kit.seed().account()
    const cache = createApiKeyCache({ db: kit.db, events: kit.deps.events, ttlMs: 30_000 })
    const pending = cache.authenticate(s.key)
    await kit.deps.events.publish(API_KEY_REVOKED, { id: 'x', prefix: s.key.slice(0, 15) })
    await pending
    expect(cache.size()).toBe(0)
    await cache.authenticate(s.key)
    expect(cache.size()).toBe(1)

    const deaf = createInProcessBus(createLogger('silent'))
    await deaf.close()
    const offline = createApiKeyCache({ db: kit.db, events: deaf, ttlMs: 30_000 })
    await offline.authenticate(s.key)
    expect(offline.size()).toBe(0)
  })

  it('still refuses malformed, unknown and revoked keys without a database round trip for malformed ones', async () => {
    const s = await kit.seed().account()
    const extra = await createApiKey(kit.deps, s.account.id)
    await revokeApiKey(kit.deps, extra.id)
    kit.statements.length = 0
    await expect(kit.deps.apiKeyCache.authenticate('not-a-key')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' })
    expect(kit.statements).toEqual([])
    await expect(kit.deps.apiKeyCache.authenticate(`${s.key.slice(0, -1)}${s.key.endsWith('A') ? 'B' : 'A'}`)).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
    })
    await expect(kit.deps.apiKeyCache.authenticate(extra.apiKey)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' })
  })
})

const postgres = targets.find((t) => t.name === 'postgresql')

describe.runIf(postgres)("a key's lastUsedAt write that fails on PostgreSQL", () => {
  const kit = useKit(postgres!, { env: CACHED })
  let proxy: FaultProxy
  beforeAll(async () => {
    proxy = await startFaultProxy()
  })
  afterAll(() => proxy?.close())

  it('changes nothing, and is sent again on the next use within the minute once the database answers', async () => {
    const s = await kit.seed().account()
    const id = (await kit.db.apiKey.findFirstOrThrow({ where: { accountId: s.account.id } })).id
    const lastUsed = async () => (await kit.db.apiKey.findUniqueOrThrow({ where: { id } })).lastUsedAt
    const database = await openDatabase(proxy.url(kit.url), { timeouts: { connectMs: 2000 } })
    let now = 0
    const cache = createApiKeyCache({
      db: database.prisma,
      direct: { read: database.directRead!, kind: database.kind },
      events: kit.deps.events,
      ttlMs: 30_000,
      now: () => now,
    })
    try {
      await cache.authenticate(s.key)
      // The write waits for the check phase: the database goes away before it is sent.
      proxy.refuse()
      await cache.idle()
      expect(await lastUsed()).toBeNull()
      await proxy.heal()
      now = 10_000
      // Answered from the cache (no lookup), and the write is due again: the failed one did not count.
      await cache.authenticate(s.key)
      await cache.idle()
      expect(await lastUsed()).not.toBeNull()
    } finally {
      await cache.idle()
      await database.close()
    }
  })
})

describe.runIf(postgres)('API key revocation across instances on PostgreSQL', () => {
  const a = useKit(postgres!, { env: CACHED })
  const b = new TestKit(postgres!, { env: CACHED })
  let admin: pg.Client
  beforeAll(async () => {
    await b.attach(a.url)
    admin = new pg.Client({ connectionString: parseDatabaseUrl(a.url).connectionString })
    await admin.connect()
    await Promise.all([a.deps.events.ready(), b.deps.events.ready()])
  })
  afterAll(async () => {
    await b.detach()
    await admin?.end()
  })

  /** A key that instance B has cached (its second request sends no key lookup). */
  async function cachedOnB() {
    const s = await a.seed().account()
    expect((await b.rest('GET', '/api/contacts', { key: s.key })).status).toBe(200)
    expect((await statementsOf(b, s.key)).statements.filter((q) => q.includes('"ApiKey"'))).toEqual([])
    return s
  }

  it('a key revoked through instance A is refused by instance B long before its cache entry expires', async () => {
    const s = await cachedOnB()
    const started = performance.now()
    await revokeApiKey(a.deps, s.key)
    const delay = await msUntilRefused(b, s.key, started)
    expect(delay).toBeLessThan(PUSHED_WITHIN_MS)
  })

  it('a key revoked by the CLI (another process) is refused by instance B long before its cache entry expires', async () => {
    const s = await cachedOnB()
    const delay = await msFromCliRevocationToRefusal(b, a.url, s.key)
    expect(delay).toBeLessThan(PUSHED_WITHIN_MS)
  }, 60_000)

  it('flushes on resync after the listening connection is killed, and later revocations arrive again', async () => {
    const s = await cachedOnB()
    const other = await cachedOnB()
    const bus = b.deps.events as PostgresBus
    expect(b.deps.apiKeyCache.size()).toBeGreaterThanOrEqual(2)
    const resync = next(bus, RESYNC)
    await admin.query('SELECT pg_terminate_backend($1)', [bus.listenerPid()])
    await resync
    expect(b.deps.apiKeyCache.size()).toBe(0)
    expect((await statementsOf(b, s.key)).statements.filter((q) => q.includes('"ApiKey"'))).toHaveLength(1)
    expect((await statementsOf(b, s.key)).statements.filter((q) => q.includes('"ApiKey"'))).toEqual([])
    const started = performance.now()
    await revokeApiKey(a.deps, s.key)
    expect(await msUntilRefused(b, s.key, started)).toBeLessThan(PUSHED_WITHIN_MS)
    expect((await b.rest('GET', '/api/contacts', { key: other.key })).status).toBe(200)
  })
})

const sqlite = targets.find((t) => t.name === 'sqlite')!

describe('API key cache on SQLite as shipped (no API_KEY_CACHE_MS)', () => {
  const kit = useKit(sqlite)
  /** Another process's connection to the same file: SQLite tells nothing across connections. */
  let other: BetterSqlite3.Database
  beforeAll(() => {
    other = new BetterSqlite3(parseDatabaseUrl(kit.url).file!)
  })
  afterAll(() => other?.close())
  const apiKeyLookups = async (key: string) => (await statementsOf(kit, key)).statements.filter((q) => q.includes('"ApiKey"'))

  it('keeps a verified key while other connections write, and refuses it on the very next request once one revokes it', async () => {
    const s = await kit.seed().account()
    expect(await apiKeyLookups(s.key)).toHaveLength(1)
    expect(await apiKeyLookups(s.key)).toEqual([])
    // Another process's ordinary writes (data_version moves) leave the cache alone...
    other.prepare('UPDATE "Account" SET "name" = ? WHERE "id" = ?').run('Renamed elsewhere', s.account.id)
    expect(await apiKeyLookups(s.key)).toEqual([])
    // ...and so does a revocation of some other key...
    const spare = await createApiKey(kit.deps, s.account.id)
    other.prepare('UPDATE "ApiKey" SET "revokedAt" = ? WHERE "id" = ?').run(Date.now(), spare.id)
    expect(await apiKeyLookups(s.key)).toHaveLength(1)
    expect(await apiKeyLookups(s.key)).toEqual([])
    // ...while its own revocation, committed by another connection, is seen by the very next request.
    other.prepare('UPDATE "ApiKey" SET "revokedAt" = ? WHERE "prefix" = ?').run(Date.now(), s.key.slice(0, 15))
    expect((await kit.rest('GET', '/api/contacts', { key: s.key })).status).toBe(401)
  })

  it('refuses a key revoked by the CLI (another process, which it cannot hear) on the very next request', async () => {
    const s = await kit.seed().account()
    expect((await kit.rest('GET', '/api/contacts', { key: s.key })).status).toBe(200)
    expect(await apiKeyLookups(s.key)).toEqual([])
    const revoked = await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'apikey:revoke', '--key', s.key.slice(0, 15)], {
      env: { ...process.env, DATABASE_URL: kit.url },
    })
    expect(JSON.parse(revoked.stdout).revokedAt).toEqual(expect.any(String))
    expect((await kit.rest('GET', '/api/contacts', { key: s.key })).status).toBe(401)
  }, 60_000)
})
