import BetterSqlite from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { TestKit, useKit, type RestResult } from './kit/kit.js'
import { startFaultProxy, type FaultProxy } from './kit/fault-proxy.js'
import { databaseFault } from '../src/core/errors.js'
import { parseEnv } from '../src/core/env.js'
import { graphql } from '../src/graphql/typed-documents.js'

const postgres = targets.find((t) => t.name === 'postgresql')
const sqlite = targets.find((t) => t.name === 'sqlite')!

// Small budgets so a fault shows within seconds; each bound below adds generous slack for a loaded machine.
const timeouts = { DB_CONNECT_TIMEOUT_MS: '500', DB_STATEMENT_TIMEOUT_MS: '1000', DB_TRANSACTION_TIMEOUT_MS: '2000', CHANNEL_CACHE_MS: '0' }
const FAULT_BOUND_MS = 6000
const UNKNOWN_CHANNEL = '/api/channels/00000000-0000-4000-8000-000000000000/status'
const GROUPS = '{ groups { nodes { id name } } }'

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const started = performance.now()
  const result = await run()
  return { ms: performance.now() - started, result }
}

function expectUnavailable(res: RestResult, api: 'messaging' | 'channel') {
  expect(res.status).toBe(503)
  expect(res.headers.get('retry-after')).toBe('1')
  expect(res.body).toEqual(
    api === 'channel'
      ? { error: 'The database is unavailable; try again shortly' }
      : { error: 'The database is unavailable; try again shortly', code: 'SERVICE_UNAVAILABLE' },
  )
}

describe.skipIf(!postgres)('database faults through a TCP proxy on PostgreSQL', () => {
  // The owner creates the schema and applies migrations on the real database; the service under
  // test is a second app whose Prisma client reaches PostgreSQL only through the proxy.
  const owner = useKit(postgres!)
  const service = new TestKit(postgres!, { env: timeouts })
  let proxy: FaultProxy
  let key: string
  let addContacts: string

  beforeAll(async () => {
    const seeded = await owner.seed().account().group({ name: 'Before the fault' })
    key = seeded.key
    addContacts = `/api/contact/group/${seeded.group.id}/add-contacts`
    proxy = await startFaultProxy()
    await service.attach(proxy.url(owner.url))
  })
  afterAll(async () => {
    await proxy.heal()
    await service.detach()
    await proxy.close()
  })

  async function answersEverything(key: string) {
    expect((await service.rest('GET', '/api/contacts', { key })).status).toBe(200)
    expect((await service.rest('GET', '/readyz')).status).toBe(200)
    expect(await service.gql(GROUPS, {}, key)).toEqual({ groups: { nodes: [expect.objectContaining({ name: 'Before the fault' })] } })
  }

  async function graphqlUnavailable(query: string, variables: Record<string, unknown> = {}) {
    const res = await service.rest('POST', '/graphql', { key, body: { query, variables } })
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('1')
    expect(res.body.errors).toEqual([
      expect.objectContaining({ message: 'The database is unavailable; try again shortly', extensions: { code: 'SERVICE_UNAVAILABLE' } }),
    ])
  }

  it('answers through the proxy while it forwards', async () => {
    await answersEverything(key)
  })

  /** A fault of the direct transaction (no Prisma between, Database.directTransaction), as the service classifies it. */
  const directFault = (text: string) =>
    service.deps
      .directTransaction((run) => run({ sql: text, text, values: [] }))
      .then(
        () => null,
        (error: unknown) => databaseFault(error)?.code ?? error,
      )

  it("classifies the direct transaction's driver errors: statement timeout is a fault, a syntax error is not", async () => {
    // DB_STATEMENT_TIMEOUT_MS is 1000: the server cancels (SQLSTATE 57014).
    expect(await directFault('SELECT pg_sleep(3)')).toBe('SERVICE_UNAVAILABLE')
    expect(await directFault('SELEC 1')).toMatchObject({ code: '42601' })
    // Both connections went back to the pool in a usable state.
    expect(await service.deps.directTransaction((run) => run({ sql: '', text: 'SELECT 1 AS "one"', values: [] }))).toEqual([{ one: 1 }])
  })

  it('refused connections: REST, channel API and GraphQL answer 503 with Retry-After at once; readiness fails', async () => {
    proxy.refuse()
    const { ms } = await timed(async () => {
      expectUnavailable(await service.rest('GET', '/api/contacts', { key }), 'messaging')
      expectUnavailable(await service.rest('POST', '/api/contact/group/create', { key, body: { name: 'During the fault' } }), 'messaging')
      // The contact writes run on their own pool connection, not through Prisma (Database.directTransaction).
      expectUnavailable(
        await service.rest('POST', addContacts, { key, body: { contacts: [{ mobile: '+254700000001', first_name: 'Fault' }] } }),
        'messaging',
      )
      expect(await directFault('SELECT 1')).toBe('SERVICE_UNAVAILABLE')
      expectUnavailable(await service.rest('GET', UNKNOWN_CHANNEL), 'channel')
      await graphqlUnavailable(GROUPS)
      await graphqlUnavailable('mutation($input: CreateGroupInput!) { createGroup(input: $input) { group { id } } }', {
        input: { name: 'During the fault' },
      })
      const ready = await service.rest('GET', '/readyz')
      expect([ready.status, ready.body]).toEqual([503, { status: 'not ready' }])
    })
    expect(ms).toBeLessThan(FAULT_BOUND_MS)
  })

  it('recovers from refused connections without a restart, and nothing was written during the fault', async () => {
    await proxy.heal()
    await answersEverything(key)
  })

  it('frozen database: requests answer 503 within the configured timeouts and /readyz within 1 s', async () => {
    await proxy.blackhole()
    const ready = await timed(() => service.rest('GET', '/readyz'))
    expect([ready.result.status, ready.result.body]).toEqual([503, { status: 'not ready' }])
    expect(ready.ms).toBeLessThan(1500)

    // Concurrent requests: more than the pool holds (10) keep waiting for connections that never answer.
    const requests = [
      ...Array.from({ length: 12 }, () => timed(() => service.rest('GET', '/api/contacts', { key }))),
      timed(() => service.rest('POST', '/api/contact/group/create', { key, body: { name: 'During the freeze' } })),
      timed(() => service.rest('POST', addContacts, { key, body: { contacts: [{ mobile: '+254700000002', first_name: 'Freeze' }] } })),
      timed(() => service.rest('GET', UNKNOWN_CHANNEL)),
    ]
    const answers = await Promise.all(requests)
    for (const [i, { result, ms }] of answers.entries()) {
      expectUnavailable(result, i === answers.length - 1 ? 'channel' : 'messaging')
      expect(ms).toBeLessThan(FAULT_BOUND_MS)
    }
    const gql = await timed(() => graphqlUnavailable(GROUPS))
    expect(gql.ms).toBeLessThan(FAULT_BOUND_MS)
    const direct = await timed(() => directFault('SELECT 1'))
    expect(direct.result).toBe('SERVICE_UNAVAILABLE')
    expect(direct.ms).toBeLessThan(FAULT_BOUND_MS)
  }, 30_000)

  it('recovers from the freeze without a restart', async () => {
    await proxy.heal()
    // Connections that were frozen are dropped by the proxy on heal; the pool replaces them.
    await answersEverything(key)
    const groups = await service.gql(GROUPS, {}, key)
    expect(groups.groups.nodes.map((g: { name: string }) => g.name)).toEqual(['Before the fault'])
    // The add-contacts refused during both faults wrote nothing; the pool's connections work again.
    expect(await owner.db.contact.count()).toBe(0)
    const added = await service.rest('POST', addContacts, { key, body: { contacts: [{ mobile: '+254700000003', first_name: 'After' }] } })
    expect([added.status, added.body]).toEqual([200, { status: 'successful' }])
    expect(await owner.db.contact.count()).toBe(1)
  })

  it('never calls a constraint violation or a programming error a fault', async () => {
    const other = await service.gql('mutation { createGroup(input: { name: "Other" }) { group { id } } }', {}, key)
    const rename = await service.rest('PATCH', `/api/contact/group/${other.createGroup.group.id}/update`, {
      key,
      body: { name: 'Before the fault' },
    })
    expect([rename.status, rename.body.code]).toEqual([409, 'CONFLICT'])
    const errors = await Promise.all([
      service.db.$queryRawUnsafe('SELEC 1').catch((e: unknown) => e),
      service.db.$executeRawUnsafe(`INSERT INTO "Account" (id, name) SELECT id, name FROM "Account" LIMIT 1`).catch((e: unknown) => e),
      service.db.account.create({ data: { id: (await service.db.account.findFirstOrThrow()).id, name: 'x' } }).catch((e: unknown) => e),
      service.db.$queryRawUnsafe('SELECT * FROM no_such_table').catch((e: unknown) => e),
    ])
    for (const error of errors) {
      expect(error).toBeInstanceOf(Error)
      expect(databaseFault(error)).toBeNull()
    }
  })
})

describe('SQLite locked by another process beyond the busy timeout', () => {
  const kit = useKit(sqlite, { env: { SQLITE_BUSY_TIMEOUT_MS: '200' } })
  let key: string
  let addContacts: string
  beforeAll(async () => {
    const seeded = await kit.seed().account().group()
    key = seeded.key
    addContacts = `/api/contact/group/${seeded.group.id}/add-contacts`
  })

  it('answers writes 503 with Retry-After while reads go on, and writes again once the lock is gone', async () => {
    const other = new BetterSqlite(kit.url.replace(/^file:/, ''))
    try {
      other.exec('BEGIN IMMEDIATE')
      const write = await timed(() => kit.rest('POST', '/api/contact/group/create', { key, body: { name: 'Locked' } }))
      expectUnavailable(write.result, 'messaging')
      expect(write.ms).toBeLessThan(FAULT_BOUND_MS)
      const gql = await kit.graphql(graphql('mutation { createGroup(input: { name: "Locked" }) { group { id } } }'), {}, key)
      expect(gql.errors).toEqual([expect.objectContaining({ extensions: { code: 'SERVICE_UNAVAILABLE' } })])
      const direct = await kit.deps
        .directTransaction((run) =>
          run({ sql: `INSERT INTO "ListTotal" ("listId", "total") VALUES ('locked', 0) RETURNING "listId"`, text: '', values: [] }),
        )
        .catch((error: unknown) => error)
      expect(databaseFault(direct)).not.toBeNull()
      // The contact writes' statements run on the connection directly (Database.directTransaction): the same 503.
      const add = await timed(() =>
        kit.rest('POST', addContacts, { key, body: { contacts: [{ mobile: '+254700000004', first_name: 'Locked' }] } }),
      )
      expectUnavailable(add.result, 'messaging')
      expect(add.ms).toBeLessThan(FAULT_BOUND_MS)
      // WAL: readers are not blocked by the writer.
      expect((await kit.rest('GET', '/api/contact/groups', { key })).status).toBe(200)
    } finally {
      other.exec('ROLLBACK')
      other.close()
    }
    expect(await kit.db.contact.count()).toBe(0)
    const after = await kit.rest('POST', '/api/contact/group/create', { key, body: { name: 'Locked' } })
    expect(after.status).toBe(200)
    expect((await kit.rest('GET', '/api/contact/groups', { key })).body.data.map((g: { name: string }) => g.name)).toContain('Locked')
    expect(
      (await kit.rest('POST', addContacts, { key, body: { contacts: [{ mobile: '+254700000004', first_name: 'After' }] } })).status,
    ).toBe(200)
    expect(await kit.db.contact.count()).toBe(1)
  })
})

describe('timeout configuration', () => {
  it('has documented defaults and refuses values that would turn a bound off', () => {
    expect(parseEnv({})).toMatchObject({
      DB_CONNECT_TIMEOUT_MS: 5000,
      DB_STATEMENT_TIMEOUT_MS: 10_000,
      DB_IDLE_TIMEOUT_MS: 10_000,
      DB_TRANSACTION_TIMEOUT_MS: 15_000,
      SQLITE_BUSY_TIMEOUT_MS: 2000,
      SHUTDOWN_GRACE_MS: 10_000,
      HTTP_HEADERS_TIMEOUT_MS: 15_000,
      HTTP_REQUEST_TIMEOUT_MS: 120_000,
      HTTP_KEEP_ALIVE_TIMEOUT_MS: 65_000,
      HTTP_MAX_CONNECTIONS: 1024,
    })
    expect(() => parseEnv({ DB_STATEMENT_TIMEOUT_MS: '0', HTTP_HEADERS_TIMEOUT_MS: 'soon', SHUTDOWN_GRACE_MS: '-1' })).toThrow(
      /Invalid configuration:\n {2}DB_STATEMENT_TIMEOUT_MS: .*\n {2}SHUTDOWN_GRACE_MS: .*\n {2}HTTP_HEADERS_TIMEOUT_MS: /,
    )
  })
})
