import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { isEnumType, isInputObjectType, isInterfaceType, isObjectType, isScalarType, isSpecifiedScalarType } from 'graphql'
import { schema } from '../src/graphql/schema.js'
import { graphql } from '../src/graphql/typed-documents.js'
import { encodeNodeId, NODE_TYPES } from '../src/graphql/node-id.js'

/** Every place of the schema that should explain itself and does not. */
function undescribed(): string[] {
  const missing: string[] = []
  if (!schema.description) missing.push('schema')
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__') || (isScalarType(type) && isSpecifiedScalarType(type))) continue
    if (!type.description) missing.push(`type ${type.name}`)
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (!field.description) missing.push(`${type.name}.${field.name}`)
        for (const arg of field.args) if (!arg.description) missing.push(`${type.name}.${field.name}(${arg.name})`)
      }
    }
    if (isInputObjectType(type))
      for (const field of Object.values(type.getFields())) if (!field.description) missing.push(`${type.name}.${field.name}`)
    if (isEnumType(type)) for (const value of type.getValues()) if (!value.description) missing.push(`${type.name}.${value.name}`)
  }
  return missing
}

describe('the schema explains itself', () => {
  it('has a description on every type, field, argument, input field and enum value, and on the schema', () => {
    expect(undescribed()).toEqual([])
  })

  it('says how to authenticate at the top', () => {
    expect(schema.description).toMatch(/Authorization: Bearer <API key>/)
  })
})

const MISSING = '00000000-0000-4000-8000-000000000000'

describe('global ids', () => {
  it('every Node resolves its id at once (no promise), as the Relay plugin encodes it', () => {
    for (const name of NODE_TYPES) {
      const type = schema.getType(name)
      if (!isObjectType(type)) throw new Error(`${name} is not an object type`)
      const id = type.getFields().id!.resolve!({ id: 42 }, {}, {}, null as never)
      expect(id, name).toBe(encodeNodeId(name, 42))
      expect(Buffer.from(id as string, 'base64').toString(), name).toBe(`${name}:42`)
    }
  })
})

describe.each(targets)('GraphQL schema behaviour on $name', (target) => {
  const kit = useKit(target)

  it('root lookups by id are nullable: a missing id is null plus NOT_FOUND, and the other root fields still answer', async () => {
    const { key, group } = await kit.seed().account().group({ name: 'Kept' })
    for (const field of ['group', 'contact', 'message']) {
      const res = await kit.graphql(`{ ${field}(id: "${MISSING}") { id } groups { nodes { id: uuid name } } }`, {}, key)
      expect(res.data, field).toEqual({ [field]: null, groups: { nodes: [{ id: group.id, name: 'Kept' }] } })
      expect(res.errors, field).toEqual([expect.objectContaining({ path: [field], extensions: { code: 'NOT_FOUND' } })])
    }
    const publicLookups = await kit.graphql(
      graphql(`{ channel(id: "no-such-channel") { name } program(id: "no-such-program") { name } __typename }`),
    )
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
    const ok = await kit.gql(graphql('{ webhookDeliveries(state: PENDING) { id state } }'), {}, key)
    expect(ok.webhookDeliveries).toEqual([])
    const bad = await kit.graphql('{ webhookDeliveries(state: "bogus") { id } }', {}, key)
    expect(bad.data).toBeUndefined()
    expect(bad.errors?.[0]?.message).toMatch(/WebhookDeliveryState/)
  })
})
