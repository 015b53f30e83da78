// The Idempotency-Key on every transport that can run a mutation: a retry replays, never runs again.
import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'

const CREATE = 'mutation Create($input: CreateGroupInput!) { createGroup(input: $input) { created group { id: uuid name } } }'

describe.each(targets)('Idempotency-Key across GraphQL transports on $name', (target) => {
  const kit = useKit(target)

  async function post(key: string, idempotencyKey: string, body: BodyInit, contentType?: string) {
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'idempotency-key': idempotencyKey }
    if (contentType) headers['content-type'] = contentType
    const response = await kit.app.fetch(new Request('http://localhost/graphql', { method: 'POST', headers, body }))
    return { status: response.status, replayed: response.headers.get('idempotency-replayed'), body: await response.json() }
  }

  const transports: [string, (name: string) => { body: () => BodyInit; contentType?: string }][] = [
    [
      'multipart/form-data (the GraphQL multipart request)',
      (name) => ({
        body: () => {
          const form = new FormData()
          form.set('operations', JSON.stringify({ query: CREATE, variables: { input: { name } } }))
          form.set('map', '{}')
          return form
        },
      }),
    ],
    [
      'JSON that starts with a byte-order mark',
      (name) => ({
        body: () => `\uFEFF${JSON.stringify({ query: CREATE, variables: { input: { name } } })}`,
        contentType: 'application/json',
      }),
    ],
    [
      'plain JSON',
      (name) => ({ body: () => JSON.stringify({ query: CREATE, variables: { input: { name } } }), contentType: 'application/json' }),
    ],
  ]

  it.each(transports)('%s: the retry is a replay of the first answer', async (_name, make) => {
    const s = await kit.seed().account()
    const request = make(`Group ${Math.random()}`)
    const first = await post(s.key, 'transport-1', request.body(), request.contentType)
    expect(first).toMatchObject({ status: 200, replayed: null, body: { data: { createGroup: { created: true } } } })
    const again = await post(s.key, 'transport-1', request.body(), request.contentType)
    // Run again, createGroup would answer created: false (the group exists): a replay repeats true.
    expect(again).toEqual({ ...first, replayed: 'true' })
    expect(await kit.db.idempotencyRecord.count({ where: { accountId: s.account.id } })).toBe(1)
  })

  it('a query with a key on a transport it cannot read as a query is kept like a mutation, and still answers', async () => {
    const s = await kit.seed().account()
    const form = () => {
      const f = new FormData()
      f.set('operations', JSON.stringify({ query: '{ groups { pageInfo { total } } }' }))
      f.set('map', '{}')
      return f
    }
    const first = await post(s.key, 'read-1', form())
    expect(first).toMatchObject({ status: 200, body: { data: { groups: { pageInfo: { total: 0 } } } } })
    expect((await post(s.key, 'read-1', form())).replayed).toBe('true')
  })
})
