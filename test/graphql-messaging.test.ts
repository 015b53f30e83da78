import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { mobile } from './kit/seed.js'
import { anyUuid } from './kit/matchers.js'
import { graphql } from '../src/graphql/typed-documents.js'

const GROUP_FIELDS = 'id: uuid name description subscribable optinCode optoutCode subscriptionSim subscriberCount createdAt updatedAt'

describe.each(targets)('GraphQL messaging on $name', (target) => {
  const kit = useKit(target)

  it('answers __typename and introspection without a key, and data fields only with one', async () => {
    expect(await kit.gql(graphql('{ __typename }'))).toEqual({ __typename: 'Query' })
    const intro = await kit.gql('{ __schema { queryType { name } } }')
    expect(intro.__schema.queryType.name).toBe('Query')
    const denied = await kit.graphql(graphql('{ groups { pageInfo { total } } }'))
    expect(denied.data).toBeNull()
    expect(denied.errors).toEqual([
      expect.objectContaining({ message: 'A valid API key is required', extensions: { code: 'UNAUTHENTICATED' }, path: ['groups'] }),
    ])
  })

  it('creates, reads, updates and deletes a group', async () => {
    const { key } = await kit.seed().account()
    const create = `mutation($input: CreateGroupInput!) { createGroup(input: $input) { created group { ${GROUP_FIELDS} } } }`
    const made = await kit.gql(create, { input: { name: 'Readers', subscribable: true, optinCode: 'READ', subscriptionSim: '22384' } }, key)
    expect(made.createGroup).toEqual({
      created: true,
      group: {
        id: anyUuid(),
        name: 'Readers',
        description: '',
        subscribable: true,
        optinCode: 'READ',
        optoutCode: null,
        subscriptionSim: '22384',
        subscriberCount: 0,
        createdAt: expect.stringMatching(/Z$/),
        updatedAt: expect.stringMatching(/Z$/),
      },
    })
    const id = made.createGroup.group.id
    const exists = await kit.gql(create, { input: { name: 'READERS' } }, key)
    expect(exists.createGroup).toMatchObject({ created: false, group: { id } })

    const updated = await kit.gql(
      graphql(`mutation($id: ID!, $input: UpdateGroupInput!) { updateGroup(id: $id, input: $input) { name description optinCode } }`),
      { id, input: { description: 'Book club', optinCode: null } },
      key,
    )
    expect(updated.updateGroup).toEqual({ name: 'Readers', description: 'Book club', optinCode: null })

    const page = await kit.gql(
      graphql(`{ groups(search: "BOOK") { nodes { id: uuid } pageInfo { total search page perPage skipped pageCount } } }`),
      {},
      key,
    )
    expect(page.groups).toEqual({ nodes: [{ id }], pageInfo: { total: 1, search: 'BOOK', page: 1, perPage: 25, skipped: 0, pageCount: 1 } })

    const deleted = await kit.gql(graphql(`mutation($id: ID!) { deleteGroup(id: $id) { deletedId } }`), { id }, key)
    expect(deleted.deleteGroup).toEqual({ deletedId: id })
    const gone = await kit.graphql(graphql(`query($id: ID!) { group(id: $id) { id } }`), { id }, key)
    expect(gone.errors?.[0]?.extensions).toEqual({ code: 'NOT_FOUND' })
  })

  it('saves contacts, enlists them and delists them', async () => {
    const s = await kit.seed().account().group({ name: 'Choir' })
    const number = mobile()
    const save = `mutation($input: SaveContactInput!) { saveContact(input: $input) { created contact { id: uuid mobile firstName groups { name } selfSubscribed } } }`
    const first = await kit.gql(save, { input: { mobile: number.replace('+254', '0'), firstName: 'Amani', groups: [s.group.id] } }, s.key)
    expect(first.saveContact).toEqual({
      created: true,
      contact: { id: anyUuid(), mobile: number, firstName: 'Amani', groups: [{ name: 'Choir' }], selfSubscribed: false },
    })
    const second = await kit.gql(save, { input: { mobile: number, firstName: 'Amani B' } }, s.key)
    expect(second.saveContact).toMatchObject({ created: false, contact: { id: first.saveContact.contact.id, firstName: 'Amani B' } })

    const added = await kit.gql(
      graphql(
        `mutation($g: ID!, $c: [SaveContactInput!]!) { addContactsToGroup(groupId: $g, contacts: $c) { enlisted created group { contacts { pageInfo { total } } } } }`,
      ),
      {
        g: s.group.id,
        c: [
          { mobile: mobile(), firstName: 'Baraka' },
          { mobile: number, firstName: 'Amani' },
        ],
      },
      s.key,
    )
    expect(added.addContactsToGroup).toEqual({ enlisted: 2, created: 1, group: { contacts: { pageInfo: { total: 2 } } } })

    const delisted = await kit.gql(
      graphql(`mutation($g: ID!, $m: [String!]!) { delistContacts(groupId: $g, mobiles: $m) { delisted group { name } } }`),
      { g: s.group.id, m: [number, '+254799999999'] },
      s.key,
    )
    expect(delisted.delistContacts).toEqual({ delisted: 1, group: { name: 'Choir' } })
  })

  it('enlists on the groups an item names (uuid or global id) as well as the target, items without groups on the target alone', async () => {
    const s = await kit.seed().account().group().group()
    const [target, named] = s.groups
    const { group } = await kit.gql(graphql(`query($id: ID!) { group(id: $id) { id } }`), { id: named!.id }, s.key)
    const [a, b, c] = [mobile(), mobile(), mobile()]
    const added = await kit.gql(
      graphql(`mutation($g: ID!, $c: [SaveContactInput!]!) { addContactsToGroup(groupId: $g, contacts: $c) { enlisted created } }`),
      {
        g: target!.id,
        c: [
          { mobile: a, firstName: 'Global', groups: [group!.id] },
          { mobile: b, firstName: 'None' },
          { mobile: c, firstName: 'Uuid', groups: [named!.id, named!.id] },
          { mobile: b, firstName: 'None again', groups: null },
        ],
      },
      s.key,
    )
    expect(added.addContactsToGroup).toEqual({ enlisted: 3, created: 4 })
    const members = async (groupId: string) =>
      (await kit.db.membership.findMany({ where: { groupId }, select: { contact: { select: { mobile: true, firstName: true } } } }))
        .map((m) => `${m.contact.mobile} ${m.contact.firstName}`)
        .sort()
    expect(await members(target!.id)).toEqual([`${a} Global`, `${b} None again`, `${c} Uuid`].sort())
    expect(await members(named!.id)).toEqual([`${a} Global`, `${c} Uuid`].sort())
  })

  it('reports validation errors with a code and per-field details', async () => {
    const s = await kit.seed().account().group()
    const res = await kit.graphql(
      graphql(`mutation($g: ID!, $c: [SaveContactInput!]!) { addContactsToGroup(groupId: $g, contacts: $c) { enlisted } }`),
      {
        g: s.group.id,
        c: [
          { mobile: mobile(), firstName: 'Ok' },
          { mobile: '1', firstName: ' ' },
        ],
      },
      s.key,
    )
    expect(res.errors?.[0]?.extensions).toEqual({
      code: 'VALIDATION_FAILED',
      details: [
        { field: 'contacts[1].mobile', message: 'mobile "1" is not a valid mobile number' },
        { field: 'contacts[1].firstName', message: 'firstName is required' },
      ],
    })
    expect(await kit.db.contact.count({ where: { accountId: s.account.id } })).toBe(0)
    const perPage = await kit.graphql(graphql(`{ contacts(perPage: 0) { pageInfo { total } } }`), {}, s.key)
    expect(perPage.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED')
    const clamped = await kit.gql(graphql(`{ contacts(perPage: 1000) { pageInfo { perPage } } }`), {}, s.key)
    expect(clamped.contacts.pageInfo.perPage).toBe(100)
  })

  it('keeps another account out', async () => {
    const owner = await kit.seed().account().group().contacts(1)
    const other = await kit.seed().account()
    const res = await kit.graphql(graphql(`query($id: ID!) { contact(id: $id) { id } }`), { id: owner.contacts[0]!.id }, other.key)
    expect(res.errors?.[0]?.extensions?.code).toBe('NOT_FOUND')
    const del = await kit.graphql(graphql(`mutation($id: ID!) { deleteGroup(id: $id) { deletedId } }`), { id: owner.group.id }, other.key)
    expect(del.errors?.[0]?.extensions?.code).toBe('NOT_FOUND')
    expect(await kit.db.group.count({ where: { id: owner.group.id } })).toBe(1)
  })

  it('refuses queries that are too deep or use too many aliases', async () => {
    const { key } = await kit.seed().account()
    const deep = `{ contacts { nodes { ${'groups { contacts { nodes { '.repeat(4)}id${' } } }'.repeat(4)} } } }`
    const tooDeep = await kit.graphql(deep, {}, key)
    expect(tooDeep.errors?.[0]?.message).toMatch(/depth/i)
    const aliases = Array.from({ length: 40 }, (_, i) => `a${i}: contacts { pageInfo { total } }`).join(' ')
    const tooMany = await kit.graphql(`{ ${aliases} }`, {}, key)
    expect(tooMany.errors?.[0]?.message).toMatch(/alias/i)
  })
})
