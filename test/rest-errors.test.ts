import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { revokeApiKey, createApiKey } from '../src/auth/api-keys.js'
import { graphql } from '../src/graphql/typed-documents.js'

describe.each(targets)('REST errors and isolation on $name', (target) => {
  const kit = useKit(target, { env: { BODY_LIMIT_BYTES: '2048' } })

  it('answers 401 with WWW-Authenticate for a missing, malformed, unknown or revoked key', async () => {
    const s = await kit.seed().account()
    const extra = await createApiKey(kit.deps, s.account.id)
    await revokeApiKey(kit.deps, extra.prefix)
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Basic dXNlcjpwYXNz' },
      { authorization: 'Bearer' },
      { authorization: 'Bearer gk_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
      { authorization: `Bearer ${s.key.slice(0, -1)}x` },
      { authorization: `Bearer ${extra.apiKey}` },
    ]
    for (const headers of attempts) {
      const res = await kit.rest('GET', '/api/contacts', { headers })
      expect(res.status, JSON.stringify(headers)).toBe(401)
      expect(res.headers.get('www-authenticate')).toBe('Bearer')
      expect(res.body).toEqual({ error: 'A valid API key is required', code: 'UNAUTHENTICATED' })
    }
    expect((await kit.rest('GET', '/api/contacts', { key: s.key })).status).toBe(200)
  })

  it('answers unknown paths 404 and wrong methods 405 with Allow, in the error shape', async () => {
    const { key } = await kit.seed().account()
    const missing = await kit.rest('GET', '/api/nope', { key })
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual({ error: 'No route for /nope', code: 'NOT_FOUND' })
    const outside = await kit.rest('GET', '/elsewhere', { key })
    expect(outside.status).toBe(404)
    const wrong = await kit.rest('POST', '/api/contacts', { key, body: {} })
    expect(wrong.status).toBe(405)
    expect(wrong.headers.get('allow')).toBe('GET')
    expect(wrong.body).toEqual({ error: 'POST is not allowed on /contacts', code: 'METHOD_NOT_ALLOWED' })
    const group = await kit.rest('PUT', '/api/contact/group/abc', { key, body: {} })
    expect(group.headers.get('allow')).toBe('GET, DELETE')
  })

  it('answers 404 for an unknown reference', async () => {
    const { key } = await kit.seed().account()
    for (const [method, path] of [
      ['GET', '/api/contact/group/00000000-0000-4000-8000-000000000000'],
      ['GET', '/api/contact/group/not-a-uuid/contacts'],
      ['GET', '/api/contact/00000000-0000-4000-8000-000000000000'],
      ['GET', '/api/contact/00000000-0000-4000-8000-000000000000/groups'],
    ] as const) {
      const res = await kit.rest(method, path, { key })
      expect(res.status, path).toBe(404)
      expect(res.body.code).toBe('NOT_FOUND')
    }
  })

  it('answers 415, 400 and 413 for bodies that are not JSON objects within the limit', async () => {
    const { key, account } = await kit.seed().account()
    const path = '/api/contact/group/create'
    const text = await kit.rest('POST', path, { key, rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(text).toMatchObject({ status: 415, body: { code: 'UNSUPPORTED_MEDIA_TYPE' } })
    const broken = await kit.rest('POST', path, { key, rawBody: '{"name":', headers: { 'content-type': 'application/json' } })
    expect(broken).toMatchObject({ status: 400, body: { error: 'The body is not valid JSON', code: 'BAD_REQUEST' } })
    const array = await kit.rest('POST', path, { key, body: [{ name: 'x' }] })
    expect(array).toMatchObject({ status: 400, body: { error: 'The request body must be a JSON object', code: 'BAD_REQUEST' } })
    const big = await kit.rest('POST', path, { key, body: { name: 'x', description: 'd'.repeat(3000) } })
    expect(big).toMatchObject({ status: 413, body: { code: 'PAYLOAD_TOO_LARGE' } })
    expect(await kit.db.group.count({ where: { accountId: account.id } })).toBe(0)
  })

  it('gives every response an X-Request-Id, echoing a sane incoming one', async () => {
    const { key } = await kit.seed().account()
    const own = await kit.rest('GET', '/api/contacts', { key })
    expect(own.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    const echoed = await kit.rest('GET', '/api/contacts', { key, headers: { 'x-request-id': 'trace-123' } })
    expect(echoed.headers.get('x-request-id')).toBe('trace-123')
  })

  it('keeps accounts apart: another account gets 404 for every reference and empty lists', async () => {
    const owner = await kit.seed().account('Owner').group({ name: 'Private' }).contacts(2)
    const other = await kit.seed().account('Other')
    const g = owner.group.id
    const c = owner.contacts[0]!
    const requests: [string, string, unknown?][] = [
      ['GET', `/api/contact/group/${g}`],
      ['PATCH', `/api/contact/group/${g}/update`, { description: 'hijacked' }],
      ['POST', `/api/contact/group/${g}/add-contacts`, { contacts: [{ first_name: 'X', mobile: '0712999999' }] }],
      ['GET', `/api/contact/group/${g}/contacts`],
      ['DELETE', `/api/contact/group/${g}/delist-contacts`, { contacts: [c.mobile] }],
      ['DELETE', `/api/contact/group/${g}`],
      ['GET', `/api/contact/${c.id}`],
      ['GET', `/api/contact/${c.id}/groups`],
      ['DELETE', `/api/contact/${c.id}`],
    ]
    for (const [method, path, body] of requests) {
      const res = await kit.rest(method, path, { key: other.key, body })
      expect(res.status, `${method} ${path}`).toBe(404)
      expect(res.body.code).toBe('NOT_FOUND')
    }
    const enlist = await kit.rest('POST', '/api/contact/save', {
      key: other.key,
      body: { first_name: 'X', mobile: '0712999998', groups: [g] },
    })
    expect(enlist.status).toBe(422)
    expect((await kit.rest('GET', '/api/contacts', { key: other.key })).body.meta.total).toBe(0)
    expect((await kit.rest('GET', '/api/contact/groups', { key: other.key })).body.meta.total).toBe(0)
    // The same name is free in another account.
    const same = await kit.rest('POST', '/api/contact/group/create', { key: other.key, body: { name: 'Private' } })
    expect(same.body.new).toBe(true)
    // And nothing of the owner's changed.
    const mine = await kit.rest('GET', `/api/contact/group/${g}/contacts`, { key: owner.key })
    expect(mine.body.meta.total).toBe(2)
    expect((await kit.rest('GET', `/api/contact/group/${g}`, { key: owner.key })).body.group.description).toBe('')
  })
})

describe.each(targets)('REST rate limit on $name', (target) => {
  const kit = useKit(target, { env: { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '3' } })

  it('answers 429 with Retry-After once a key spends its burst', async () => {
    const { key } = await kit.seed().account()
    const statuses = []
    for (let i = 0; i < 5; i++) statuses.push((await kit.rest('GET', '/api/contacts', { key })).status)
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200])
    const limited = await kit.rest('GET', '/api/contacts', { key })
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(limited.body).toEqual({ error: 'Too many requests for this API key', code: 'RATE_LIMITED' })
  })
})

describe.each(targets)('unexpected failures on $name', (target) => {
  const kit = useKit(target)

  it('answer 500 INTERNAL with a generic message and the request id, in REST and GraphQL', async () => {
    const { key } = await kit.seed().account()
    // Break the database under the service: the contacts table is gone.
    await kit.db.$executeRawUnsafe('DROP TABLE "Membership"')
    await kit.db.$executeRawUnsafe('DROP TABLE "SubscriptionEvent"')
    await kit.db.$executeRawUnsafe('DROP TABLE "Contact"')
    const res = await kit.rest('GET', '/api/contacts', { key })
    expect(res.status).toBe(500)
    const requestId = res.headers.get('x-request-id')
    expect(res.body).toEqual({ error: `Internal server error (request id ${requestId})`, code: 'INTERNAL' })
    const gql = await kit.graphql(graphql('{ contacts { pageInfo { total } } }'), {}, key)
    expect(gql.errors?.[0]).toMatchObject({ message: 'Unexpected error.', extensions: { code: 'INTERNAL' } })
    expect(JSON.stringify(gql)).not.toMatch(/no such table|does not exist|prisma/i)
  })
})
