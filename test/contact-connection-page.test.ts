// The contacts connection's page read directly (src/messaging/contact-connection-page.ts): for an
// account's contacts and a group's members, with and without a search too short for the search
// index, from either cursor, both or none, in both reading directions, it must answer exactly the
// rows of Prisma's findMany for the same filter, cursor bound, order and size (what the connection
// read before), and a connection whose nodes select columns only must read its page that way.
import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { parseContacts } from '../src/messaging/contacts.js'
import { upsertContacts } from '../src/messaging/upsert-contacts.js'
import { contactListWhere, type ContactListColumn } from '../src/messaging/contact-list.js'
import { connectionPageRows, contactsByIds, rowAtOrBehind } from '../src/messaging/contact-connection-page.js'
import { createGroup } from '../src/messaging/groups.js'
import { createAccount } from '../src/accounts/create-account.js'
import { encodeCursor, keysetConnection, planKeysetPage, type ConnectionArgs } from '../src/graphql/keyset.js'
import { CONTACT_ORDER } from '../src/graphql/types/messaging-contacts.js'

const COLUMNS: ContactListColumn[] = ['id', 'firstNameKey', 'familyNameKey', 'firstName', 'otherNames', 'createdAt']

describe.each(targets)('the contacts connection page read directly on $name', (target) => {
  const kit = useKit(target)

  /** 36 contacts with many tied names (the id decides), case and accents apart; every third on a group; another account's alike. */
  async function seeded() {
    const { account, apiKey } = await createAccount(kit.deps, { name: 'Connection' })
    const { group } = await createGroup(kit.deps, account.id, { name: 'Thirds' })
    const names = ['Amani', 'amani', 'Ämani', 'Baraka', 'baraka', 'Zed']
    const inputs = (prefix: string) =>
      Array.from({ length: 36 }, (_, i) => ({
        mobile: `+25479${prefix}${String(i).padStart(5, '0')}`,
        firstName: names[i % names.length]!,
        familyName: i % 4 ? 'Otieno' : '',
        otherNames: i % 5 ? undefined : `Note ${i}`,
      }))
    const parsed = parseContacts(inputs('71'), 'KE')
    const { saved } = await upsertContacts(kit.deps, account.id, parsed)
    await upsertContacts(
      kit.deps,
      account.id,
      parsed.filter((_, i) => i % 3 === 0),
      group.id,
    )
    const other = await createAccount(kit.deps, { name: 'Other' })
    await upsertContacts(kit.deps, other.account.id, parseContacts(inputs('72'), 'KE'))
    return { accountId: account.id, groupId: group.id, apiKey, ids: saved.map((c) => c.id), otherId: other.account.id }
  }

  /** Prisma's page, as the connection read it before. */
  async function reference(list: { accountId: string; groupId?: string }, searchKey: string, args: ConnectionArgs) {
    const plan = planKeysetPage(CONTACT_ORDER, args)
    const rows = await kit.db.contact.findMany({
      where: { AND: [contactListWhere(list.accountId, { searchKey }, list.groupId), plan.query.where] },
      orderBy: plan.query.orderBy,
      take: plan.query.take,
      select: Object.fromEntries(COLUMNS.map((c) => [c, true])),
    })
    return { plan, rows }
  }

  it('answers every page as findMany does: an account’s and a group’s, searched or not, from any cursor, both ways', async () => {
    const { accountId, groupId } = await seeded()
    let compared = 0
    for (const list of [{ accountId }, { accountId, groupId }]) {
      for (const searchKey of ['', 'a', 'ot', 'oti', 'zz']) {
        const all = (await reference(list, searchKey, { first: 100 })).rows
        const cursor = (i: number) => encodeCursor(CONTACT_ORDER, all[i]!)
        const cases: ConnectionArgs[] = [{ first: 5 }, { first: 100 }, { last: 3 }, { last: 100 }, { first: 0 }, {}]
        for (let i = 0; i < all.length; i += 3) {
          cases.push({ first: 4, after: cursor(i) }, { last: 4, before: cursor(i) })
          if (i + 4 < all.length)
            cases.push({ first: 10, after: cursor(i), before: cursor(i + 4) }, { last: 2, after: cursor(i), before: cursor(i + 4) })
        }
        for (const args of cases) {
          const { plan, rows } = await reference(list, searchKey, args)
          const [from = null, until = null] = (plan.backward ? [plan.before, plan.after] : [plan.after, plan.before]) as (string[] | null)[]
          const page = { ...list, searchKey, from, until, backward: plan.backward, take: plan.query.take }
          expect(await connectionPageRows(kit.deps, page, COLUMNS), `${JSON.stringify({ ...list, searchKey, args })}`).toEqual(rows)
          compared += rows.length
        }
      }
    }
    // The cases are not all empty: the group holds a third, the searches match some.
    expect(compared).toBeGreaterThan(1000)
  })

  it('tells whether a row lies at or behind a cursor as Prisma’s findFirst does, for cursors in the list, outside it and past either end', async () => {
    const { accountId, groupId } = await seeded()
    // Every row of the account: each is in some lists and not in others (the group, the searches).
    const everyone = (await reference({ accountId }, '', { first: 100 })).rows
    const positions = [
      ...everyone.map((row) => encodeCursor(CONTACT_ORDER, row)),
      encodeCursor(CONTACT_ORDER, { firstNameKey: '', familyNameKey: '', id: '' }),
      encodeCursor(CONTACT_ORDER, { firstNameKey: 'zzzz', familyNameKey: '', id: '' }),
    ]
    const answers = { true: 0, false: 0 }
    for (const list of [{ accountId }, { accountId, groupId }]) {
      for (const searchKey of ['', 'a', 'zed', 'zz']) {
        for (const cursor of positions) {
          for (const args of [
            { first: 2, after: cursor },
            { last: 2, before: cursor },
          ]) {
            // The connection's flag as it read it before: findFirst over the list's filter and the bound.
            const plan = planKeysetPage(CONTACT_ORDER, args)
            const { pageInfo } = keysetConnection(
              plan,
              [],
              async (where) =>
                (await kit.db.contact.findFirst({
                  where: { AND: [contactListWhere(list.accountId, { searchKey }, list.groupId), where] },
                  select: { id: true },
                })) !== null,
            )
            const expected = await (plan.backward ? pageInfo.hasNextPage : pageInfo.hasPreviousPage)
            const start = (plan.backward ? plan.before : plan.after) as string[]
            const found = await rowAtOrBehind(kit.deps, { ...list, searchKey }, start, plan.backward)
            expect(found, JSON.stringify({ ...list, searchKey, args, start })).toBe(expected)
            answers[`${found}`] += 1
          }
        }
      }
    }
    // Both answers are exercised, many times.
    expect(answers.true).toBeGreaterThan(100)
    expect(answers.false).toBeGreaterThan(50)
  })

  it('reads the account’s contacts by id in the order given, leaving out unknown ids and another account’s', async () => {
    const { accountId, ids, otherId } = await seeded()
    const others = await kit.db.contact.findMany({ where: { accountId: otherId }, select: { id: true }, take: 2 })
    const asked = [ids[7]!, others[0]!.id, ids[2]!, 'no-such-contact', ids[30]!, others[1]!.id]
    const rows = await contactsByIds(kit.deps, accountId, asked, COLUMNS)
    expect(rows.map((r) => r.id)).toEqual([ids[7], ids[2], ids[30]])
    const viaPrisma = await kit.db.contact.findMany({
      where: { id: { in: [ids[7]!, ids[2]!, ids[30]!] } },
      select: Object.fromEntries(COLUMNS.map((c) => [c, true])),
    })
    expect(rows).toEqual([ids[7], ids[2], ids[30]].map((id) => viaPrisma.find((r) => r.id === id)))
    expect(rows[0]!.createdAt).toBeInstanceOf(Date)
    expect(await contactsByIds(kit.deps, accountId, [], COLUMNS)).toEqual([])
  })

  it('reads a connection whose nodes select columns only in one statement of its own, and one with relations through Prisma', async () => {
    const { apiKey, groupId, accountId } = await seeded()
    const statementsOf = async (query: string) => {
      await kit.gql(query, {}, apiKey) // warms the API key cache
      await kit.deps.apiKeyCache.idle()
      kit.statements.length = 0
      const data = await kit.gql(query, {}, apiKey)
      // The API key's own read aside (the key cache may look it up again).
      return { data, statements: kit.statements.filter((sql) => !/FROM "ApiKey"/.test(sql)) }
    }
    const columnsOnly = await statementsOf(`{ contactsConnection(first: 5) { edges { cursor node { id uuid firstName createdAt } } } }`)
    expect(columnsOnly.data.contactsConnection.edges).toHaveLength(5)
    expect(columnsOnly.statements).toHaveLength(1)
    expect(columnsOnly.statements[0]).toMatch(/FROM "Contact" c WHERE c\."accountId" = (\?|\$1)/)
    const group = await statementsOf(
      `{ group(id: "${groupId}") { contactsConnection(first: 5, search: "a") { edges { node { uuid firstName } } } } }`,
    )
    expect(group.data.group.contactsConnection.edges).toHaveLength(5)
    expect(group.statements.filter((sql) => /FROM "Membership" m CROSS JOIN "Contact" c/.test(sql))).toHaveLength(1)
    // A group's search of 3 characters or more: the group's members only (not the account's
    // search): one walk of its members, which reaches the end of the group (contact-search-page.ts).
    const groupSearch = await statementsOf(
      `{ group(id: "${groupId}") { contactsConnection(first: 100, search: "oti") { edges { node { uuid } } } } }`,
    )
    const members = (await reference({ accountId, groupId }, 'oti', { first: 100 })).rows
    expect(members.length).toBeGreaterThan(3)
    expect(groupSearch.data.group.contactsConnection.edges.map((e: { node: { uuid: string } }) => e.node.uuid)).toEqual(
      members.map((row) => row.id),
    )
    const walked = groupSearch.statements.filter((sql) => /FROM "Membership" m CROSS JOIN "Contact" c/.test(sql))
    expect(walked).toHaveLength(1)
    // The same search with a relation under the nodes: the same walk for the ids, the rows through Prisma.
    const groupSearchRelations = await statementsOf(
      `{ group(id: "${groupId}") { contactsConnection(first: 100, search: "oti") { edges { node { uuid groups { name } } } } } }`,
    )
    const edges = groupSearchRelations.data.group.contactsConnection.edges as { node: { uuid: string; groups: { name: string }[] } }[]
    expect(edges.map((e) => e.node.uuid)).toEqual(members.map((row) => row.id))
    for (const edge of edges) expect(edge.node.groups.map((g) => g.name)).toEqual(['Thirds'])
    expect(groupSearchRelations.statements.filter((sql) => /FROM "Membership" m CROSS JOIN "Contact" c/.test(sql))).toHaveLength(1)
    // A page after a cursor with hasPreviousPage: the page and the flag, each a statement of its own.
    const cursor = columnsOnly.data.contactsConnection.edges[2].cursor
    const after = await statementsOf(
      `{ contactsConnection(first: 2, after: "${cursor}", search: "a") { edges { node { uuid } } pageInfo { hasPreviousPage } } }`,
    )
    expect(after.data.contactsConnection.pageInfo.hasPreviousPage).toBe(true)
    expect(after.statements).toHaveLength(2)
    for (const sql of after.statements) expect(sql).toMatch(/FROM "Contact" c WHERE c\."accountId" = (\?|\$1)/)
    // A relation under the nodes: Prisma's findMany, whose statements are not this module's.
    const relations = await statementsOf(`{ contactsConnection(first: 5) { edges { node { uuid groups { name } } } } }`)
    expect(relations.data.contactsConnection.edges).toHaveLength(5)
    expect(relations.statements.some((sql) => /FROM "Contact" c WHERE/.test(sql))).toBe(false)
  })

  it.runIf(target.name === 'sqlite')('walks the account’s index and the group’s in order, without sorting (SQLite)', async () => {
    const { accountId, groupId } = await seeded()
    kit.statements.length = 0
    const page = { accountId, searchKey: '', from: ['amani', 'otieno', ''], until: null, backward: true, take: 6 }
    await connectionPageRows(kit.deps, page, COLUMNS)
    await connectionPageRows(kit.deps, { ...page, groupId, backward: false }, COLUMNS)
    expect(kit.statements).toHaveLength(2)
    const [account, members] = await Promise.all(
      kit.statements.map(async (sql) => {
        const plan = await kit.db.$queryRawUnsafe<{ detail: string }[]>(
          `EXPLAIN QUERY PLAN ${sql}`,
          ...Array.from({ length: sql.split('?').length - 1 }, () => ''),
        )
        return plan.map((step) => step.detail).join('\n')
      }),
    )
    expect(account).toMatch(/^SEARCH c USING (COVERING )?INDEX Contact_accountId_firstNameKey_familyNameKey_id_idx \(accountId=\? AND/m)
    expect(members).toMatch(/^SEARCH m USING (COVERING )?INDEX \S*Membership\S* \(groupId=\? AND/m)
    for (const plan of [account, members]) expect(plan).not.toMatch(/TEMP B-TREE/)
  })
})
