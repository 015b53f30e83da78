// What one account can make the idempotency store hold: each kept answer and each account's kept
// answers are bounded; past the bounds a retry is refused (409), never run again.
import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'

const BUDGET = 3000

describe.each(targets)('bounded Idempotency-Key storage on $name', (target) => {
  const kit = useKit(target, { env: { IDEMPOTENCY_ACCOUNT_BUDGET_BYTES: String(BUDGET) } })
  const keptCharacters = async (accountId: string) =>
    (await kit.db.idempotencyRecord.findMany({ where: { accountId }, select: { body: true } })).reduce(
      (sum, r) => sum + (r.body?.length ?? 0),
      0,
    )

  const gql = (key: string, idempotencyKey: string, query: string, variables: Record<string, unknown>) =>
    kit.rest('POST', '/graphql', { key, body: { query, variables }, headers: { 'idempotency-key': idempotencyKey } })

  it('keeps no answer over 64 KiB: the amplifying mutation is answered once, its retry is a 409, the store grows by a marker only', async () => {
    const s = await kit.seed().account().group({ name: 'Big' }).contacts(100)
    // One small mutation selecting the group's 100 contacts under 9 aliases: an answer of about 100 KB.
    const aliases = Array.from(
      { length: 9 },
      (_, i) => `c${i}: contacts(perPage: 100) { nodes { uuid mobile firstName familyName email organization } }`,
    ).join(' ')
    const UPDATE = `mutation($id: ID!, $d: String!) { updateGroup(id: $id, input: { description: $d }) { description ${aliases} } }`
    for (let i = 0; i < 20; i++) {
      const first = await gql(s.key, `amplify-${i}`, UPDATE, { id: s.group.id, d: `run ${i}` })
      expect(first.status).toBe(200)
      expect(JSON.stringify(first.body).length).toBeGreaterThan(64 * 1024)
    }
    expect(await keptCharacters(s.account.id)).toBe(0)
    expect(await kit.db.idempotencyRecord.count({ where: { accountId: s.account.id } })).toBe(20)
    // Someone changes the group; a retry of run 0 must not run again and undo that.
    await kit.db.group.update({ where: { id: s.group.id }, data: { description: 'changed since' } })
    const retry = await gql(s.key, 'amplify-0', UPDATE, { id: s.group.id, d: 'run 0' })
    expect(retry.status).toBe(409)
    expect(retry.body.errors).toEqual([{ message: expect.stringContaining('its answer was not kept'), extensions: { code: 'CONFLICT' } }])
    expect((await kit.db.group.findUniqueOrThrow({ where: { id: s.group.id } })).description).toBe('changed since')
  })

  it(`keeps answers within the account's budget (${BUDGET} characters here); past it answers are not kept and retries are refused`, async () => {
    const s = await kit.seed().account()
    const CREATE = 'mutation($input: CreateGroupInput!) { createGroup(input: $input) { created group { uuid name description } } }'
    const description = 'd'.repeat(900)
    const answers = []
    for (let i = 0; i < 6; i++) answers.push(await gql(s.key, `budget-${i}`, CREATE, { input: { name: `G${i}`, description } }))
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200])
    const kept = await keptCharacters(s.account.id)
    expect(kept).toBeLessThanOrEqual(BUDGET)
    expect(kept).toBeGreaterThan(0)
    const retries = await Promise.all(answers.map((_, i) => gql(s.key, `budget-${i}`, CREATE, { input: { name: `G${i}`, description } })))
    const replayed = retries.filter((r) => r.headers.get('idempotency-replayed') === 'true')
    const refused = retries.filter((r) => r.status === 409)
    // The first answers fit and replay exactly; the rest are refused, none runs again.
    expect(replayed.length).toBeGreaterThan(0)
    expect(replayed.length + refused.length).toBe(6)
    expect(replayed.map((r) => r.body)).toEqual(answers.slice(0, replayed.length).map((a) => a.body))
    expect(await kit.db.group.count({ where: { accountId: s.account.id } })).toBe(6)
  })
})
