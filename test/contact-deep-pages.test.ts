// A contact list page is walked from the nearer end of the list (contact-list.ts, fromNearerEnd):
// past the middle, the statement reads the reversed order and puts the rows back. Every page of
// every list must still be exactly Prisma's own findMany (contactListWhere + contactListOrder with
// skip/take) and its count, whichever end it came from, including the short last page, the pages
// past the end, and lists of 0 to 3 contacts. A group's list walks its members' own index (the sort
// keys each membership carries) the same way; its pages are compared the same way.
import { beforeAll, describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { Prisma } from '../src/generated/sqlite/client.js'
import { contactListStatement, FORWARD_ONLY_SKIP, listContacts } from '../src/messaging/contact-list.js'
import { prismaPage } from './kit/contact-pages.js'
import { pageRequest } from '../src/messaging/paging.js'
import type { ContactInput } from '../src/messaging/contacts.js'

// Few distinct names, so (firstNameKey, familyNameKey) repeats and the id decides many places;
// case pairs, accents and non-Latin letters, so the database's collation orders some of them.
const FIRST = ['Émile', 'emile', 'Zoë', 'Ångström', 'bob', 'Bob', 'Ann', 'ann-marie', '李', 'Ōtieno', 'Z']
const FAMILY = ['', 'Kamau', 'kamau', 'Éla', 'O’Neil']
const named =
  (offset: number) =>
  (i: number): ContactInput => ({ firstName: FIRST[(i + offset) % FIRST.length]!, familyName: FAMILY[((i + offset) * 7) % FAMILY.length]! })

interface List {
  name: string
  accountId: string
  groupId?: string
}

describe.each(targets)('contact list pages from either end on $name', (target) => {
  const kit = useKit(target)
  const lists: List[] = []
  let big: List
  let bigGroup: List

  beforeAll(async () => {
    // 137 contacts, 46 of them in a group (the group's are seeded last, so they interleave in the order).
    const s = await kit.seed().account('Deep').contacts(91, named(0)).group({ name: 'Part' }).contacts(46, named(5))
    big = { name: '137 contacts', accountId: s.account.id }
    bigGroup = { name: 'a group of 46', accountId: s.account.id, groupId: s.group.id }
    const empty = await kit.seed().account('Empty group').group({ name: 'Nobody' })
    lists.push(
      big,
      bigGroup,
      { name: 'an empty account', accountId: empty.account.id },
      { name: 'an empty group', accountId: empty.account.id, groupId: empty.group.id },
    )
    for (const n of [1, 2, 3]) {
      // The same name on every contact: only the id orders them.
      const few = await kit
        .seed()
        .account(`Few ${n}`)
        .group({ name: 'All' })
        .contacts(n, () => ({ firstName: 'Same', familyName: 'Name' }))
      lists.push(
        { name: `${n} contact(s)`, accountId: few.account.id },
        { name: `a group of ${n}`, accountId: few.account.id, groupId: few.group.id },
      )
    }
  })

  const expected = (list: List, page: number, perPage: number, search = '') =>
    prismaPage(kit.db, list, { page, perPage, search }, ['firstName', 'familyName'])

  async function actual(list: List, page: number, perPage: number, search = '', forwardOnlyUpTo?: number) {
    const request = pageRequest({ page, perPage, search })
    const { rows, total } = await listContacts(kit.deps, { accountId: list.accountId, groupId: list.groupId, request, forwardOnlyUpTo }, [
      'id',
      'firstName',
      'familyName',
    ])
    return { rows, total }
  }

  /**
   * Every page of the list, and two past its end, against Prisma's findMany and count: each page
   * as the service reads it (these lists are short enough to be read forward only) and from its
   * nearer end (forwardOnlyUpTo -1: both branches in every statement).
   */
  async function expectEveryPage(list: List, perPage: number, search = '') {
    const { total } = await expected(list, 1, perPage, search)
    const pageCount = Math.ceil(total / perPage)
    for (let page = 1; page <= pageCount + 2; page++) {
      const want = await expected(list, page, perPage, search)
      const got = await actual(list, page, perPage, search)
      expect(got, `${list.name}, page ${page} of ${pageCount}, perPage ${perPage}, search "${search}"`).toEqual(want)
      const nearerEnd = await actual(list, page, perPage, search, -1)
      expect(nearerEnd, `${list.name}, page ${page} of ${pageCount}, perPage ${perPage}, search "${search}", from the nearer end`).toEqual(
        want,
      )
      if (page > pageCount) expect(got.rows).toEqual([])
    }
  }

  it('answers every page of every list like findMany, from 0 to 137 contacts, with the short last page and the pages past the end', async () => {
    expect(lists.map((l) => l.name)).toHaveLength(10)
    for (const list of lists) for (const perPage of [10, 25]) await expectEveryPage(list, perPage)
    // The seed really holds what the lists claim (a wrong seed would make the comparisons above trivial).
    expect((await actual(big, 1, 100)).total).toBe(137)
    expect((await actual(bigGroup, 1, 100)).total).toBe(46)
    expect((await actual(big, 14, 10)).rows).toHaveLength(7)
  })

  it('answers every one-row page (every position, both sides of the middle) like findMany', async () => {
    await expectEveryPage(big, 1)
    await expectEveryPage(bigGroup, 1)
  })

  it('pages a search like findMany (the search path counts its matches; it does not use the list total)', async () => {
    for (const search of ['mi', 'emi', 'kamau', 'no such contact']) {
      await expectEveryPage(big, 10, search)
      await expectEveryPage(bigGroup, 10, search)
    }
  })

  it('follows the list total as contacts come and go', async () => {
    const s = await kit.seed().account('Changing').contacts(30, named(2))
    const list = { name: 'changing', accountId: s.account.id }
    await expectEveryPage(list, 7)
    await kit.db.contact.deleteMany({ where: { id: { in: s.contacts.slice(0, 11).map((c) => c.id) } } })
    await expectEveryPage(list, 7)
    await kit.seed().account('Unrelated').contacts(5, named(1))
    await expectEveryPage(list, 7)
  })

  /** The scans of a table under one UNION ALL branch of the plan (its subquery alias): rows read and times started. */
  function scans(plan: PlanNode, alias: 'f' | 'b', table = 'Contact'): { rows: number; loops: number }[] {
    const branch = find(plan, (n) => n['Node Type'] === 'Subquery Scan' && n.Alias === alias)
    if (!branch) throw new Error(`no branch ${alias} in ${JSON.stringify(plan)}`)
    const found: { rows: number; loops: number }[] = []
    walk(branch, (n) => {
      if (n['Relation Name'] === table) found.push({ rows: n['Actual Rows']!, loops: n['Actual Loops']! })
    })
    return found
  }
  /** The statement's plan, run; forwardOnlyUpTo -1 (by default here): every page from its nearer end; 'service': as listContacts reads it. */
  async function plan(page: number, perPage: number, list: List = big, forwardOnlyUpTo: number | 'service' = -1): Promise<PlanNode> {
    const statement = contactListStatement(
      'postgresql',
      {
        accountId: list.accountId,
        groupId: list.groupId,
        request: pageRequest({ page, perPage }),
        forwardOnlyUpTo: forwardOnlyUpTo === 'service' ? undefined : forwardOnlyUpTo,
      },
      ['id'],
    )
    return kit.db.$transaction(async (tx) => {
      // A table this small is cheaper to scan and sort; the walk on the index is what is checked.
      await tx.$executeRawUnsafe('SET LOCAL enable_seqscan = off')
      await tx.$executeRawUnsafe('SET LOCAL enable_bitmapscan = off')
      const [row] = await tx.$queryRaw<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(Prisma.sql`EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`)
      return row!['QUERY PLAN'][0].Plan
    })
  }
  it.runIf(target.name === 'postgresql')(
    'walks the account’s index, and a group’s, from the nearer end and never starts the other walk',
    async () => {
      // Page 1 and page 6 of 14 (50 rows before it, 77 after): forward, reading skip + perPage entries.
      for (const [page, read] of [
        [1, 10],
        [6, 60],
      ] as const) {
        const p = await plan(page, 10)
        expect(scans(p, 'f'), `page ${page}`).toEqual([{ rows: read, loops: 1 }])
        expect(scans(p, 'b'), `page ${page}`).toEqual([{ rows: 0, loops: 0 }])
      }
      // Page 8 (70 before, 57 after), page 13 and the short last page 14 (7 rows): backward, reading only up to the page’s first row.
      for (const [page, read] of [
        [8, 67],
        [13, 17],
        [14, 7],
      ] as const) {
        const p = await plan(page, 10)
        expect(scans(p, 'f'), `page ${page}`).toEqual([{ rows: 0, loops: 0 }])
        expect(scans(p, 'b'), `page ${page}`).toEqual([{ rows: read, loops: 1 }])
      }
      // Past the end: the backward branch, which stops at once.
      const past = await plan(30, 10)
      expect(scans(past, 'f')).toEqual([{ rows: 0, loops: 0 }])
      expect(scans(past, 'b')[0]!.rows).toBeLessThanOrEqual(10)
      // A group of 46 walks its members' own index (their sort keys, migration membership_sort_keys)
      // the same way: page 2 forward, its last page backward, and neither reads a Contact row to order them.
      const groupPage2 = await plan(2, 10, bigGroup)
      expect(scans(groupPage2, 'f', 'Membership')).toEqual([{ rows: 20, loops: 1 }])
      expect(scans(groupPage2, 'b', 'Membership')).toEqual([{ rows: 0, loops: 0 }])
      const groupLast = await plan(5, 10, bigGroup)
      expect(scans(groupLast, 'f', 'Membership')).toEqual([{ rows: 0, loops: 0 }])
      expect(scans(groupLast, 'b', 'Membership')).toEqual([{ rows: 6, loops: 1 }])
      for (const p of [groupPage2, groupLast]) expect([...scans(p, 'f'), ...scans(p, 'b')]).toEqual([])
    },
  )

  it.runIf(target.name === 'postgresql')(
    'reads a page within FORWARD_ONLY_SKIP rows of the front forward only: no reversed walk in its statement',
    async () => {
      const hasBranch = (p: PlanNode, alias: string) =>
        find(p, (n) => n['Node Type'] === 'Subquery Scan' && n.Alias === alias) !== undefined
      /** Every walk of the list's index in the plan (the primary key's lookups of the page's rows aside). */
      const walks = (p: PlanNode, table: string) => {
        const found: { rows: number; loops: number; direction?: string }[] = []
        walk(p, (n) => {
          if (n['Relation Name'] === table && n['Index Name'] !== `${table}_pkey`)
            found.push({ rows: n['Actual Rows']!, loops: n['Actual Loops']!, direction: n['Scan Direction'] })
        })
        return found
      }
      expect(FORWARD_ONLY_SKIP).toBeGreaterThanOrEqual(130)
      // Page 1; page 14 of 14 (its last), which the nearer-end statement reads backward; a group's last.
      for (const [page, read, list] of [
        [1, 10, big],
        [14, 137, big],
        [5, 46, bigGroup],
      ] as const) {
        const p = await plan(page, 10, list, 'service')
        const what = `page ${page} of ${list.name}`
        expect(hasBranch(p, 'b'), what).toBe(false)
        expect(walks(p, list.groupId ? 'Membership' : 'Contact'), what).toEqual([{ rows: read, loops: 1, direction: 'Forward' }])
      }
      // Past the bound the statement walks from the nearer end again (both branches in it).
      const far = await plan(14, 10, big, 129)
      expect(hasBranch(far, 'b')).toBe(true)
      expect(scans(far, 'f')).toEqual([{ rows: 0, loops: 0 }])
    },
  )
})

interface PlanNode {
  'Node Type': string
  Alias?: string
  'Relation Name'?: string
  'Actual Rows'?: number
  'Actual Loops'?: number
  'Index Name'?: string
  'Scan Direction'?: string
  Plans?: PlanNode[]
}

function walk(node: PlanNode, visit: (n: PlanNode) => void) {
  visit(node)
  for (const child of node.Plans ?? []) walk(child, visit)
}

function find(node: PlanNode, test: (n: PlanNode) => boolean): PlanNode | undefined {
  if (test(node)) return node
  for (const child of node.Plans ?? []) {
    const hit = find(child, test)
    if (hit) return hit
  }
  return undefined
}
