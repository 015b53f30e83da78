// Ordering and filters of the GraphQL lists and connections (issue 55, item 2): every order walks
// every page in the order the database itself gives (Prisma's findMany with that ORDER BY), a
// cursor is good only under its own order, bad filters are refused, and each order's page reads
// its index: no sort of the table, no full scan (EXPLAIN QUERY PLAN on SQLite; EXPLAIN with
// enable_seqscan off on PostgreSQL).
import { describe, expect, it } from 'vitest'
import Database from 'better-sqlite3'
import { targets, schemaClient } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { mobile, sentMessageRow, type Seeded } from './kit/seed.js'
import {
  CONTACT_ORDERS,
  contactSort,
  listContactsInOrder,
  orderedListStatement,
  type ContactOrder,
} from '../src/messaging/contact-orders.js'
import { pageRequest } from '../src/messaging/paging.js'

type Edge = { cursor: string; node: { uuid: string } }
type Connection = {
  totalCount: number
  edges: Edge[]
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; endCursor: string; startCursor: string }
}

const CONTACTS = `query($first: Int, $after: String, $last: Int, $before: String, $orderBy: ContactOrderBy, $search: String) {
  contactsConnection(first: $first, after: $after, last: $last, before: $before, orderBy: $orderBy, search: $search) {
    totalCount edges { cursor node { uuid } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`
const GROUP_CONTACTS = `query($id: ID!, $first: Int, $after: String, $orderBy: ContactOrderBy) {
  group(id: $id) { contactsConnection(first: $first, after: $after, orderBy: $orderBy) {
    totalCount edges { cursor node { uuid } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  } }
}`
const CONTACT_PAGES = `query($page: Int, $perPage: Int, $orderBy: ContactOrderBy, $search: String) {
  contacts(page: $page, perPage: $perPage, orderBy: $orderBy, search: $search) { nodes { uuid } pageInfo { total } }
}`

/** Every node of a connection, walked forward `first` at a time, or backward `last` at a time (then in the connection's order). */
async function walk(read: (variables: Record<string, unknown>) => Promise<Connection>, size: number, backward = false) {
  const seen: string[] = []
  let cursor: string | null = null
  for (let pages = 0; pages < 100; pages++) {
    const page: Connection = await read(backward ? { last: size, before: cursor } : { first: size, after: cursor })
    const ids = page.edges.map((e) => e.node.uuid)
    if (backward) seen.unshift(...ids)
    else seen.push(...ids)
    if (!(backward ? page.pageInfo.hasPreviousPage : page.pageInfo.hasNextPage)) return seen
    cursor = backward ? page.pageInfo.startCursor : page.pageInfo.endCursor
  }
  throw new Error('more than 100 pages')
}

/** Tests that walk many pages (or seed thousands of rows) on a shared, loaded machine. */
const SLOW = 240_000

describe.each(targets)('list orders and filters on $name', (target) => {
  const kit = useKit(target)

  /** The account's contacts (a group's members) as the database orders them. */
  const databaseOrder = async (accountId: string, order: ContactOrder, where: Record<string, unknown> = {}) => {
    const { keys, descending } = contactSort(order)
    const rows = await kit.db.contact.findMany({
      where: { accountId, ...where },
      orderBy: keys.map((key) => ({ [key]: descending ? 'desc' : 'asc' })),
      select: { id: true },
    })
    return rows.map((r) => r.id)
  }

  /** 23 contacts with tied names and tied times, so the later keys decide much of each order. */
  const seedContacts = async () => {
    const s = await kit
      .seed()
      .account()
      .group()
      .contacts(23, (i) => ({ firstName: ['amani', 'baraka', 'chidi'][i % 3]!, familyName: i % 2 ? 'otieno' : 'wanjiru' }))
    // Times of their own, in pairs (ties), not in the order of creation.
    for (const [i, c] of s.contacts.entries()) {
      await kit.db.contact.update({
        where: { id: c.id },
        data: {
          createdAt: new Date(Date.UTC(2026, 0, 1 + (((i * 7) % 23) >> 1))),
          updatedAt: new Date(Date.UTC(2026, 5, 1 + ((i * 5) % 11))),
        },
      })
    }
    // Every other contact leaves the group: its list is a part of the account's.
    await kit.db.membership.deleteMany({
      where: { groupId: s.group.id, contactId: { in: s.contacts.filter((_, i) => i % 2).map((c) => c.id) } },
    })
    return s
  }

  it(
    'walks every contact order forward and backward, in the database order, the account and a group',
    async () => {
      const s = await seedContacts()
      for (const orderBy of CONTACT_ORDERS) {
        const expected = await databaseOrder(s.account.id, orderBy)
        const read = async (variables: Record<string, unknown>) =>
          (await kit.gql(CONTACTS, { ...variables, orderBy }, s.key)).contactsConnection
        expect(await walk(read, 4), orderBy).toEqual(expected)
        expect(await walk(read, 5, true), `${orderBy} backward`).toEqual(expected)
        const members = await databaseOrder(s.account.id, orderBy, { memberships: { some: { groupId: s.group.id } } })
        const readGroup = async (variables: Record<string, unknown>) =>
          (await kit.gql(GROUP_CONTACTS, { ...variables, id: s.group.id, orderBy }, s.key)).group.contactsConnection
        expect(await walk(readGroup, 3), `${orderBy} in the group`).toEqual(members)
        expect((await readGroup({ first: 1 })).totalCount).toBe(members.length)
      }
    },
    SLOW,
  )

  it(
    'pages every contact order by number, from either end of the list, the account and a group, with and without a search',
    async () => {
      const s = await seedContacts()
      const groupWhere = { memberships: { some: { groupId: s.group.id } } }
      for (const orderBy of CONTACT_ORDERS) {
        const expected = await databaseOrder(s.account.id, orderBy)
        const pages: string[] = []
        for (let page = 1; page <= 5; page++) {
          const answer = (await kit.gql(CONTACT_PAGES, { page, perPage: 5, orderBy }, s.key)).contacts
          expect(answer.pageInfo.total).toBe(23)
          pages.push(...answer.nodes.map((n: { uuid: string }) => n.uuid))
        }
        expect(pages, orderBy).toEqual(expected)
        if (orderBy === 'NAME_ASC') continue
        // The walk from the far end (pages past the middle), which GraphQL takes only past 1,000 rows.
        for (const [groupId, list] of [
          [undefined, expected],
          [s.group.id, await databaseOrder(s.account.id, orderBy, groupWhere)],
        ] as const) {
          const walked: string[] = []
          for (let page = 1; page <= 5; page++) {
            const { rows, total } = await listContactsInOrder(
              kit.deps,
              { accountId: s.account.id, groupId, request: pageRequest({ page, perPage: 5 }), forwardOnlyUpTo: 0 },
              ['id'],
              orderBy,
            )
            expect(total).toBe(list.length)
            walked.push(...rows.map((r) => r.id as string))
          }
          expect(walked, `${orderBy} from either end${groupId ? ', the group' : ''}`).toEqual(list)
        }
        // A search: the matches in the order.
        const matches = await databaseOrder(s.account.id, orderBy, { searchText: { contains: 'otieno' } })
        const searched = (await kit.gql(CONTACT_PAGES, { page: 2, perPage: 4, orderBy, search: 'Otieno' }, s.key)).contacts
        expect(searched.pageInfo.total).toBe(matches.length)
        expect(
          searched.nodes.map((n: { uuid: string }) => n.uuid),
          `${orderBy} searched`,
        ).toEqual(matches.slice(4, 8))
        const connection = async (variables: Record<string, unknown>) =>
          (await kit.gql(CONTACTS, { ...variables, orderBy, search: 'otieno' }, s.key)).contactsConnection
        expect(await walk(connection, 4), `${orderBy} searched, the connection`).toEqual(matches)
      }
    },
    SLOW,
  )

  it('keeps the default order and its cursors without orderBy, and refuses a cursor made under another order', async () => {
    const s = await seedContacts()
    const plain = (await kit.gql(CONTACTS, { first: 3 }, s.key)).contactsConnection as Connection
    const named = (await kit.gql(CONTACTS, { first: 3, orderBy: 'NAME_ASC' }, s.key)).contactsConnection as Connection
    expect(named).toEqual(plain)
    expect(plain.edges.map((e) => e.node.uuid)).toEqual((await databaseOrder(s.account.id, 'NAME_ASC')).slice(0, 3))
    const byMobile = (await kit.gql(CONTACTS, { first: 3, orderBy: 'MOBILE_ASC' }, s.key)).contactsConnection as Connection
    for (const [cursor, orderBy] of [
      [plain.pageInfo.endCursor, 'MOBILE_ASC'],
      [byMobile.pageInfo.endCursor, undefined],
      [byMobile.pageInfo.endCursor, 'MOBILE_DESC'],
      [byMobile.pageInfo.endCursor, 'CREATED_AT_ASC'],
    ] as const) {
      const answer = await kit.graphql(CONTACTS, { first: 3, after: cursor, orderBy }, s.key)
      expect(answer.errors?.[0]?.extensions.code, String(orderBy)).toBe('BAD_REQUEST')
      expect(answer.errors?.[0]?.message).toBe(
        'after is a cursor of another orderBy: use it with the orderBy it came from, or start without a cursor',
      )
    }
    const before = await kit.graphql(CONTACTS, { last: 3, before: plain.pageInfo.startCursor, orderBy: 'UPDATED_AT_DESC' }, s.key)
    expect(before.errors?.[0]?.message).toMatch(/^before is a cursor of another orderBy/)
    // A cursor of another connection is still no cursor of this one.
    const groups = await kit.gql(`query { groupsConnection(first: 1) { pageInfo { endCursor } } }`, {}, s.key)
    const foreign = await kit.graphql(
      CONTACTS,
      { first: 1, after: groups.groupsConnection.pageInfo.endCursor, orderBy: 'MOBILE_ASC' },
      s.key,
    )
    expect(foreign.errors?.[0]?.message).toBe('after is not a cursor of this connection')
  })

  it(
    'orders groups by name and by size, the size kept by the database as members come and go',
    async () => {
      const s = await kit.seed().account().group({ name: 'beta' }).contacts(4).group({ name: 'Alpha' }).contacts(2).group({ name: 'gamma' })
      const [beta, alpha, gamma] = s.groups
      const sizes = async () =>
        Object.fromEntries((await kit.db.group.findMany({ where: { accountId: s.account.id } })).map((g) => [g.name, g.memberCount]))
      expect(await sizes()).toEqual({ beta: 4, Alpha: 2, gamma: 0 })
      // Enlisted by add-contacts (existing and new), delisted, and a member deleted.
      const added = await kit.gql(
        `mutation($g: ID!, $c: [SaveContactInput!]!) { addContactsToGroup(groupId: $g, contacts: $c) { enlisted } }`,
        {
          g: gamma!.id,
          c: [...s.contacts.slice(0, 4), { mobile: mobile() }, { mobile: mobile() }].map((c) => ({ mobile: c.mobile, firstName: 'x' })),
        },
        s.key,
      )
      expect(added.addContactsToGroup.enlisted).toBe(6)
      await kit.gql(
        `mutation($g: ID!, $m: [String!]!) { delistContacts(groupId: $g, mobiles: $m) { delisted } }`,
        { g: beta!.id, m: [s.contacts[0]!.mobile] },
        s.key,
      )
      await kit.gql(`mutation($id: ID!) { deleteContact(id: $id) { deletedId } }`, { id: s.contacts[4]!.id }, s.key)
      expect(await sizes()).toEqual({ beta: 3, Alpha: 1, gamma: 6 })
      const names = async (orderBy: string) => {
        const pages = (
          await kit.gql(`query($o: GroupOrderBy) { groups(orderBy: $o) { nodes { name contactCount } } }`, { o: orderBy }, s.key)
        ).groups
        const connection = async (variables: Record<string, unknown>) =>
          (
            await kit.gql(
              `query($first: Int, $after: String, $last: Int, $before: String, $o: GroupOrderBy) {
          groupsConnection(first: $first, after: $after, last: $last, before: $before, orderBy: $o) { edges { cursor node { uuid name } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }
        }`,
              { ...variables, o: orderBy },
              s.key,
            )
          ).groupsConnection
        const byName = new Map([beta, alpha, gamma].map((g) => [g!.id, g!.name]))
        expect((await walk(connection, 1)).map((id) => byName.get(id))).toEqual(pages.nodes.map((n: { name: string }) => n.name))
        expect((await walk(connection, 2, true)).map((id) => byName.get(id))).toEqual(pages.nodes.map((n: { name: string }) => n.name))
        return pages.nodes.map((n: { name: string; contactCount: number }) => `${n.name} ${n.contactCount}`)
      }
      expect(await names('NAME_ASC')).toEqual(['Alpha 1', 'beta 3', 'gamma 6'])
      expect(await names('NAME_DESC')).toEqual(['gamma 6', 'beta 3', 'Alpha 1'])
      expect(await names('SIZE_ASC')).toEqual(['Alpha 1', 'beta 3', 'gamma 6'])
      expect(await names('SIZE_DESC')).toEqual(['gamma 6', 'beta 3', 'Alpha 1'])
      // Deleting a group takes its members; the others' sizes stay.
      await kit.gql(`mutation($id: ID!) { deleteGroup(id: $id) { deletedId } }`, { id: gamma!.id }, s.key)
      expect(await sizes()).toEqual({ beta: 3, Alpha: 1 })
    },
    SLOW,
  )

  /** Messages at their own times and statuses (ties on both), written straight to the table. */
  const seedMessages = async (s: Seeded) => {
    const statuses = ['DELIVRD', 'SENT', 'FAILED', 'UNDELIV', 'SENT', 'DELIVRD']
    for (let i = 0; i < 14; i++) {
      const at = new Date(Date.UTC(2026, 2, 1 + (i >> 1), 9))
      await kit.db.message.create({ data: { ...sentMessageRow(s.account.id, at), createdAt: at, status: statuses[i % statuses.length]! } })
    }
  }
  const MESSAGES = `query($first: Int, $after: String, $last: Int, $before: String, $orderBy: SentMessageOrderBy, $filter: SentMessageFilter, $status: DeliveryStatus) {
    messagesConnection(first: $first, after: $after, last: $last, before: $before, orderBy: $orderBy, filter: $filter, status: $status) {
      totalCount edges { cursor node { uuid } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }`

  it(
    'orders and filters sent messages: by sent time and by status, a set of statuses and a time window',
    async () => {
      const s = await kit.seed().account()
      await seedMessages(s)
      const expected = async (orderBy: Record<string, 'asc' | 'desc'>[], where: Record<string, unknown> = {}) =>
        (await kit.db.message.findMany({ where: { accountId: s.account.id, ...where }, orderBy, select: { id: true } })).map((m) => m.id)
      const orders = {
        SENT_AT_DESC: [{ createdAt: 'desc' }, { id: 'desc' }],
        SENT_AT_ASC: [{ createdAt: 'asc' }, { id: 'asc' }],
        STATUS_ASC: [{ status: 'asc' }, { createdAt: 'asc' }, { id: 'asc' }],
        STATUS_DESC: [{ status: 'desc' }, { createdAt: 'desc' }, { id: 'desc' }],
      } as const
      const window = { from: '2026-03-03T09:00:00.000Z', before: '2026-03-06T09:00:00.000Z' }
      const where = { status: { in: ['SENT', 'DELIVRD'] }, createdAt: { gte: new Date(window.from), lt: new Date(window.before) } }
      for (const [orderBy, prismaOrder] of Object.entries(orders)) {
        const read = (filter?: unknown) => async (variables: Record<string, unknown>) =>
          (await kit.gql(MESSAGES, { ...variables, orderBy, filter }, s.key)).messagesConnection
        expect(await walk(read(), 4), orderBy).toEqual(await expected([...prismaOrder]))
        expect(await walk(read(), 3, true), `${orderBy} backward`).toEqual(await expected([...prismaOrder]))
        const filtered = await expected([...prismaOrder], where)
        expect(filtered.length).toBeGreaterThan(2)
        expect(await walk(read({ status: ['SENT', 'DELIVRD', 'SENT'], sentAt: window }), 2), `${orderBy} filtered`).toEqual(filtered)
        expect((await read({ status: ['SENT', 'DELIVRD'], sentAt: window })({ first: 1 })).totalCount).toBe(filtered.length)
      }
      // One end of the window alone; and the old single status with a set: both hold.
      const since = (await kit.gql(MESSAGES, { first: 50, filter: { sentAt: { from: window.from } } }, s.key)).messagesConnection
      expect(since.edges.map((e: Edge) => e.node.uuid)).toEqual(
        await expected([...orders.SENT_AT_DESC], { createdAt: { gte: new Date(window.from) } }),
      )
      const both = (await kit.gql(MESSAGES, { first: 50, status: 'SENT', filter: { status: ['SENT', 'FAILED'] } }, s.key))
        .messagesConnection
      expect(both.edges.map((e: Edge) => e.node.uuid)).toEqual(await expected([...orders.SENT_AT_DESC], { status: 'SENT' }))
      // The default order's cursors are the ones of before orderBy; another order's are refused.
      const first = (await kit.gql(MESSAGES, { first: 2 }, s.key)).messagesConnection
      expect((await kit.gql(MESSAGES, { first: 2, orderBy: 'SENT_AT_DESC' }, s.key)).messagesConnection).toEqual(first)
      const refused = await kit.graphql(MESSAGES, { first: 2, after: first.pageInfo.endCursor, orderBy: 'STATUS_ASC' }, s.key)
      expect(refused.errors?.[0]?.extensions.code).toBe('BAD_REQUEST')
    },
    SLOW,
  )

  it('refuses a filter that can match nothing, naming the field, and changes nothing', async () => {
    const s = await kit.seed().account()
    const cases = [
      [MESSAGES, { first: 1, filter: { status: [] } }, 'filter.status', 'filter.status must name at least one value'],
      [
        MESSAGES,
        { first: 1, filter: { sentAt: { from: '2026-03-02T00:00:00Z', before: '2026-03-01T00:00:00Z' } } },
        'filter.sentAt',
        'filter.sentAt: from must be earlier than before',
      ],
      [
        MESSAGES,
        { first: 1, filter: { sentAt: { from: '2026-03-01T00:00:00Z', before: '2026-03-01T00:00:00Z' } } },
        'filter.sentAt',
        'filter.sentAt: from must be earlier than before',
      ],
      [
        `query($filter: WebhookDeliveryFilter) { webhookDeliveries(filter: $filter) { id } }`,
        { filter: { state: [] } },
        'filter.state',
        'filter.state must name at least one value',
      ],
      [
        `query($filter: WebhookDeliveryFilter) { webhookDeliveriesConnection(first: 1, filter: $filter) { totalCount } }`,
        { filter: { createdAt: { from: '2026-03-02T00:00:00Z', before: '2026-03-01T00:00:00Z' } } },
        'filter.createdAt',
        'filter.createdAt: from must be earlier than before',
      ],
    ] as const
    for (const [document, variables, field, message] of cases) {
      const answer = await kit.graphql(document, variables, s.key)
      expect(answer.data ?? null, field).toBeNull()
      expect(answer.errors?.[0]?.extensions.code).toBe('VALIDATION_FAILED')
      expect(answer.errors?.[0]?.extensions.details).toEqual([{ field, message }])
    }
    // Not a status, not a time: GraphQL's own refusal.
    const bad = await kit.graphql(MESSAGES, { first: 1, filter: { status: ['NOPE'], sentAt: { from: 'yesterday' } } }, s.key)
    expect(bad.errors?.length).toBeGreaterThan(0)
    expect(await kit.db.message.count({ where: { accountId: s.account.id } })).toBe(0)
  })

  it(
    'orders and filters webhook deliveries, the list and the connection',
    async () => {
      const s = await kit.seed().account()
      const states = ['pending', 'delivered', 'failed', 'delivered']
      for (let i = 0; i < 11; i++) {
        const at = new Date(Date.UTC(2026, 3, 1 + (i >> 1)))
        await kit.db.webhookDelivery.create({
          data: {
            id: `msg_${String(i).padStart(3, '0')}_${s.account.id.slice(0, 8)}`,
            accountId: s.account.id,
            body: '{}',
            state: states[i % 4]!,
            nextAttemptAt: at,
            createdAt: at,
          },
        })
      }
      const expected = async (direction: 'asc' | 'desc', where: Record<string, unknown> = {}) =>
        (
          await kit.db.webhookDelivery.findMany({
            where: { accountId: s.account.id, ...where },
            orderBy: [{ createdAt: direction }, { id: direction }],
            select: { id: true },
          })
        ).map((d) => d.id)
      const window = { from: '2026-04-02T00:00:00.000Z', before: '2026-04-05T00:00:00.000Z' }
      const where = { state: { in: ['delivered', 'failed'] }, createdAt: { gte: new Date(window.from), lt: new Date(window.before) } }
      const filter = { state: ['DELIVERED', 'FAILED'], createdAt: window }
      for (const [orderBy, direction] of [
        ['CREATED_AT_DESC', 'desc'],
        ['CREATED_AT_ASC', 'asc'],
        [undefined, 'desc'],
      ] as const) {
        const list = (f?: unknown) =>
          kit
            .gql(
              `query($o: WebhookDeliveryOrderBy, $f: WebhookDeliveryFilter) { webhookDeliveries(orderBy: $o, filter: $f) { id } }`,
              { o: orderBy, f },
              s.key,
            )
            .then((d) => d.webhookDeliveries.map((w: { id: string }) => w.id))
        expect(await list(), String(orderBy)).toEqual(await expected(direction))
        expect(await list(filter), `${orderBy} filtered`).toEqual(await expected(direction, where))
        const connection = (f?: unknown) => async (variables: Record<string, unknown>) =>
          (
            await kit.gql(
              `query($first: Int, $after: String, $last: Int, $before: String, $o: WebhookDeliveryOrderBy, $f: WebhookDeliveryFilter) {
              webhookDeliveriesConnection(first: $first, after: $after, last: $last, before: $before, orderBy: $o, filter: $f) {
                totalCount edges { cursor node { uuid: id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
              }
            }`,
              { ...variables, o: orderBy, f },
              s.key,
            )
          ).webhookDeliveriesConnection
        expect(await walk(connection(), 3), String(orderBy)).toEqual(await expected(direction))
        expect(await walk(connection(filter), 1, true), `${orderBy} filtered, backward`).toEqual(await expected(direction, where))
      }
    },
    SLOW,
  )

  // ------------------------------------------------------------------ query plans

  /** The plan of a statement as its lines (SQLite's details; PostgreSQL's nodes, seq scans off). */
  async function plan(sql: string, params: unknown[]): Promise<string[]> {
    if (target.name === 'sqlite') {
      const db = new Database(kit.url.slice('file:'.length), { readonly: true })
      try {
        return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail)
      } finally {
        db.close()
      }
    }
    const client = await schemaClient(kit.url)
    try {
      await client.query('SET enable_seqscan = off')
      const { rows } = await client.query(`EXPLAIN ${sql}`, params)
      return rows.map((r: Record<string, string>) => r['QUERY PLAN']!)
    } finally {
      await client.end()
    }
  }
  const TABLES = 'Contact|Group|Message|WebhookDelivery|Membership'
  /** A sort of the table's rows or a full scan of it: what no order's page may need. */
  const sortsOrScans = (lines: string[]) =>
    lines.filter((line) =>
      target.name === 'sqlite'
        ? /USE TEMP B-TREE FOR (.*)ORDER BY/.test(line) ||
          new RegExp(`^SCAN [\`"]?(main[\`"]?\\.)?[\`"]?(${TABLES})[\`"]?( AS \\w+)?$`).test(line)
        : /\bSort\b/.test(line) || /Seq Scan/.test(line),
    )

  /** The statements Prisma sends while `run` runs, with their parameters. */
  async function prismaStatements(run: () => Promise<unknown>) {
    const seen: { query: string; params: string }[] = []
    let on = true
    ;(kit.db as unknown as { $on(e: 'query', cb: (ev: { query: string; params: string }) => void): void }).$on('query', (event) => {
      if (on) seen.push(event)
    })
    try {
      await run()
    } finally {
      on = false
    }
    return seen.map((s) => ({ sql: s.query, params: JSON.parse(s.params) as unknown[] }))
  }

  it(
    'reads each order of each list through its index: no sort and no full scan of the table',
    async () => {
      const s = await kit
        .seed()
        .account()
        .group()
        .contacts(3000, (i) => ({ firstName: `n${(i * 37) % 3000}` }))
      // Enough rows that a page is a small part of each list, as in a real account.
      const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 60_000)
      await kit.db.message.createMany({
        data: Array.from({ length: 2000 }, (_, i) => ({
          ...sentMessageRow(s.account.id, at(i)),
          createdAt: at(i),
          status: ['SENT', 'DELIVRD', 'FAILED'][i % 3]!,
        })),
      })
      await kit.db.webhookDelivery.createMany({
        data: Array.from({ length: 2000 }, (_, i) => ({
          id: `d${i}-${s.account.id}`,
          accountId: s.account.id,
          body: '{}',
          nextAttemptAt: at(i),
          createdAt: at(i),
        })),
      })
      for (let i = 0; i < 30; i++) await kit.seed().account(`other ${i}`).group()
      if (target.name === 'postgresql') {
        const client = await schemaClient(kit.url)
        await client.query('ANALYZE')
        await client.end()
      }
      const documents: [string, string, Record<string, unknown>][] = []
      for (const orderBy of CONTACT_ORDERS.filter((o) => o !== 'NAME_ASC'))
        documents.push([
          `contacts ${orderBy}`,
          `query($o: ContactOrderBy, $a: String) { contactsConnection(first: 25, after: $a, orderBy: $o) { pageInfo { endCursor } edges { node { firstName } } } }`,
          { o: orderBy },
        ])
      for (const orderBy of ['NAME_ASC', 'NAME_DESC', 'SIZE_ASC', 'SIZE_DESC'])
        documents.push([
          `groups ${orderBy}`,
          `query($o: GroupOrderBy, $a: String) { groupsConnection(first: 25, after: $a, orderBy: $o) { pageInfo { endCursor } edges { node { name } } } }`,
          { o: orderBy },
        ])
      for (const orderBy of ['SENT_AT_DESC', 'SENT_AT_ASC', 'STATUS_ASC', 'STATUS_DESC'])
        documents.push([
          `messages ${orderBy}`,
          `query($o: SentMessageOrderBy, $a: String) { messagesConnection(first: 5, after: $a, orderBy: $o) { pageInfo { endCursor } edges { node { to } } } }`,
          { o: orderBy },
        ])
      for (const orderBy of ['CREATED_AT_DESC', 'CREATED_AT_ASC'])
        documents.push([
          `deliveries ${orderBy}`,
          `query($o: WebhookDeliveryOrderBy, $a: String) { webhookDeliveriesConnection(first: 25, after: $a, orderBy: $o) { pageInfo { endCursor } edges { node { id } } } }`,
          { o: orderBy },
        ])
      const problems: string[] = []
      for (const [name, document, variables] of documents) {
        // The first page, then the next from its cursor: both statements' plans.
        let after: string | null = null
        const statements = await prismaStatements(async () => {
          for (let page = 0; page < 2; page++) {
            const data = await kit.gql(document, { ...variables, a: after }, s.key)
            after = (Object.values(data)[0] as { pageInfo: { endCursor: string } }).pageInfo.endCursor
          }
        })
        expect(statements.length, name).toBeGreaterThanOrEqual(2)
        for (const { sql, params } of statements) {
          const lines = await plan(sql, params)
          if (sortsOrScans(lines).length) problems.push(`${name}: ${sql}\n  ${lines.join('\n  ')}`)
        }
      }
      // The numbered pages of the contacts under each order: the walk of the order's index, forward and from the far end.
      for (const orderBy of CONTACT_ORDERS.filter((o) => o !== 'NAME_ASC')) {
        for (const page of [2, 100]) {
          const statement = orderedListStatement(
            target.name,
            { accountId: s.account.id, request: pageRequest({ page, perPage: 25 }), forwardOnlyUpTo: 0 },
            ['id', 'firstName'],
            orderBy,
          )
          const lines = await plan(target.name === 'sqlite' ? statement.sql : statement.text, statement.values)
          // The page's 25 rows are put in order at the end: that sort is of the page, not the table.
          const walks = target.name === 'sqlite' ? lines.slice(0, -1) : lines[0]!.startsWith('Sort') ? lines.slice(2) : lines
          if (sortsOrScans(walks).length) problems.push(`contacts page ${page} ${orderBy}: \n  ${lines.join('\n  ')}`)
        }
      }
      expect(problems).toEqual([])
    },
    SLOW,
  )
})
