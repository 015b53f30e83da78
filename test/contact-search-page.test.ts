// A connection page of a search, an account's or a group's (src/messaging/contact-search-page.ts):
// the bounded walk and, when it finds too few, the search index, each must give exactly the ids of
// Prisma's own findMany for the same filter, cursor bound, order and size, in both reading directions.
import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { parseContacts } from '../src/messaging/contacts.js'
import { upsertContacts } from '../src/messaging/upsert-contacts.js'
import { createGroup } from '../src/messaging/groups.js'
import { contactListWhere } from '../src/messaging/contact-list.js'
import { searchPageIds } from '../src/messaging/contact-search-page.js'
import { encodeCursor, planKeysetPage, type ConnectionArgs } from '../src/graphql/keyset.js'
import { CONTACT_ORDER } from '../src/graphql/types/messaging-contacts.js'

describe.each(targets)('a searched connection page on $name', (target) => {
  const kit = useKit(target)

  /**
   * 60 contacts that do not match "wanj" sort first, a few matches in the middle, most at the end;
   * a group of every other contact (some of each kind).
   */
  async function seeded() {
    const { account } = await kit.seed().account()
    const names = [
      ...Array.from({ length: 40 }, (_, i) => ['Aaron', `Otieno ${i}`]),
      ...Array.from({ length: 4 }, (_, i) => ['Kwanja', `Mid ${i}`]),
      ...Array.from({ length: 20 }, (_, i) => ['Moses', `Odhiambo ${i}`]),
      // Same names (the id breaks the tie), and one match by mobile only.
      ...Array.from({ length: 12 }, () => ['Wanjiru', 'Kamau']),
      ['Zawadi', 'Wanjala'],
    ]
    const inputs = names.map(([firstName, familyName], i) => ({ mobile: `+2547970${String(i).padStart(5, '0')}`, firstName, familyName }))
    await upsertContacts(kit.deps, account.id, parseContacts(inputs, 'KE'))
    return account.id
  }

  /** The account's every other contact, in mobile order, as a group. */
  async function halfGroup(accountId: string) {
    const { group } = await createGroup(kit.deps, accountId, { name: 'Half' })
    const contacts = await kit.db.contact.findMany({
      where: { accountId },
      orderBy: { mobile: 'asc' },
      select: { mobile: true, firstName: true, familyName: true },
    })
    const inputs = contacts.filter((_, i) => i % 2 === 0).map((c) => ({ ...c }))
    await upsertContacts(kit.deps, accountId, parseContacts(inputs, 'KE'), group.id)
    return group.id
  }

  async function reference(accountId: string, args: ConnectionArgs, groupId?: string) {
    const plan = planKeysetPage(CONTACT_ORDER, args)
    const rows = await kit.db.contact.findMany({
      where: { AND: [contactListWhere(accountId, { searchKey: 'wanj' }, groupId), plan.query.where] },
      orderBy: plan.query.orderBy,
      take: plan.query.take,
      select: { id: true, firstNameKey: true, familyNameKey: true },
    })
    return { plan, rows }
  }

  it('answers every page like findMany, an account’s and a group’s, forward and backward, by the walk and by the search index', async () => {
    const accountId = await seeded()
    const groupId = await halfGroup(accountId)
    for (const [list, size] of [
      [undefined, 17],
      [groupId, 9],
    ] as const) {
      const all = (await reference(accountId, { first: 100 }, list)).rows
      expect(all).toHaveLength(size)
      const cursor = (i: number) => encodeCursor(CONTACT_ORDER, all[i]!)
      const cases: ConnectionArgs[] = [{ first: 5 }, { first: 1 }, { first: 100 }, { last: 3 }, { last: 100 }, { first: 0 }]
      for (let i = 0; i < all.length; i++) {
        cases.push({ first: 4, after: cursor(i) }, { last: 4, before: cursor(i) })
        if (i + 3 < all.length)
          cases.push({ first: 10, after: cursor(i), before: cursor(i + 3) }, { last: 10, after: cursor(i), before: cursor(i + 3) })
      }
      for (const args of cases) {
        const { plan, rows } = await reference(accountId, args, list)
        const [from, until] = plan.backward ? [plan.before, plan.after] : [plan.after, plan.before]
        const request = {
          accountId,
          ...(list ? { groupId: list } : {}),
          searchKey: 'wanj',
          from: from as string[] | null,
          until: until as string[] | null,
          backward: plan.backward,
          take: plan.query.take,
        }
        const want = rows.map((r) => r.id)
        // The default walk, a walk too short for most pages (the search index answers), and none.
        for (const probe of [500, 3, 1]) {
          expect(await searchPageIds(kit.deps, request, { probe }), `${list ?? 'account'} ${JSON.stringify(args)}, probe ${probe}`).toEqual(
            want,
          )
        }
      }
    }
    // From the list's start the first 40 contacts do not match: a walk of 3 finds nothing, and the
    // search index answers (a second statement).
    const { plan, rows } = await reference(accountId, { first: 5 })
    kit.statements.length = 0
    const ids = await searchPageIds(
      kit.deps,
      { accountId, searchKey: 'wanj', from: null, until: null, backward: false, take: plan.query.take },
      { probe: 3 },
    )
    expect(ids).toEqual(rows.map((r) => r.id))
    expect(kit.statements).toHaveLength(2)
  })

  it('answers a term that is in every contact (the mobile prefix) from the walk', async () => {
    const accountId = await seeded()
    const plan = planKeysetPage(CONTACT_ORDER, { first: 5 })
    const request = { accountId, searchKey: '254797', from: null, until: null, backward: false, take: plan.query.take }
    const rows = await kit.db.contact.findMany({
      where: contactListWhere(accountId, { searchKey: '254797' }),
      orderBy: plan.query.orderBy,
      take: plan.query.take,
      select: { id: true },
    })
    kit.statements.length = 0
    expect(await searchPageIds(kit.deps, request)).toEqual(rows.map((r) => r.id))
    // One statement: the walk found the page.
    expect(kit.statements).toHaveLength(1)
  })
})
