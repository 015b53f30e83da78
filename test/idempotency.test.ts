import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { TestKit, fixedClock, useKit } from './kit/kit.js'
import { anyUuid } from './kit/matchers.js'
import { requestFingerprint } from '../src/idempotency/fingerprint.js'
import { withIdempotencyKey } from '../src/idempotency/with-idempotency-key.js'
import { purgeExpiredIdempotencyRecords } from '../src/idempotency/purge-expired.js'
import { RETENTION_MS, isKeptAnswer } from '../src/idempotency/policy.js'
import type { SmsGateway } from '../src/sms/gateway.js'

const CREATE = '/api/contact/group/create'
const CREATE_GQL = 'mutation Create($input: CreateGroupInput!) { createGroup(input: $input) { created group { id: uuid name } } }'
const key = (name: string) => ({ 'idempotency-key': name })
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe.each(targets)('Idempotency-Key on $name', (target) => {
  const kit = useKit(target)
  const records = (accountId: string) => kit.db.idempotencyRecord.count({ where: { accountId } })
  const groups = (accountId: string) => kit.db.group.count({ where: { accountId } })

  it('replays a REST create: the same answer and reference, Idempotency-Replayed: true, one group', async () => {
    const s = await kit.seed().account()
    const first = await kit.rest('POST', CREATE, { key: s.key, body: { name: 'Customers' }, headers: key('create-1') })
    expect(first).toMatchObject({ status: 200, body: { reference: anyUuid(), new: true, message: 'Group Created' } })
    expect(first.headers.get('idempotency-replayed')).toBeNull()

    const again = await kit.rest('POST', CREATE, { key: s.key, body: { name: 'Customers' }, headers: key('create-1') })
    expect(again.status).toBe(200)
    // Without the key the second create would answer new: false, "Group Exists".
    expect(again.body).toEqual(first.body)
    expect(again.headers.get('idempotency-replayed')).toBe('true')
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'))
    expect(again.headers.get('x-request-id')).toBeTruthy()
    expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'))
    expect(await groups(s.account.id)).toBe(1)
    expect(await records(s.account.id)).toBe(1)
  })

  it('leaves the public channel API alone: a POST there keeps its own 405 {error}, and no record is made', async () => {
    const s = await kit.seed().account()
    for (let i = 0; i < 2; i++) {
      const res = await kit.rest('POST', '/api/programs/any-program/episodes', { key: s.key, body: { a: i }, headers: key('channel-1') })
      expect(res.status).toBe(405)
      expect(res.body).toEqual({ error: expect.any(String) })
      expect(res.headers.get('idempotency-replayed')).toBeNull()
    }
    expect(await records(s.account.id)).toBe(0)
  })

  it('replays a GraphQL mutation, and leaves queries alone', async () => {
    const s = await kit.seed().account()
    const body = { query: CREATE_GQL, variables: { input: { name: 'Alerts' } }, operationName: 'Create' }
    const first = await kit.rest('POST', '/graphql', { key: s.key, body, headers: key('gql-1') })
    expect(first.body).toEqual({ data: { createGroup: { created: true, group: { id: anyUuid(), name: 'Alerts' } } } })
    const again = await kit.rest('POST', '/graphql', { key: s.key, body, headers: key('gql-1') })
    expect(again.status).toBe(200)
    expect(again.body).toEqual(first.body)
    expect(again.headers.get('idempotency-replayed')).toBe('true')
    expect(await groups(s.account.id)).toBe(1)

    // A query with the header runs as usual and keeps nothing.
    const query = await kit.rest('POST', '/graphql', {
      key: s.key,
      body: { query: '{ groups { nodes { id: uuid } } }' },
      headers: key('gql-query'),
    })
    expect(query.body).toEqual({ data: { groups: { nodes: [{ id: first.body.data.createGroup.group.id }] } } })
    expect(query.headers.get('idempotency-replayed')).toBeNull()
    expect(await records(s.account.id)).toBe(1)

    // A document with a query and a mutation: operationName picks the mutation.
    const both = { ...body, query: `query Read { groups { nodes { id } } } ${CREATE_GQL}`, variables: { input: { name: 'Other' } } }
    await kit.rest('POST', '/graphql', { key: s.key, body: both, headers: key('gql-2') })
    const bothAgain = await kit.rest('POST', '/graphql', { key: s.key, body: both, headers: key('gql-2') })
    expect(bothAgain.headers.get('idempotency-replayed')).toBe('true')
    expect(await records(s.account.id)).toBe(2)
  })

  it('refuses a key reused with another body or path: 422 IDEMPOTENCY_KEY_REUSED, nothing written', async () => {
    const s = await kit.seed().account()
    await kit.rest('POST', CREATE, { key: s.key, body: { name: 'First' }, headers: key('reuse') })
    const other = await kit.rest('POST', CREATE, { key: s.key, body: { name: 'Second' }, headers: key('reuse') })
    expect(other.status).toBe(422)
    expect(other.body).toEqual({ error: 'This Idempotency-Key was already used with a different request', code: 'IDEMPOTENCY_KEY_REUSED' })
    const otherPath = await kit.rest('POST', '/api/contact/save', { key: s.key, body: { name: 'First' }, headers: key('reuse') })
    expect(otherPath.body.code).toBe('IDEMPOTENCY_KEY_REUSED')

    const gql = await kit.rest('POST', '/graphql', {
      key: s.key,
      body: { query: CREATE_GQL, variables: { input: { name: 'Third' } } },
      headers: key('reuse'),
    })
    expect(gql.status).toBe(422)
    expect(gql.body).toEqual({
      errors: [
        { message: 'This Idempotency-Key was already used with a different request', extensions: { code: 'IDEMPOTENCY_KEY_REUSED' } },
      ],
    })
    expect(await kit.db.group.findMany({ where: { accountId: s.account.id }, select: { name: true } })).toEqual([{ name: 'First' }])
    expect(await kit.db.contact.count({ where: { accountId: s.account.id } })).toBe(0)
  })

  it('decides a race between two instances on one database', async () => {
    const other = await new TestKit(target).attach(kit.url)
    try {
      const s = await kit.seed().account()
      const body = { contacts: Array.from({ length: 50 }, (_, i) => ({ first_name: `P${i}`, mobile: `+2547${String(30_000_000 + i)}` })) }
      const g = await kit.rest('POST', CREATE, { key: s.key, body: { name: 'Two' } })
      const path = `/api/contact/group/${g.body.reference}/add-contacts`
      const answers = await Promise.all([kit, other].map((k) => k.rest('POST', path, { key: s.key, body, headers: key('two-instances') })))
      // Exactly one runs. The other finds it running (409) or, when the first has already
      // finished by the time it claims the key, replays its answer.
      const outcome = answers
        .map((a) => (a.status === 200 && a.headers.get('idempotency-replayed') === 'true' ? 'replayed' : String(a.status)))
        .sort()
      expect([
        ['200', '409'],
        ['200', 'replayed'],
      ]).toContainEqual(outcome)
      expect(await kit.db.contact.count({ where: { accountId: s.account.id } })).toBe(50)
      expect(await records(s.account.id)).toBe(1)
    } finally {
      await other.detach()
    }
  })

  it('refuses a key whose request is still running (409) and takes over one whose lease passed', async () => {
    const s = await kit.seed().account()
    const body = { name: 'Crashed' }
    const fingerprint = requestFingerprint('POST', CREATE, Buffer.from(JSON.stringify(body)))
    const now = Date.now()
    // What a request leaves behind while it runs, or when its process dies mid-way.
    const running = (key: string, leaseUntil: number) => ({
      accountId: s.account.id,
      key,
      fingerprint,
      state: 'running',
      leaseUntil: new Date(leaseUntil),
      createdAt: new Date(now - 1000),
      expiresAt: new Date(now + RETENTION_MS),
    })
    await kit.db.idempotencyRecord.createMany({ data: [running('live', now + 60_000), running('dead', now - 1)] })

    const live = await kit.rest('POST', CREATE, { key: s.key, body, headers: key('live') })
    expect(live.status).toBe(409)
    expect(live.body.code).toBe('CONFLICT')
    expect(await groups(s.account.id)).toBe(0)

    const dead = await kit.rest('POST', CREATE, { key: s.key, body, headers: key('dead') })
    expect(dead).toMatchObject({ status: 200, body: { new: true, message: 'Group Created' } })
    const record = await kit.db.idempotencyRecord.findUniqueOrThrow({ where: { accountId_key: { accountId: s.account.id, key: 'dead' } } })
    expect(record).toMatchObject({ state: 'done', status: 200, body: JSON.stringify(dead.body) })
    // A different request under a dead key is still a reuse: the key was spent on another request.
    const reused = await kit.rest('POST', CREATE, { key: s.key, body: { name: 'Else' }, headers: key('live') })
    expect(reused.body.code).toBe('IDEMPOTENCY_KEY_REUSED')
  })

  it('scopes keys per account', async () => {
    const a = await kit.seed().account('A')
    const b = await kit.seed().account('B')
    const ra = await kit.rest('POST', CREATE, { key: a.key, body: { name: 'Same' }, headers: key('shared') })
    const rb = await kit.rest('POST', CREATE, { key: b.key, body: { name: 'Same' }, headers: key('shared') })
    expect(rb.headers.get('idempotency-replayed')).toBeNull()
    expect(rb.body).toMatchObject({ new: true })
    expect(rb.body.reference).not.toBe(ra.body.reference)
    // Account B may even use the key for another request.
    const other = await kit.rest('POST', CREATE, { key: b.key, body: { name: 'Different' }, headers: key('shared-2') })
    const otherA = await kit.rest('POST', CREATE, { key: a.key, body: { name: 'Also different' }, headers: key('shared-2') })
    expect([other.status, otherA.status]).toEqual([200, 200])
    expect([await groups(a.account.id), await groups(b.account.id)]).toEqual([2, 2])
  })

  it('refuses a badly formed key with 400 BAD_REQUEST and writes nothing', async () => {
    const s = await kit.seed().account()
    const bad = ['', 'k'.repeat(256), 'caf\u00e9', 'tab\there', 'del\x7f']
    for (const value of bad) {
      const res = await kit.rest('POST', CREATE, { key: s.key, body: { name: 'Bad' }, headers: key(value) })
      expect(res.status, JSON.stringify(value)).toBe(400)
      expect(res.body).toEqual({ error: 'The Idempotency-Key header must be 1 to 255 printable ASCII characters', code: 'BAD_REQUEST' })
    }
    const gql = await kit.rest('POST', '/graphql', {
      key: s.key,
      body: { query: CREATE_GQL, variables: { input: { name: 'Bad' } } },
      headers: key(''),
    })
    expect(gql.status).toBe(400)
    expect(gql.body.errors[0].extensions).toEqual({ code: 'BAD_REQUEST' })
    expect(await groups(s.account.id)).toBe(0)
    expect(await records(s.account.id)).toBe(0)
    // The edges of the form are accepted: 255 characters, spaces and symbols inside.
    for (const value of ['k'.repeat(255), 'a b~!"#{}']) {
      expect((await kit.rest('POST', CREATE, { key: s.key, body: { name: value.slice(0, 20) }, headers: key(value) })).status).toBe(200)
    }
  })

  it('changes nothing for requests without the header, or without a valid key', async () => {
    const s = await kit.seed().account()
    const first = await kit.rest('POST', CREATE, { key: s.key, body: { name: 'Plain' } })
    const second = await kit.rest('POST', CREATE, { key: s.key, body: { name: 'Plain' } })
    expect(second.body).toEqual({ reference: first.body.reference, new: false, message: 'Group Exists' })
    expect(second.headers.get('idempotency-replayed')).toBeNull()
    expect(await records(s.account.id)).toBe(0)

    // Unauthenticated: the usual 401, even with a badly formed key, and no record.
    const before = await kit.db.idempotencyRecord.count()
    for (const auth of [undefined, 'gk_000000000000_' + 'x'.repeat(43)]) {
      const res = await kit.rest('POST', CREATE, { key: auth, body: { name: 'Nobody' }, headers: key('') })
      expect(res.status).toBe(401)
      expect(res.body.code).toBe('UNAUTHENTICATED')
    }
    expect(await kit.db.idempotencyRecord.count()).toBe(before)
  })

  it('keeps a failed answer (422) and replays it', async () => {
    const s = await kit.seed().account()
    const first = await kit.rest('POST', CREATE, { key: s.key, body: { description: 'no name' }, headers: key('failed') })
    expect(first.status).toBe(422)
    const again = await kit.rest('POST', CREATE, { key: s.key, body: { description: 'no name' }, headers: key('failed') })
    expect(again).toMatchObject({ status: 422, body: first.body })
    expect(again.headers.get('idempotency-replayed')).toBe('true')
    expect(await groups(s.account.id)).toBe(0)
  })

  it('does not keep server faults: a 5xx, or a GraphQL INTERNAL error, lets the retry run', async () => {
    const s = await kit.seed().account()
    let runs = 0
    const call = (answer: () => Response) =>
      withIdempotencyKey(
        kit.deps,
        {
          request: new Request(`http://localhost${CREATE}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json', 'idempotency-key': 'fault' },
            body: '{"name":"Flaky"}',
          }),
          url: new URL(`http://localhost${CREATE}`),
          requestId: 'test',
        },
        {},
        async (request) => {
          expect(await request.text()).toBe('{"name":"Flaky"}')
          runs++
          return answer()
        },
      )
    expect((await call(() => new Response('{"code":"SERVICE_UNAVAILABLE"}', { status: 503 }))).status).toBe(503)
    expect(await records(s.account.id)).toBe(0)
    expect((await call(() => Response.json({ ok: true }))).status).toBe(200)
    const replayed = await call(() => new Response('unreachable', { status: 500 }))
    expect(await replayed.json()).toEqual({ ok: true })
    expect(runs).toBe(2)

    // GraphQL answers 200 when the database fails; the error code marks the fault.
    expect(
      isKeptAnswer(200, JSON.stringify({ errors: [{ message: 'Unexpected error.', extensions: { code: 'INTERNAL' } }] }), 'graphql'),
    ).toBe(false)
    expect(isKeptAnswer(200, JSON.stringify({ errors: [{ message: 'x', extensions: { code: 'VALIDATION_FAILED' } }] }), 'graphql')).toBe(
      true,
    )
  })

  it('renews the lease of a slow request, so it is not taken over as crashed', async () => {
    const s = await kit.seed().account()
    let runs = 0
    const call = (wait: number) =>
      withIdempotencyKey(
        kit.deps,
        {
          request: new Request(`http://localhost${CREATE}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json', 'idempotency-key': 'slow' },
            body: '{}',
          }),
          url: new URL(`http://localhost${CREATE}`),
          requestId: 'test',
        },
        // A lease far shorter than the request: only renewals keep it.
        { leaseMs: 600 },
        async () => {
          runs++
          await sleep(wait)
          return Response.json({ ran: runs })
        },
      )
    const slow = call(2500)
    await sleep(1600)
    const duplicate = await call(0)
    expect(duplicate.status).toBe(409)
    expect((await slow).status).toBe(200)
    expect(runs).toBe(1)
  })
})

describe.each(targets)('Idempotency-Key expiry and limits on $name', (target) => {
  const clock = fixedClock('2026-03-01T10:00:00Z')
  const kit = useKit(target, { clock, env: { BODY_LIMIT_BYTES: '2000' } })

  it('forgets a key after 24 h: the same request runs again, another request is no reuse', async () => {
    const s = await kit.seed().account()
    const first = await kit.rest('POST', CREATE, { key: s.key, body: { name: 'Daily' }, headers: key('daily') })
    clock.advance(RETENTION_MS - 1)
    expect(
      (await kit.rest('POST', CREATE, { key: s.key, body: { name: 'Daily' }, headers: key('daily') })).headers.get('idempotency-replayed'),
    ).toBe('true')
    clock.advance(1)
    const later = await kit.rest('POST', CREATE, { key: s.key, body: { name: 'Daily' }, headers: key('daily') })
    expect(later.headers.get('idempotency-replayed')).toBeNull()
    expect(later.body).toEqual({ reference: first.body.reference, new: false, message: 'Group Exists' })
    clock.advance(RETENTION_MS)
    const other = await kit.rest('POST', CREATE, { key: s.key, body: { name: 'Nightly' }, headers: key('daily') })
    expect(other.body).toMatchObject({ new: true, message: 'Group Created' })
    expect(await kit.db.group.count({ where: { accountId: s.account.id } })).toBe(2)
    expect(await kit.db.idempotencyRecord.count({ where: { accountId: s.account.id } })).toBe(1)
  })

  it('purges expired records only, at most once per interval', async () => {
    const s = await kit.seed().account()
    await kit.rest('POST', CREATE, { key: s.key, body: { name: 'Old' }, headers: key('old') })
    clock.advance(RETENTION_MS / 2)
    await kit.rest('POST', CREATE, { key: s.key, body: { name: 'New' }, headers: key('new') })
    clock.advance(RETENTION_MS / 2)
    expect(await purgeExpiredIdempotencyRecords(kit.deps, { minIntervalMs: 0 })).toBeGreaterThanOrEqual(1)
    const left = await kit.db.idempotencyRecord.findMany({ where: { accountId: s.account.id }, select: { key: true } })
    expect(left).toEqual([{ key: 'new' }])
    clock.advance(RETENTION_MS)
    // Within the interval of the last purge: nothing is done.
    expect(await purgeExpiredIdempotencyRecords(kit.deps, { minIntervalMs: RETENTION_MS * 2 })).toBe(0)
    expect(await purgeExpiredIdempotencyRecords(kit.deps, { minIntervalMs: 0 })).toBe(1)
  })

  it('refuses a body over BODY_LIMIT_BYTES with 413 and keeps nothing', async () => {
    const s = await kit.seed().account()
    const res = await kit.rest('POST', CREATE, { key: s.key, body: { name: 'x', description: 'd'.repeat(3000) }, headers: key('big') })
    expect(res.status).toBe(413)
    expect(res.body.code).toBe('PAYLOAD_TOO_LARGE')
    expect(await kit.db.idempotencyRecord.count({ where: { accountId: s.account.id } })).toBe(0)
    expect(await kit.db.group.count({ where: { accountId: s.account.id } })).toBe(0)
  })
})

describe.each(targets)('Idempotency-Key while the first request still runs, on $name', (target) => {
  // A gateway that holds each submit until the test lets it go: the first sendSms is in flight,
  // holding its key, for as long as the test needs; no timing decides the race.
  let release: () => void = () => undefined
  const gateway: SmsGateway = {
    name: 'held',
    sandbox: true,
    submit: (message) => new Promise((resolve) => (release = () => resolve({ gatewayMessageId: `held-${message.id}` }))),
  }
  const kit = useKit(target, { gateway })
  const SEND = 'mutation($input: SendSmsInput!) { sendSms(input: $input) { id: uuid status } }'

  it('runs one of two identical requests; the twin sent while the first runs gets 409 CONFLICT, a later retry the first answer', async () => {
    const s = await kit.seed().account()
    await kit.db.account.update({ where: { id: s.account.id }, data: { creditBalance: 1_000_000n } })
    const send = () =>
      kit.rest('POST', '/graphql', {
        key: s.key,
        body: { query: SEND, variables: { input: { to: '+254712345678', message: 'once' } } },
        headers: key('held'),
      })
    const first = send()
    await expect.poll(() => kit.db.message.count({ where: { accountId: s.account.id } })).toBe(1)
    const twin = await send()
    expect(twin.status).toBe(409)
    expect(twin.body).toEqual({
      errors: [{ message: 'A request with this Idempotency-Key is still being processed; retry later', extensions: { code: 'CONFLICT' } }],
    })
    release()
    const answer = await first
    expect(answer.status).toBe(200)
    const retry = await send()
    expect(retry.headers.get('idempotency-replayed')).toBe('true')
    expect(retry.body).toEqual(answer.body)
    expect(await kit.db.message.count({ where: { accountId: s.account.id } })).toBe(1)
  })
})
