import { describe, expect, it } from 'vitest'
import { parse } from 'graphql'
import { targets } from './kit/databases.js'
import { useKit, fixedClock } from './kit/kit.js'
import { mobile, type Seeded } from './kit/seed.js'
import { importChannel } from '../src/channel/import-channel.js'
import { applyDueCarrierEvents } from '../src/sms/carrier-events.js'
import { encodeNodeId } from '../src/graphql/node-id.js'
import { measureOperation } from '../src/graphql/limits/measure-operation.js'
import { schema } from '../src/graphql/schema.js'
import { graphql } from '../src/graphql/typed-documents.js'

const PAGE_INFO = 'pageInfo { hasNextPage hasPreviousPage startCursor endCursor }'
const CONTACTS = `query($first: Int, $after: String, $last: Int, $before: String, $search: String) {
  contactsConnection(first: $first, after: $after, last: $last, before: $before, search: $search) { totalCount edges { cursor node { id uuid firstName } } ${PAGE_INFO} }
}`
const SEND = `mutation($input: SendSmsInput!) { sendSms(input: $input) { id uuid status } }`

type Connection = {
  totalCount?: number
  edges: { cursor: string; node: { id: string; uuid: string } }[]
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null }
}

describe.each(targets)('Relay connections and nodes on $name', (target) => {
  const clock = fixedClock('2026-03-10T08:15:00Z')
  const kit = useKit(target, { clock, env: { SANDBOX_DELIVERY_DELAY_MS: '1000', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } })

  const contacts = async (key: string, variables: Record<string, unknown>): Promise<Connection> =>
    (await kit.gql(CONTACTS, variables, key)).contactsConnection
  /** The uuids of the account's contacts in the REST list's order. */
  const restOrder = async (key: string, search = '') => {
    const res = await kit.rest('GET', `/api/contacts?perPage=100&search=${encodeURIComponent(search)}`, { key })
    expect(res.status).toBe(200)
    return (res.body.data as { uuid: string }[]).map((c) => c.uuid)
  }
  const save = (key: string, firstName: string, familyName = '') =>
    kit
      .gql(
        `mutation($input: SaveContactInput!) { saveContact(input: $input) { contact { uuid } } }`,
        { input: { mobile: mobile(), firstName, familyName } },
        key,
      )
      .then((d) => d.saveContact.contact.uuid as string)
  const remove = (key: string, id: string) => kit.gql(graphql(`mutation($id: ID!) { deleteContact(id: $id) { deletedId } }`), { id }, key)

  /** Many ties on the names, so the uuid decides much of the order. */
  const tiedNames = (i: number) => ({ firstName: ['Amani', 'baraka', 'Chidi'][i % 3]!, familyName: i % 2 ? 'Otieno' : '' })

  it('walks every page forward while contacts are inserted and deleted, the page-end contact included: each lasting contact once, in the REST order', async () => {
    const s = await kit.seed().account().contacts(31, tiedNames)
    const deleted = new Set<string>()
    const seen: string[] = []
    let after: string | null = null
    let pages = 0
    for (;;) {
      const page: Connection = await contacts(s.key, { first: 7, after })
      seen.push(...page.edges.map((e) => e.node.uuid))
      pages += 1
      if (!page.pageInfo.hasNextPage) break
      after = page.pageInfo.endCursor
      // Between requests: the row the cursor came from goes, a not yet seen one goes, and new
      // contacts arrive before and after the cursor's position.
      const last = page.edges[page.edges.length - 1]!.node.uuid
      const unseen = s.contacts.map((c) => c.id).find((id) => !seen.includes(id) && !deleted.has(id))
      for (const id of [last, unseen]) {
        if (!id) continue
        await remove(s.key, id)
        deleted.add(id)
      }
      await save(s.key, 'Aaron')
      await save(s.key, 'baraka', 'Mwangi')
      await save(s.key, 'Zed')
    }
    expect(pages).toBeGreaterThan(3)
    expect(new Set(seen).size).toBe(seen.length)
    const lasting = new Set(s.contacts.map((c) => c.id).filter((id) => !deleted.has(id)))
    expect(seen.filter((id) => lasting.has(id))).toEqual((await restOrder(s.key)).filter((id) => lasting.has(id)))
    expect(seen.filter((id) => lasting.has(id))).toHaveLength(lasting.size)
  })

  it('walks backward with last/before while contacts come and go, and ends on the first contact', async () => {
    const s = await kit.seed().account().contacts(20, tiedNames)
    const deleted = new Set<string>()
    const pages: string[][] = []
    let before: string | null = null
    for (;;) {
      const page: Connection = await contacts(s.key, { last: 6, before })
      pages.unshift(page.edges.map((e) => e.node.uuid))
      if (!page.pageInfo.hasPreviousPage) break
      before = page.pageInfo.startCursor
      const first = page.edges[0]!.node.uuid
      await remove(s.key, first)
      deleted.add(first)
      await save(s.key, 'Aaron')
      await save(s.key, 'Zed')
    }
    const seen = pages.flat()
    expect(new Set(seen).size).toBe(seen.length)
    const lasting = new Set(s.contacts.map((c) => c.id).filter((id) => !deleted.has(id)))
    expect(seen.filter((id) => lasting.has(id))).toEqual((await restOrder(s.key)).filter((id) => lasting.has(id)))
    expect(seen.filter((id) => lasting.has(id))).toHaveLength(lasting.size)
  })

  it('sets pageInfo flags and cursors at both ends, and totalCount is a real count', async () => {
    const s = await kit.seed().account().contacts(5)
    const order = await restOrder(s.key)
    const count = await kit.db.contact.count({ where: { accountId: s.account.id } })

    const first = await contacts(s.key, { first: 2 })
    expect(first.totalCount).toBe(count)
    expect(first.totalCount).toBe(5)
    expect(first.edges.map((e) => e.node.uuid)).toEqual(order.slice(0, 2))
    expect(first.pageInfo).toEqual({
      hasNextPage: true,
      hasPreviousPage: false,
      startCursor: first.edges[0]!.cursor,
      endCursor: first.edges[1]!.cursor,
    })

    const middle = await contacts(s.key, { first: 2, after: first.pageInfo.endCursor })
    expect(middle.edges.map((e) => e.node.uuid)).toEqual(order.slice(2, 4))
    expect(middle.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true })

    const end = await contacts(s.key, { first: 2, after: middle.pageInfo.endCursor })
    expect(end.edges.map((e) => e.node.uuid)).toEqual(order.slice(4))
    expect(end.pageInfo).toEqual({
      hasNextPage: false,
      hasPreviousPage: true,
      startCursor: end.edges[0]!.cursor,
      endCursor: end.edges[0]!.cursor,
    })

    const past = await contacts(s.key, { first: 2, after: end.pageInfo.endCursor })
    expect(past).toEqual({
      totalCount: 5,
      edges: [],
      pageInfo: { hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null },
    })

    const all = await contacts(s.key, { first: 5 })
    expect(all.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false })
    expect((await contacts(s.key, {})).edges).toHaveLength(5) // default page size 25

    const none = await contacts(s.key, { first: 0 })
    expect(none).toEqual({
      totalCount: 5,
      edges: [],
      pageInfo: { hasNextPage: true, hasPreviousPage: false, startCursor: null, endCursor: null },
    })

    const tail = await contacts(s.key, { last: 2 })
    expect(tail.edges.map((e) => e.node.uuid)).toEqual(order.slice(3))
    expect(tail.pageInfo).toEqual({
      hasNextPage: false,
      hasPreviousPage: true,
      startCursor: tail.edges[0]!.cursor,
      endCursor: tail.edges[1]!.cursor,
    })
    const head = await contacts(s.key, { last: 3, before: tail.pageInfo.startCursor })
    expect(head.edges.map((e) => e.node.uuid)).toEqual(order.slice(0, 3))
    expect(head.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false })

    // An edge's cursor is a position: after the 2nd and before the 5th are the 3rd and 4th.
    const between = await contacts(s.key, { first: 10, after: first.edges[1]!.cursor, before: end.edges[0]!.cursor })
    expect(between.edges.map((e) => e.node.uuid)).toEqual(order.slice(2, 4))

    const empty = await kit.seed().account()
    expect(await contacts(empty.key, { first: 3 })).toEqual({
      totalCount: 0,
      edges: [],
      pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
    })
  })

  it('filters by search like the offset pages, and a group connection lists only its members', async () => {
    const s = await kit
      .seed()
      .account()
      .group({ name: 'Choir' })
      .contacts(3, (i) => ({ firstName: ['Daniel', 'Danielle', 'Eve'][i]!, email: i === 2 ? 'eve@DANI.example' : undefined }))
    await kit
      .seed()
      .account()
      .contacts(2, () => ({ firstName: 'Dani elsewhere' })) // another account
    const outside = await save(s.key, 'Dani', 'Outside')
    const searched = await contacts(s.key, { search: 'DANI' })
    expect(searched.edges.map((e) => e.node.uuid)).toEqual(await restOrder(s.key, 'dani'))
    expect(searched.edges.map((e) => e.node.uuid)).toContain(outside)
    expect(searched.totalCount).toBe(4)
    expect((await contacts(s.key, { search: 'nobody' })).totalCount).toBe(0)
    const tooLong = await kit.graphql(CONTACTS, { search: 'x'.repeat(201) }, s.key)
    expect(tooLong.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED' })

    const GROUP = `query($id: ID!, $search: String, $first: Int, $after: String) { group(id: $id) { contactsConnection(search: $search, first: $first, after: $after) { totalCount edges { cursor node { uuid } } ${PAGE_INFO} } } }`
    const members = s.contacts.map((c) => c.id)
    const restMembers = (await kit.rest('GET', `/api/contact/group/${s.group.id}/contacts`, { key: s.key })).body.data.map(
      (c: { uuid: string }) => c.uuid,
    )
    const inGroup = (await kit.gql(GROUP, { id: s.group.id }, s.key)).group.contactsConnection
    expect(inGroup.totalCount).toBe(3)
    expect(inGroup.edges.map((e: { node: { uuid: string } }) => e.node.uuid)).toEqual(restMembers)
    expect([...restMembers].sort()).toEqual([...members].sort())
    const paged = (await kit.gql(GROUP, { id: s.group.id, first: 2 }, s.key)).group.contactsConnection
    const rest = (await kit.gql(GROUP, { id: s.group.id, first: 2, after: paged.pageInfo.endCursor }, s.key)).group.contactsConnection
    expect([...paged.edges, ...rest.edges].map((e: { node: { uuid: string } }) => e.node.uuid)).toEqual(restMembers)
    expect(rest.pageInfo.hasNextPage).toBe(false)
    const groupSearch = (await kit.gql(GROUP, { id: s.group.id, search: 'dani' }, s.key)).group.contactsConnection
    expect(groupSearch.totalCount).toBe(3) // Daniel, Danielle and Eve (by email); not the contact outside the group
  })

  it('reads a searched page by primary key, in the page order both ways', async () => {
    const s = await kit
      .seed()
      .account()
      .contacts(30, (i) => ({ firstName: `Dani ${String(29 - i).padStart(2, '0')}`, familyName: i % 2 ? 'Otieno' : '' }))
    const order = await restOrder(s.key, 'dani')
    kit.statements.length = 0
    expect((await contacts(s.key, { search: 'dani', first: 5 })).edges.map((e) => e.node.uuid)).toEqual(order.slice(0, 5))
    // The rows of the page's ids are read by primary key: asked for an order (or given the account
    // too), SQLite's planner walks one of the account's indexes checking each id instead.
    const byId = kit.statements.filter((sql) => /FROM [`"\w.]*Contact[`"]*( c)? WHERE/.test(sql) && / IN \(/.test(sql))
    expect(byId.length).toBeGreaterThan(0)
    for (const sql of byId) {
      expect(sql).not.toMatch(/ORDER BY/)
      if (kit.deps.dbKind === 'sqlite') {
        // The ids come as a JSON array (one parameter) or one parameter each.
        const values = Array.from({ length: sql.split('?').length - 1 }, () => '[]')
        const plan = (await kit.db.$queryRawUnsafe<{ detail: string }[]>(`EXPLAIN QUERY PLAN ${sql}`, ...values)).map((step) => step.detail)
        const contact = plan.filter((detail) => /^(SEARCH|SCAN) (\S*Contact|c)( |$)/.test(detail))
        expect(contact).toEqual([expect.stringMatching(/^SEARCH \S*(Contact|c) USING INDEX sqlite_autoindex_Contact_1 \(id=\?\)$/)])
      }
    }
    expect((await contacts(s.key, { search: 'dani', last: 5 })).edges.map((e) => e.node.uuid)).toEqual(order.slice(-5))
    const second = await contacts(s.key, {
      search: 'dani',
      first: 5,
      after: (await contacts(s.key, { search: 'dani', first: 5 })).pageInfo.endCursor,
    })
    expect(second.edges.map((e) => e.node.uuid)).toEqual(order.slice(5, 10))
  })

  it('lists groups by name with search and totalCount', async () => {
    const s = await kit
      .seed()
      .account()
      .group({ name: 'beta' })
      .group({ name: 'Alpha', description: 'first letters' })
      .group({ name: 'gamma' })
    const GROUPS = `query($first: Int, $after: String, $search: String) { groupsConnection(first: $first, after: $after, search: $search) { totalCount edges { node { uuid name } } ${PAGE_INFO} } }`
    const page = (await kit.gql(GROUPS, { first: 2 }, s.key)).groupsConnection
    expect(page.totalCount).toBe(3)
    expect(page.edges.map((e: { node: { name: string } }) => e.node.name)).toEqual(['Alpha', 'beta'])
    const next = (await kit.gql(GROUPS, { first: 2, after: page.pageInfo.endCursor }, s.key)).groupsConnection
    expect(next.edges.map((e: { node: { name: string } }) => e.node.name)).toEqual(['gamma'])
    expect(next.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true })
    const searched = (await kit.gql(GROUPS, { search: 'LETTERS' }, s.key)).groupsConnection
    expect(searched).toMatchObject({ totalCount: 1, edges: [{ node: { name: 'Alpha' } }] })
    const rest = await kit.rest('GET', '/api/contact/groups', { key: s.key })
    expect(page.edges.concat(next.edges).map((e: { node: { uuid: string } }) => e.node.uuid)).toEqual(
      rest.body.data.map((g: { uuid: string }) => g.uuid),
    )
  })

  async function funded(): Promise<Seeded> {
    const s = await kit.seed().account()
    await kit.db.account.update({ where: { id: s.account.id }, data: { creditBalance: 1_000_000n } })
    return s
  }

  /** Three messages a second apart; the last to a sandbox number that ends UNDELIV. */
  async function sent(s: Seeded) {
    const ids: string[] = []
    for (const to of ['0712 000 001', '0712 000 002', '+254700000010']) {
      ids.push((await kit.gql(SEND, { input: { to, message: `to ${to}` } }, s.key)).sendSms.uuid)
      clock.advance(1000)
    }
    clock.advance(5000)
    await applyDueCarrierEvents(kit.deps, 'test')
    return ids
  }

  it('lists sent messages newest first, filtered by status', async () => {
    const s = await funded()
    const ids = await sent(s)
    const MESSAGES = `query($status: DeliveryStatus, $first: Int, $after: String) { messagesConnection(status: $status, first: $first, after: $after) { totalCount edges { node { uuid status to } } ${PAGE_INFO} } }`
    const all = (await kit.gql(MESSAGES, {}, s.key)).messagesConnection
    expect(all.totalCount).toBe(3)
    expect(all.edges.map((e: { node: { uuid: string } }) => e.node.uuid)).toEqual([...ids].reverse())
    expect(all.edges.map((e: { node: { status: string } }) => e.node.status)).toEqual(['UNDELIV', 'DELIVRD', 'DELIVRD'])
    const firstTwo = (await kit.gql(MESSAGES, { first: 2 }, s.key)).messagesConnection
    const last = (await kit.gql(MESSAGES, { first: 2, after: firstTwo.pageInfo.endCursor }, s.key)).messagesConnection
    expect(last.edges.map((e: { node: { uuid: string } }) => e.node.uuid)).toEqual([ids[0]])
    const undelivered = (await kit.gql(MESSAGES, { status: 'UNDELIV' }, s.key)).messagesConnection
    expect(undelivered).toMatchObject({ totalCount: 1, edges: [{ node: { uuid: ids[2], to: '+254700000010' } }] })
    const delivered = (await kit.gql(MESSAGES, { status: 'DELIVRD' }, s.key)).messagesConnection
    expect(delivered.edges.map((e: { node: { uuid: string } }) => e.node.uuid)).toEqual([ids[1], ids[0]])
    expect((await kit.gql(MESSAGES, { status: 'PENDING' }, s.key)).messagesConnection.totalCount).toBe(0)
  })

  it('lists webhook deliveries newest first, filtered by state', async () => {
    const s = await funded()
    await kit.gql(graphql(`mutation { setWebhook(url: "http://127.0.0.1:9/hook") { secret } }`), {}, s.key)
    await sent(s)
    const DELIVERIES = `query($state: WebhookDeliveryState, $first: Int, $after: String) { webhookDeliveriesConnection(state: $state, first: $first, after: $after) { totalCount edges { node { id state createdAt } } ${PAGE_INFO} } }`
    const list = (await kit.gql(graphql(`{ webhookDeliveries(first: 200) { id } }`), {}, s.key)).webhookDeliveries.map(
      (d: { id: string }) => d.id,
    )
    expect(list.length).toBeGreaterThanOrEqual(3)
    const walked: string[] = []
    let after: string | null = null
    for (;;) {
      const page: any = (await kit.gql(DELIVERIES, { first: 2, after }, s.key)).webhookDeliveriesConnection
      expect(page.totalCount).toBe(list.length)
      walked.push(...page.edges.map((e: { node: { id: string } }) => e.node.id))
      if (!page.pageInfo.hasNextPage) break
      after = page.pageInfo.endCursor
    }
    expect(walked).toEqual(list)
    const times = (await kit.gql(DELIVERIES, {}, s.key)).webhookDeliveriesConnection.edges.map(
      (e: { node: { createdAt: string } }) => e.node.createdAt,
    )
    expect([...times].sort().reverse()).toEqual(times)
    expect((await kit.gql(DELIVERIES, { state: 'DELIVERED' }, s.key)).webhookDeliveriesConnection).toMatchObject({
      totalCount: 0,
      edges: [],
    })
    expect((await kit.gql(DELIVERIES, { state: 'PENDING' }, s.key)).webhookDeliveriesConnection.totalCount).toBe(list.length)
  })

  async function channelWithProgram() {
    const channel = await importChannel(kit.deps, {
      channel: { slug: `relay-tv-${mobile().slice(-6)}`, name: 'Relay TV', timezone: 'UTC' },
      programs: [
        { slug: `relay-show-${mobile().slice(-6)}`, name: 'Relay Show', type: 'on_demand', status: 'active', episodes: [] },
        { slug: `relay-draft-${mobile().slice(-6)}`, name: 'Draft Show', type: 'on_demand', status: 'draft', episodes: [] },
      ],
    })
    const programs = await kit.db.program.findMany({ where: { channelId: channel.id }, orderBy: { name: 'asc' } })
    return { channel, active: programs.find((p) => p.status === 'active')!, draft: programs.find((p) => p.status === 'draft')! }
  }

  it('fetches all five Node types by global id, in node and nodes, and the id fields agree', async () => {
    const s = await funded()
    const seeded = await kit.seed().account().group({ name: 'Nodes' }).contacts(1)
    const [message] = await sent(s)
    const { channel, active } = await channelWithProgram()
    const NODE = `query($id: ID!) { node(id: $id) { __typename id ... on Contact { uuid firstName } ... on Group { uuid name } ... on SentMessage { uuid status } ... on Channel { uuid name } ... on Program { uuid name } } }`
    const cases: [string, string, string | number][] = [
      ['Contact', seeded.key, seeded.contacts[0]!.id],
      ['Group', seeded.key, seeded.group.id],
      ['SentMessage', s.key, message!],
      ['Channel', '', channel.id],
      ['Program', '', active.id],
    ]
    for (const [type, key, uuid] of cases) {
      const id = encodeNodeId(type as never, uuid)
      const { node } = await kit.gql(NODE, { id }, key || undefined)
      expect(node, type).toMatchObject({ __typename: type, id, uuid: String(uuid) })
    }
    // The id a type's own field returns is the one node() takes.
    const listed = await kit.gql(
      graphql(`{ contactsConnection { edges { node { id uuid } } } groupsConnection { edges { node { id } } } }`),
      {},
      seeded.key,
    )
    const back = await kit.gql(
      graphql(`query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`),
      { ids: [listed.contactsConnection.edges[0]!.node.id, listed.groupsConnection.edges[0]!.node.id, 'Rm9vOjE='] },
      seeded.key,
    )
    expect(back.nodes).toEqual([
      { __typename: 'Contact', id: listed.contactsConnection.edges[0]!.node.id },
      { __typename: 'Group', id: listed.groupsConnection.edges[0]!.node.id },
      null, // Foo:1 — no such type
    ])
    const publicOnes = await kit.gql(
      graphql(`query($ids: [ID!]!) { nodes(ids: $ids) { __typename ... on Channel { slug } ... on Program { slug } } }`),
      { ids: [encodeNodeId('Channel', channel.id), encodeNodeId('Program', active.id)] },
    )
    expect(publicOnes.nodes.map((n) => n?.__typename)).toEqual(['Channel', 'Program'])
  })

  it('arguments take the database id or the global id of the right type; another type is not found', async () => {
    const s = await kit.seed().account().group({ name: 'Args' }).contacts(1)
    const m = await funded()
    const [message] = await sent(m)
    const { channel, active } = await channelWithProgram()
    const contact = s.contacts[0]!.id
    const groupGlobal = encodeNodeId('Group', s.group.id)
    const contactGlobal = encodeNodeId('Contact', contact)

    expect((await kit.gql(graphql(`query($id: ID!) { group(id: $id) { uuid } }`), { id: groupGlobal }, s.key)).group!.uuid).toBe(s.group.id)
    expect((await kit.gql(graphql(`query($id: ID!) { group(id: $id) { uuid } }`), { id: s.group.id }, s.key)).group!.uuid).toBe(s.group.id)
    expect((await kit.gql(graphql(`query($id: ID!) { contact(id: $id) { uuid } }`), { id: contactGlobal }, s.key)).contact!.uuid).toBe(
      contact,
    )
    expect(
      (await kit.gql(graphql(`query($id: ID!) { message(id: $id) { uuid } }`), { id: encodeNodeId('SentMessage', message!) }, m.key))
        .message!.uuid,
    ).toBe(message)
    expect(
      (await kit.gql(graphql(`query($id: String!) { channel(id: $id) { uuid } }`), { id: encodeNodeId('Channel', channel.id) })).channel!
        .uuid,
    ).toBe(channel.id)
    expect(
      (await kit.gql(graphql(`query($id: String!) { program(id: $id) { uuid } }`), { id: encodeNodeId('Program', active.id) })).program!
        .uuid,
    ).toBe(String(active.id))

    for (const [field, id] of [
      ['group', contactGlobal],
      ['contact', groupGlobal],
      ['message', groupGlobal],
    ] as const) {
      const wrong = await kit.graphql(`query($id: ID!) { ${field}(id: $id) { uuid } }`, { id }, field === 'message' ? m.key : s.key)
      expect(wrong.data?.[field], field).toBeNull()
      expect(wrong.errors?.[0]?.extensions, field).toEqual({ code: 'NOT_FOUND' })
    }
    const wrongChannel = await kit.graphql(graphql(`query($id: String!) { channel(id: $id) { uuid } }`), {
      id: encodeNodeId('Program', active.id),
    })
    expect(wrongChannel.errors?.[0]?.extensions).toEqual({ code: 'NOT_FOUND' })
    const wrongNode = await kit.graphql(
      graphql(`query($id: ID!) { node(id: $id) { id } }`),
      { id: encodeNodeId('Contact', s.group.id) },
      s.key,
    )
    expect(wrongNode).toEqual({ data: { node: null } })

    // Mutations and inputs too.
    const renamed = await kit.gql(
      graphql(`mutation($id: ID!) { updateGroup(id: $id, input: { description: "via global id" }) { uuid description } }`),
      { id: groupGlobal },
      s.key,
    )
    expect(renamed.updateGroup).toEqual({ uuid: s.group.id, description: 'via global id' })
    const saved = await kit.gql(
      graphql(`mutation($input: SaveContactInput!) { saveContact(input: $input) { contact { groups { uuid } } } }`),
      { input: { mobile: mobile(), firstName: 'Via', groups: [groupGlobal] } },
      s.key,
    )
    expect(saved.saveContact.contact.groups).toEqual([{ uuid: s.group.id }])
    const badGroups = await kit.graphql(
      graphql(`mutation($input: SaveContactInput!) { saveContact(input: $input) { created } }`),
      { input: { mobile: mobile(), firstName: 'Via', groups: [contactGlobal] } },
      s.key,
    )
    expect(badGroups.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED' })
    const deleted = await kit.gql(graphql(`mutation($id: ID!) { deleteContact(id: $id) { deletedId } }`), { id: contactGlobal }, s.key)
    expect(deleted.deleteContact).toEqual({ deletedId: contact })
  })

  it("never shows another account's rows: node, nodes, connections and cursors", async () => {
    const a = await funded()
    const aSeed = await kit.seed().account().group({ name: 'Secret' }).contacts(3)
    const [aMessage] = await sent(a)
    const b = await kit
      .seed()
      .account()
      .group({ name: 'Mine' })
      .contacts(2, (i) => ({ firstName: `Zz ${i}` }))
    const secret = [
      encodeNodeId('Contact', aSeed.contacts[0]!.id),
      encodeNodeId('Group', aSeed.group.id),
      encodeNodeId('SentMessage', aMessage!),
    ]
    for (const id of secret) {
      expect(await kit.graphql(graphql(`query($id: ID!) { node(id: $id) { id } }`), { id }, b.key)).toEqual({ data: { node: null } })
    }
    expect(await kit.graphql(graphql(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`), { ids: secret }, b.key)).toEqual({
      data: { nodes: [null, null, null] },
    })
    const groupOfA = await kit.graphql(
      graphql(`query($id: ID!) { group(id: $id) { contactsConnection { totalCount } } }`),
      { id: secret[1]! },
      b.key,
    )
    expect(groupOfA.errors?.[0]?.extensions).toEqual({ code: 'NOT_FOUND' })

    const everything = await kit.gql(
      graphql(`{ contactsConnection(first: 100) { totalCount edges { node { uuid } } } groupsConnection(first: 100) { totalCount edges { node { uuid } } }
         messagesConnection(first: 100) { totalCount edges { node { uuid } } } webhookDeliveriesConnection(first: 100) { totalCount edges { node { id } } } }`),
      {},
      b.key,
    )
    expect(everything.contactsConnection.totalCount).toBe(2)
    expect(everything.contactsConnection.edges.map((e: { node: { uuid: string } }) => e.node.uuid).sort()).toEqual(
      b.contacts.map((c) => c.id).sort(),
    )
    expect(everything.groupsConnection).toEqual({ totalCount: 1, edges: [{ node: { uuid: b.group.id } }] })
    expect(everything.messagesConnection).toEqual({ totalCount: 0, edges: [] })
    expect(everything.webhookDeliveriesConnection).toEqual({ totalCount: 0, edges: [] })

    // A cursor from A's list positions B's list; it never brings A's rows.
    const aFirst = await contacts(aSeed.key, { first: 1 })
    const withForeignCursor = await contacts(b.key, { first: 100, after: aFirst.pageInfo.endCursor })
    const bIds = new Set(b.contacts.map((c) => c.id))
    expect(withForeignCursor.edges.map((e) => e.node.uuid).filter((uuid) => !bIds.has(uuid))).toEqual([])
    expect(withForeignCursor.totalCount).toBe(2)
  })

  it('asks for the API key like the page fields; Channel and Program nodes are public', async () => {
    const s = await kit.seed().account().contacts(1)
    for (const field of ['contactsConnection', 'groupsConnection', 'messagesConnection', 'webhookDeliveriesConnection']) {
      const res = await kit.graphql(`{ ${field} { totalCount } }`)
      expect(res.data, field).toBeNull()
      expect(res.errors, field).toEqual([
        expect.objectContaining({ message: 'A valid API key is required', extensions: { code: 'UNAUTHENTICATED' }, path: [field] }),
      ])
    }
    const anonymous = await kit.graphql(graphql(`query($id: ID!) { node(id: $id) { id } }`), {
      id: encodeNodeId('Contact', s.contacts[0]!.id),
    })
    expect(anonymous.errors?.[0]).toMatchObject({ extensions: { code: 'UNAUTHENTICATED' }, path: ['node'] })
    const wrongKey = await kit.graphql(graphql(`{ contactsConnection { totalCount } }`), {}, 'gk_000000000000_nope')
    expect(wrongKey.errors?.[0]?.extensions).toEqual({ code: 'UNAUTHENTICATED' })
    const { channel } = await channelWithProgram()
    expect(
      (await kit.gql(graphql(`query($id: ID!) { node(id: $id) { ... on Channel { uuid } } }`), { id: encodeNodeId('Channel', channel.id) }))
        .node,
    ).toEqual({ uuid: channel.id })
  })

  it('refuses bad cursors, first with last, page sizes out of range, garbage global ids and too many ids, as BAD_REQUEST', async () => {
    const s = await kit.seed().account().group({ name: 'G' }).contacts(2)
    const groupCursor = (await kit.gql(graphql(`{ groupsConnection { edges { cursor } } }`), {}, s.key)).groupsConnection.edges[0]!.cursor
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['garbage after', { after: 'not a cursor!' }, /after is not a cursor of this connection/],
      [
        'base64 garbage before',
        { last: 1, before: Buffer.from('["contacts",1]').toString('base64url') },
        /before is not a cursor of this connection/,
      ],
      ['a cursor of another connection', { after: groupCursor }, /after is not a cursor of this connection/],
      ['first and last', { first: 1, last: 1 }, /first and last cannot be used together/],
      ['first over the limit', { first: 101 }, /first must be at most 100/],
      ['negative first', { first: -1 }, /first must be a whole number from 0/],
      ['negative last', { last: -5 }, /last must be a whole number from 0/],
    ]
    for (const [name, variables, message] of cases) {
      const res = await kit.graphql(CONTACTS, variables, s.key)
      expect(res.data, name).toBeNull()
      expect(res.errors, name).toEqual([
        expect.objectContaining({
          message: expect.stringMatching(message),
          extensions: { code: 'BAD_REQUEST' },
          path: ['contactsConnection'],
        }),
      ])
    }
    const garbage = await kit.graphql(graphql(`{ node(id: "definitely not an id") { id } }`), {}, s.key)
    expect(garbage.errors).toEqual([
      expect.objectContaining({ message: 'definitely not an id is not a global id', extensions: { code: 'BAD_REQUEST' } }),
    ])
    const tooMany = await kit.graphql(
      graphql(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`),
      { ids: Array.from({ length: 101 }, () => encodeNodeId('Group', s.group.id)) },
      s.key,
    )
    expect(tooMany.errors?.[0]).toMatchObject({ message: 'ids: at most 100 ids', extensions: { code: 'BAD_REQUEST' } })
    // A program id beyond 32 bits, or an id with NUL, names nothing.
    expect(
      await kit.graphql(graphql(`query($id: ID!) { node(id: $id) { id } }`), { id: Buffer.from('Program:99999999999').toString('base64') }),
    ).toEqual({ data: { node: null } })
  })

  it('reads a page and its relations in a fixed number of statements, whatever the page size, and counts only when asked', async () => {
    const s = await kit.seed().account().group({ name: 'Rel' }).contacts(30)
    const query = (n: number, total: boolean) =>
      `{ contactsConnection(first: ${n}) { ${total ? 'totalCount' : ''} edges { cursor node { id uuid firstName groups { uuid name } selfSubscribed } } pageInfo { hasNextPage endCursor } } }`
    const count = async (q: string) => {
      await kit.gql(q, {}, s.key) // warms the API key cache
      await kit.deps.apiKeyCache.idle() // and lets its lastUsedAt write (off the request's path) finish before counting
      kit.statements.length = 0
      await kit.gql(q, {}, s.key)
      return kit.statements.length
    }
    const small = await count(query(5, false))
    const big = await count(query(30, false))
    expect(big).toBe(small)
    expect(await count(query(30, true))).toBe(big + 1)
    const listTotal = kit.statements.filter((sql) => /ListTotal/.test(sql))
    expect(listTotal).toHaveLength(1)
    // Paging on from a cursor: whether rows come before it is one more read, only when asked.
    const after = (await kit.gql(query(5, false), {}, s.key)).contactsConnection.pageInfo.endCursor
    const from = (flag: string) =>
      `{ contactsConnection(first: 5, after: "${after}") { edges { node { uuid } } pageInfo { endCursor ${flag} } } }`
    const without = await count(from(''))
    expect(await count(from('hasPreviousPage'))).toBe(without + 1)
  })

  it('costs a connection by its page size: edges times first or last, totalCount and pageInfo once', () => {
    const cost = (q: string) => {
      const document = parse(q)
      return measureOperation(schema, new Map(), document.definitions[0] as never).cost
    }
    // 1 (connection) + totalCount 1 + edges (1 + 10 * (node 1 + uuid 1)) + pageInfo (1 + 1)
    expect(cost('{ contactsConnection(first: 10) { totalCount edges { node { uuid } } pageInfo { hasNextPage } } }')).toBe(
      1 + 1 + (1 + 10 * 2) + 2,
    )
    expect(cost('{ contactsConnection(last: 7) { edges { node { uuid } } } }')).toBe(1 + 1 + 7 * 2)
    expect(cost('{ contactsConnection { edges { node { uuid } } } }')).toBe(1 + 1 + 25 * 2) // the default page
    expect(cost('query($n: Int) { contactsConnection(first: $n) { edges { node { uuid } } } }')).toBe(1 + 1 + 100 * 2) // a variable: the maximum
    // Nested: a group page of 100, each with a contact page of 100, goes over the limit like nested offset pages.
    expect(
      cost('{ groupsConnection(first: 100) { edges { node { contactsConnection(first: 100) { edges { node { uuid } } } } } } }'),
    ).toBeGreaterThan(10_000)
    expect(cost('query($ids: [ID!]!) { nodes(ids: $ids) { id } }')).toBe(1 + 100)
    expect(cost('{ nodes(ids: ["a", "b"]) { id } }')).toBe(1 + 2)
  })
})
