// The cases of a penetration test that answered 500: each one now gets a 4xx in the contract's
// shape and writes nothing (the database fingerprint is the same before and after).
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { schemaClient, targets } from './kit/databases.js'
import { useKit, type TestKit } from './kit/kit.js'
import { fingerprint } from './kit/fingerprint.js'
import { mobile } from './kit/seed.js'
import { graphql } from '../src/graphql/typed-documents.js'

const SAMPLE = readFileSync(new URL('../docs/channel-sample.json', import.meta.url), 'utf8')
const SAMPLE_UUID = '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f'

/** Runs `fn` and checks that the stored data did not change. */
async function unchanged<T>(kit: TestKit, fn: () => Promise<T>): Promise<T> {
  const before = await fingerprint(kit)
  const result = await fn()
  expect(await fingerprint(kit)).toEqual(before)
  return result
}

const json = { 'content-type': 'application/json' }

describe.each(targets)('hostile input on $name', (target) => {
  const kit = useKit(target, { env: { CHANNEL_CACHE_MS: '0' } })

  it('answers malformed percent-encoding and NUL in a path 404 in the API’s error shape', async () => {
    const { key, group } = await kit.seed().account().group()
    await unchanged(kit, async () => {
      for (const [method, path] of [
        ['GET', '/api/contact/%E0%A4%A'],
        ['GET', '/api/contact/%ZZ/groups'],
        ['DELETE', '/api/contact/%00'],
        ['DELETE', '/api/contact/group/%C3%28'],
        ['GET', '/api/contact/group/%ED%A0%80/contacts'],
        ['GET', '/api/sms/delivery-report/%FF'],
        ['GET', `/api/contact/group/${group.id}%00`],
      ] as const) {
        const res = await kit.rest(method, path, { key })
        expect(res.status, path).toBe(404)
        expect(res.body).toEqual({ error: expect.any(String), code: 'NOT_FOUND' })
      }
      const patch = await kit.rest('PATCH', '/api/contact/group/%E0%A4%A/update', { key, body: { name: 'x' } })
      expect(patch.body.code).toBe('NOT_FOUND')
      // The key is still checked first.
      expect((await kit.rest('GET', '/api/contact/%E0%A4%A')).status).toBe(401)
      for (const path of [
        '/api/channels/%E0%A4%A/status',
        '/api/channels/%/programs',
        '/api/programs/%00/episodes',
        '/api/channels/city%ZZ/programs/next/3',
      ]) {
        const res = await kit.rest('GET', path)
        expect(res.status, path).toBe(404)
        expect(res.body).toEqual({ error: expect.any(String) })
      }
    })
  })

  it('refuses page and perPage beyond 1,000,000 with a 422 naming them, in REST and GraphQL', async () => {
    const { key, group } = await kit.seed().account().group().contacts(2)
    for (const path of ['/api/contacts', '/api/contact/groups', `/api/contact/group/${group.id}/contacts`]) {
      for (const [query, field] of [
        ['page=2147483648', 'page'],
        ['page=2147483647', 'page'],
        ['page=1000001', 'page'],
        ['perPage=99999999999999999999', 'perPage'],
        ['perPage=1000001', 'perPage'],
        ['page=-99999999999', 'page'],
      ] as const) {
        const res = await kit.rest('GET', `${path}?${query}`, { key })
        expect(res.status, `${path}?${query}`).toBe(422)
        expect(res.body).toEqual({
          error: expect.any(String),
          code: 'VALIDATION_FAILED',
          details: [{ field, message: expect.stringContaining(field) }],
        })
      }
      // Non-numeric stays as documented: a 422 naming it.
      expect((await kit.rest('GET', `${path}?page=abc`, { key })).body.details).toEqual([
        { field: 'page', message: 'page must be a whole number' },
      ])
    }
    const last = await kit.rest('GET', '/api/contacts?page=1000000&perPage=1000000', { key })
    expect(last.status).toBe(200)
    expect(last.body.meta).toMatchObject({ page: 1_000_000, perPage: 100, skipped: 99_999_900, total: 2 })

    for (const query of [
      '{ contacts(page: 2147483647) { pageInfo { skipped } } }',
      '{ groups(perPage: 1000001) { pageInfo { skipped } } }',
      `{ group(id: "${group.id}") { contacts(page: 1000001) { pageInfo { skipped } } } }`,
    ]) {
      const res = await kit.graphql(query, {}, key)
      expect(res.errors?.[0]?.extensions, query).toMatchObject({
        code: 'VALIDATION_FAILED',
        details: [{ field: expect.stringMatching(/^(page|perPage)$/) }],
      })
    }
  })

  it('looks body keys up by own property only: prototype names are unknown fields', async () => {
    const { key, account } = await kit.seed().account()
    const created = await kit.rest('POST', '/api/contact/group/create', {
      key,
      headers: json,
      rawBody: '{"name":"Proto","constructor":"x","toString":1,"__proto__":{"name":"evil"},"hasOwnProperty":null,"valueOf":[]}',
    })
    expect(created).toMatchObject({ status: 200, body: { new: true } })
    const group = await kit.db.group.findUniqueOrThrow({ where: { id: created.body.reference } })
    expect(group.name).toBe('Proto')

    const strict = await unchanged(kit, () =>
      kit.rest('PATCH', `/api/contact/group/${group.id}/update`, {
        key,
        headers: json,
        rawBody: '{"constructor":1,"__proto__":{"name":"evil"},"valueof":"x"}',
      }),
    )
    expect(strict.status).toBe(422)
    expect(strict.body.details.map((d: any) => d.field)).toEqual(['constructor', '__proto__', 'valueof'])

    const saved = await kit.rest('POST', '/api/contact/save', {
      key,
      headers: json,
      rawBody: '{"mobile":"0712000001","first_name":"Ann","__proto__":{"first_name":"Bob"},"constructor":{},"hasOwnProperty":"x"}',
    })
    expect(saved).toMatchObject({ status: 200, body: { new: true } })
    expect((await kit.db.contact.findUniqueOrThrow({ where: { id: saved.body.reference } })).firstName).toBe('Ann')

    // Required fields are not found through __proto__ either.
    const hidden = await unchanged(kit, () =>
      kit.rest('POST', '/api/contact/save', { key, headers: json, rawBody: '{"__proto__":{"mobile":"0712000002","first_name":"X"}}' }),
    )
    expect(hidden.status).toBe(422)
    expect(hidden.body.details.map((d: any) => d.field)).toEqual(['mobile', 'first_name'])

    const added = await kit.rest('POST', `/api/contact/group/${group.id}/add-contacts`, {
      key,
      headers: json,
      rawBody:
        '{"contacts":[{"mobile":"0712000003","first_name":"Cy","toString":"x","__proto__":null,"constructor":1}],"__proto__":{"contacts":[]}}',
    })
    expect(added).toMatchObject({ status: 200, body: { status: 'successful' } })
    const noList = await kit.rest('POST', `/api/contact/group/${group.id}/add-contacts`, {
      key,
      headers: json,
      rawBody: '{"__proto__":{"contacts":[{}]}}',
    })
    expect(noList.body).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'contacts' }] })
    expect(await kit.db.contact.count({ where: { accountId: account.id } })).toBe(2)
  })

  it('refuses lone surrogates and NUL in every text field with a 422 naming it, on both databases alike', async () => {
    const { key, group } = await kit.seed().account().group()
    await unchanged(kit, async () => {
      const rest: [string, string, string, string][] = [
        ['POST', '/api/contact/group/create', '{"name":"a\\ud800b"}', 'name'],
        ['POST', '/api/contact/group/create', '{"name":"ok","description":"x\\u0000y"}', 'description'],
        ['PATCH', `/api/contact/group/${group.id}/update`, '{"optin_code":"JOIN\\u0000"}', 'optin_code'],
        ['PATCH', `/api/contact/group/${group.id}/update`, '{"subscription_autoresponse":"\\udc00 hi"}', 'subscription_autoresponse'],
        ['POST', '/api/contact/save', '{"mobile":"0712000010","first_name":"\\udc00"}', 'first_name'],
        ['POST', '/api/contact/save', '{"mobile":"0712000011","first_name":"A","organization":"\\u0000"}', 'organization'],
        ['POST', '/api/contact/save', '{"mobile":"0712000012","first_name":"A","groups":["\\u0000"]}', 'groups[0]'],
        ['POST', '/api/contact/save', '{"mobile":"0712\\u0000000013","first_name":"A"}', 'mobile'],
        [
          'POST',
          `/api/contact/group/${group.id}/add-contacts`,
          '{"contacts":[{"mobile":"0712000014","first_name":"A","family_name":"\\ud83d"}]}',
          'contacts[0].family_name',
        ],
      ]
      for (const [method, path, rawBody, field] of rest) {
        const res = await kit.rest(method, path, { key, headers: json, rawBody })
        expect(res.status, rawBody).toBe(422)
        expect(res.body, rawBody).toEqual({
          error: expect.any(String),
          code: 'VALIDATION_FAILED',
          details: [{ field, message: expect.stringMatching(/NUL|surrogate/) }],
        })
      }
      for (const search of ['%00', '%ED%A0%80', 'a%00b']) {
        const res = await kit.rest('GET', `/api/contacts?search=${search}`, { key })
        expect(res.status, search).toBe(search === '%ED%A0%80' ? 200 : 422)
      }
      expect((await kit.rest('GET', '/api/contacts?search=%00', { key })).body.details).toEqual([
        { field: 'search', message: 'search must not contain NUL characters' },
      ])

      const graphql: [string, Record<string, unknown>, string][] = [
        ['mutation($n: String!) { createGroup(input: { name: $n }) { created } }', { n: 'a\u0000' }, 'name'],
        ['mutation($t: String!) { sendSms(input: { to: "0712000015", message: $t }) { id } }', { t: 'hi \ud800' }, 'message'],
        [
          'mutation($t: String!) { receiveSms(input: { to: "22384", from: "0712000016", text: $t }) { action } }',
          { t: 'JOIN\u0000' },
          'text',
        ],
        [
          'mutation($s: String!) { saveContact(input: { mobile: "0712000017", firstName: "A", twitter: $s }) { created } }',
          { s: '\udfff' },
          'twitter',
        ],
        ['query($s: String!) { contacts(search: $s) { pageInfo { total } } }', { s: '\u0000' }, 'search'],
        ['query($s: String!) { groups(search: $s) { pageInfo { total } } }', { s: 'x\ud800' }, 'search'],
      ]
      for (const [query, variables, field] of graphql) {
        const res = await kit.graphql(query, variables, key)
        expect(res.errors?.[0]?.extensions, query).toEqual({
          code: 'VALIDATION_FAILED',
          details: [{ field, message: expect.stringMatching(/NUL|surrogate/) }],
        })
      }
      // Ids no database could hold name nothing.
      for (const query of [
        '{ contact(id: "\\u0000") { id } }',
        '{ group(id: "a\\u0000") { id } }',
        'mutation { deleteGroup(id: "\\u0000") { deletedId } }',
      ]) {
        expect((await kit.graphql(query, {}, key)).errors?.[0]?.extensions?.code, query).toBe('NOT_FOUND')
      }
      const doc = JSON.parse(SAMPLE)
      doc.channel.name = 'City\u0000TV'
      doc.videos[1].description = 'broken \ud800'
      const imported = await kit.graphql('mutation($d: String!) { importChannel(document: $d) { id } }', { d: JSON.stringify(doc) }, key)
      expect(imported.errors?.[0]?.extensions).toEqual({
        code: 'VALIDATION_FAILED',
        details: [
          { field: 'channel.name', message: 'channel.name must not contain NUL characters' },
          { field: 'videos.1.description', message: 'videos.1.description must not contain unpaired UTF-16 surrogates' },
        ],
      })
    })
    // A surrogate pair (an emoji) is text like any other.
    const emoji = await kit.rest('POST', '/api/contact/save', { key, body: { mobile: '0712000018', first_name: 'Smile \ud83d\ude00' } })
    expect(emoji.status).toBe(200)
    expect((await kit.db.contact.findUniqueOrThrow({ where: { id: emoji.body.reference } })).firstName).toBe('Smile 😀')
  })

  it('keeps search to 200 characters, REST and GraphQL', async () => {
    const { key } = await kit.seed().account().group()
    const long = 'a'.repeat(60_000)
    const res = await kit.rest('GET', `/api/contact/groups?search=${long}`, { key })
    expect(res).toMatchObject({
      status: 422,
      body: { code: 'VALIDATION_FAILED', details: [{ field: 'search', message: 'search must be at most 200 characters' }] },
    })
    expect((await kit.rest('GET', `/api/contacts?search=${'%25'.repeat(201)}`, { key })).status).toBe(422)
    const gql = await kit.graphql(graphql('query($s: String!) { contacts(search: $s) { pageInfo { total } } }'), { s: long }, key)
    expect(gql.errors?.[0]?.extensions).toEqual({
      code: 'VALIDATION_FAILED',
      details: [{ field: 'search', message: 'search must be at most 200 characters' }],
    })
    const most = await kit.rest('GET', `/api/contacts?search=${'%25_'.repeat(100)}`, { key })
    expect(most).toMatchObject({ status: 200, body: { meta: { total: 0, search: '%_'.repeat(100) } } })
  })

  it('checks the 10,000-contact maximum before any item, so a huge bad list gets a small answer', async () => {
    const { key, group } = await kit.seed().account().group()
    await unchanged(kit, async () => {
      const path = `/api/contact/group/${group.id}/add-contacts`
      for (const n of [200_000, 10_001]) {
        const res = await kit.rest('POST', path, { key, body: { contacts: Array.from({ length: n }, () => ({})) } })
        expect(res.status).toBe(422)
        expect(res.body).toEqual({
          error: 'at most 10000 contacts per request',
          code: 'VALIDATION_FAILED',
          details: [{ field: 'contacts', message: 'at most 10000 contacts per request' }],
        })
      }
      const delist = await kit.rest('DELETE', `/api/contact/group/${group.id}/delist-contacts`, {
        key,
        body: { contacts: Array.from({ length: 10_001 }, () => ({})) },
      })
      expect(delist.body.details).toEqual([{ field: 'contacts', message: 'at most 10000 contacts per request' }])
      const many = Array.from({ length: 10_001 }, () => ({ mobile: 'x', firstName: '' }))
      const gql = await kit.graphql(
        graphql('mutation($g: ID!, $c: [SaveContactInput!]!) { addContactsToGroup(groupId: $g, contacts: $c) { enlisted } }'),
        { g: group.id, c: many },
        key,
      )
      expect(gql.errors?.[0]?.extensions).toEqual({
        code: 'VALIDATION_FAILED',
        details: [{ field: 'contacts', message: 'at most 10000 contacts per request' }],
      })
      // GraphQL's own coercion stops after 50 problems: 200,000 bad items stay a short answer.
      const coerced = await kit.rest('POST', '/graphql', {
        key,
        body: {
          query: 'mutation($g: ID!, $c: [SaveContactInput!]!) { addContactsToGroup(groupId: $g, contacts: $c) { enlisted } }',
          variables: { g: group.id, c: Array.from({ length: 200_000 }, () => ({})) },
        },
      })
      expect(coerced.status).toBe(400)
      expect(JSON.stringify(coerced.body).length).toBeLessThan(64 * 1024)
    })
  })

  it('lists at most 100 validation details and one more entry counting the rest', async () => {
    const { key, group } = await kit.seed().account().group()
    await unchanged(kit, async () => {
      const res = await kit.rest('POST', `/api/contact/group/${group.id}/add-contacts`, {
        key,
        body: { contacts: Array.from({ length: 150 }, () => ({})) },
      })
      expect(res.status).toBe(422)
      expect(res.body.error).toBe('The request has 300 invalid fields')
      expect(res.body.details).toHaveLength(101)
      expect(res.body.details[0]).toEqual({ field: 'contacts[0].mobile', message: 'mobile is required' })
      expect(res.body.details[100]).toEqual({ field: '(more)', message: '200 more problems are not listed' })
      const bad = Array.from({ length: 150 }, () => ({ mobile: 'nope', firstName: ' ' }))
      const gql = await kit.graphql(
        graphql('mutation($g: ID!, $c: [SaveContactInput!]!) { addContactsToGroup(groupId: $g, contacts: $c) { enlisted } }'),
        { g: group.id, c: bad },
        key,
      )
      expect(gql.errors?.[0]?.extensions?.details).toHaveLength(101)
      expect(gql.errors?.[0]?.extensions?.details?.[100]).toEqual({ field: '(more)', message: '200 more problems are not listed' })
    })
  })

  it('importChannel: another operator’s slug is a 409, its uuid a 404, and nothing is overwritten', async () => {
    const op = await kit.seed().account('Operator')
    const other = await kit.seed().account('Other')
    const run = (doc: unknown, key: string) =>
      kit.graphql(
        graphql('mutation($d: String!) { importChannel(document: $d) { id: uuid slug } }'),
        { d: typeof doc === 'string' ? doc : JSON.stringify(doc) },
        key,
      )
    expect((await run(JSON.parse(SAMPLE), op.key)).data?.importChannel).toEqual({ id: SAMPLE_UUID, slug: 'city-tv' })
    await unchanged(kit, async () => {
      const bySlug = JSON.parse(SAMPLE)
      delete bySlug.channel.uuid
      bySlug.channel.name = 'Hijacked'
      const newUuid = { ...JSON.parse(SAMPLE), channel: { ...JSON.parse(SAMPLE).channel, uuid: randomUUID(), name: 'Hijacked' } }
      for (const doc of [bySlug, newUuid]) {
        expect((await run(doc, other.key)).errors?.[0]).toMatchObject({
          message: 'channel slug city-tv is already used by another channel',
          extensions: { code: 'CONFLICT' },
        })
      }
      // The operator's own second channel may not take the slug either.
      expect((await run(newUuid, op.key)).errors?.[0]?.extensions?.code).toBe('CONFLICT')
      // Another's uuid answers like a missing channel.
      expect(
        (await run({ ...JSON.parse(SAMPLE), channel: { ...JSON.parse(SAMPLE).channel, name: 'Hijacked' } }, other.key)).errors?.[0]
          ?.extensions?.code,
      ).toBe('NOT_FOUND')
      // Nesting far deeper than any import document is refused before anything recurses over it.
      const deep = await run(SAMPLE.replace('{', `{"extra":${'['.repeat(100_000)}${']'.repeat(100_000)},`), other.key)
      expect(deep.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED')
    })
    expect((await kit.db.channel.findUniqueOrThrow({ where: { id: SAMPLE_UUID } })).name).toBe('City TV')
  })

  // The CLI stops before it opens a database: once is enough.
  it.runIf(target.name === 'sqlite')(
    'CLI: a prototype name is not a command',
    async () => {
      for (const name of ['constructor', '__proto__', 'toString']) {
        const failed = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', name], {
          env: { ...process.env, DATABASE_URL: kit.url },
        }).catch((e) => e)
        expect(failed.code, name).toBe(2)
        expect(failed.stderr.trim().split('\n'), name).toEqual([`unknown command "${name}"; run \`npm run cli -- --help\` for the list`])
      }
    },
    30_000,
  )

  it.runIf(target.name === 'postgresql')('add-contacts racing a group delete answers 404 NOT_FOUND and writes nothing', async () => {
    const { key, group, account } = await kit.seed().account().group()
    const blocker = await schemaClient(kit.url)
    try {
      // Hold the contacts table so add-contacts stops at its first insert, after it saw the group.
      await blocker.query('BEGIN')
      await blocker.query('LOCK TABLE "Contact" IN EXCLUSIVE MODE')
      const adding = kit.rest('POST', `/api/contact/group/${group.id}/add-contacts`, {
        key,
        body: { contacts: [0, 1, 2].map((i) => ({ mobile: mobile(), first_name: `Racer ${i}` })) },
      })
      const deadline = Date.now() + 15_000
      for (;;) {
        // The waiting insert shows in pg_locks (pg_stat_activity may still show the previous statement).
        const { rows } = await blocker.query(
          `SELECT COUNT(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = '"Contact"'::regclass`,
        )
        if (rows[0].n > 0) break
        if (Date.now() > deadline) throw new Error('add-contacts never reached its insert')
        await new Promise((r) => setTimeout(r, 20))
      }
      expect((await kit.rest('DELETE', `/api/contact/group/${group.id}`, { key })).status).toBe(200)
      await blocker.query('COMMIT')
      const res = await adding
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ error: 'Group not found', code: 'NOT_FOUND' })
      expect(await kit.db.contact.count({ where: { accountId: account.id } })).toBe(0)
    } finally {
      await blocker.end()
    }
  })
})
