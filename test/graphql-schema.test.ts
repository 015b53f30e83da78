import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'

const MISSING = '00000000-0000-4000-8000-000000000000'

describe.each(targets)('GraphQL schema behaviour on $name', (target) => {
  const kit = useKit(target)

  it('root lookups by id are nullable: a missing id is null plus NOT_FOUND, and the other root fields still answer', async () => {
    const { key, group } = await kit.seed().account().group({ name: 'Kept' })
    for (const field of ['group', 'contact']) {
      const res = await kit.graphql(`{ ${field}(id: "${MISSING}") { id } groups { nodes { id name } } }`, {}, key)
      expect(res.data, field).toEqual({ [field]: null, groups: { nodes: [{ id: group.id, name: 'Kept' }] } })
      expect(res.errors, field).toEqual([expect.objectContaining({ path: [field], extensions: { code: 'NOT_FOUND' } })])
    }
    const publicLookups = await kit.graphql(`{ channel(id: "no-such-channel") { name } program(id: "no-such-program") { name } __typename }`)
    expect(publicLookups.data).toEqual({ channel: null, program: null, __typename: 'Query' })
    // Errors come in the order the resolvers fail, which is not the order of the fields.
    expect(publicLookups.errors?.map((e) => [e.path, e.extensions?.code])).toEqual(
      expect.arrayContaining([
        [['channel'], 'NOT_FOUND'],
        [['program'], 'NOT_FOUND'],
      ]),
    )
    expect(publicLookups.errors).toHaveLength(2)
  })

  it('closed sets are enums: webhookDeliveries(state:) refuses an unknown state instead of answering []', async () => {
    const { key } = await kit.seed().account()
    const ok = await kit.gql('{ webhookDeliveries(state: PENDING) { id state } }', {}, key)
    expect(ok.webhookDeliveries).toEqual([])
    const bad = await kit.graphql('{ webhookDeliveries(state: "bogus") { id } }', {}, key)
    expect(bad.data).toBeUndefined()
    expect(bad.errors?.[0]?.message).toMatch(/WebhookDeliveryState/)
  })
})
