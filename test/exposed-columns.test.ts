import { describe, expect, it } from 'vitest'
import { GraphQLObjectType, type GraphQLResolveInfo } from 'graphql'
import { schema } from '../src/graphql/schema.js'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { graphql } from '../src/graphql/typed-documents.js'

const contact = schema.getType('Contact') as GraphQLObjectType
const resolve = (field: string) => contact.getFields()[field]!.resolve!
const info = { path: { prev: undefined, key: 'email', typename: 'Contact' }, parentType: contact } as unknown as GraphQLResolveInfo
/** A context whose every use fails: the answer must come from the row alone. */
const untouchable = new Proxy(
  {},
  {
    get: () => {
      throw new Error('the loader was used')
    },
  },
)

describe('fields that expose a column', () => {
  it('answer from the row when it holds the column, null included, without the loader', () => {
    expect(resolve('email')({ id: 'c1', email: 'a@example.com' }, {}, untouchable, info)).toBe('a@example.com')
    expect(resolve('email')({ id: 'c1', email: null }, {}, untouchable, info)).toBeNull()
    expect(resolve('firstName')({ id: 'c1', firstName: '' }, {}, untouchable, info)).toBe('')
  })

  it('fall back to the Prisma plugin’s loader for a row without the column', () => {
    expect(() => resolve('email')({ id: 'c1' }, {}, untouchable, info)).toThrow('the loader was used')
  })
})

describe.each(targets)('exposed columns through GraphQL on $name', (target) => {
  const kit = useKit(target)

  it('answer the same values whichever fields a query asks for', async () => {
    const s = await kit
      .seed()
      .account()
      .contacts(3, (i) =>
        i === 1 ? { firstName: 'P1', organization: 'Org 1' } : { firstName: `P${i}`, email: `c${i}@example.com`, organization: `Org ${i}` },
      )
    const one = await kit.gql(graphql(`{ contacts { nodes { id email } } }`), {}, s.key)
    const all = await kit.gql(graphql(`{ contacts { nodes { id firstName email organization } } }`), {}, s.key)
    expect(one.contacts.nodes.map((c: { email: string | null }) => c.email)).toEqual(
      all.contacts.nodes.map((c: { email: string | null }) => c.email),
    )
    expect(all.contacts.nodes.map((c: { email: string | null }) => c.email).sort()).toEqual(
      ['c0@example.com', 'c2@example.com', null].sort(),
    )
    const byId = await kit.gql(
      graphql(`query ($id: ID!) { contact(id: $id) { organization groups { id } } }`),
      { id: all.contacts.nodes[0]!.id },
      s.key,
    )
    expect(byId.contact?.organization).toBe(all.contacts.nodes[0]!.organization)
  })
})
