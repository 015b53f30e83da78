// A remembered search (src/messaging/remembered-searches.ts): a page of an account's search (or a
// group's) of 1,000 matches or more is answered again from its ids while nothing that could change
// the matches has happened since its count; an account's follows the changes when something has,
// whoever wrote (this process, another database handle, a transaction that was still open when the
// search was counted, random mixes of both); when it cannot follow, and a group's after any
// change, it runs in full. Every answer is compared with Prisma's own query of the same list.
import { randomUUID } from 'node:crypto'
import BetterSqlite3 from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { schemaClient, targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { contactListOrder, contactListWhere, listContacts, searchTotal } from '../src/messaging/contact-list.js'
import { searchPageIds } from '../src/messaging/contact-search-page.js'
import { contactListTotal } from '../src/messaging/list-totals.js'
import { prismaPage } from './kit/contact-pages.js'
import { pageRequest } from '../src/messaging/paging.js'
import { contactKeys, parseContacts } from '../src/messaging/contacts.js'
import { delistContacts, upsertContacts } from '../src/messaging/upsert-contacts.js'
import { createGroup } from '../src/messaging/groups.js'
import { openDatabase, type Database } from '../src/db/client.js'
import { parseDatabaseUrl } from '../src/db/connection-url.js'
import { createDeps } from '../src/deps.js'
import { parseEnv } from '../src/core/env.js'
import { FOLLOW_MAX_EDITS, purgeContactChanges, REMEMBERED_TOTAL_MIN, WINDOW_MARGIN } from '../src/messaging/remembered-searches.js'

const COLUMNS = ['id', 'firstName', 'gender'] as const

describe.each(targets)('a remembered search on $name', (target) => {
  const kit = useKit(target)
  const closing: (() => Promise<unknown> | unknown)[] = []
  afterEach(async () => {
    for (const close of closing.splice(0)) await close()
  })

  /** An account of 1,100 contacts named "Zebu …" (every one matches "zebu"), all on one group, and 20 others. */
  async function seeded() {
    const s = await kit
      .seed()
      .account()
      .group({ name: 'Zebus' })
      .contacts(1_100, (i) => ({ firstName: `Zebu ${String(i).padStart(5, '0')}`, familyName: 'Ng' }))
    const others = Array.from({ length: 20 }, (_, i) => ({ mobile: `+2547990000${String(i).padStart(2, '0')}`, firstName: `Other ${i}` }))
    await upsertContacts(kit.deps, s.account.id, parseContacts(others, 'KE'))
    return s.account.id
  }

  const page = (accountId: string, search: string, number = 1, deps = kit.deps) =>
    listContacts(deps, { accountId, request: pageRequest({ search, page: number, perPage: 25 }) }, COLUMNS)

  /** The same page from Prisma's own query: what every answer must be. */
  const reference = (accountId: string, search: string, number = 1) =>
    prismaPage(kit.db, { accountId }, { search, page: number, perPage: 25 }, ['firstName', 'gender'])

  async function expectAnswer(accountId: string, search: string, counted: boolean, number = 1, deps = kit.deps) {
    const got = await page(accountId, search, number, deps)
    expect({ rows: got.rows, total: got.total }).toEqual(await reference(accountId, search, number))
    expect(got.counted, `${search} page ${number}`).toBe(counted)
    return got
  }

  /** How an answer was found: counted in full, remembered unchanged (one statement), or followed (three: the check, the changes, the page). */
  async function answerWay(accountId: string, search: string, number = 1, deps = kit.deps) {
    kit.statements.length = 0
    const got = await page(accountId, search, number, deps)
    const statements = kit.statements.length
    expect({ rows: got.rows, total: got.total }, `${search} page ${number}`).toEqual(await reference(accountId, search, number))
    return got.counted ? 'counted' : statements === 1 ? 'remembered' : statements === 3 ? 'followed' : `${statements} statements`
  }

  /** A second database handle on the same database: another instance of the service. */
  async function otherInstance() {
    const database: Database = await openDatabase(kit.url)
    closing.push(() => database.close())
    return createDeps(database, parseEnv({ DATABASE_URL: kit.url, LOG_LEVEL: 'silent' }))
  }

  it('answers a page again from its ids, as the full search does, and only for 1,000 matches or more', async () => {
    const accountId = await seeded()
    const first = await expectAnswer(accountId, 'zebu', true)
    expect(first.total).toBe(1_100)
    await expectAnswer(accountId, 'zebu', false)
    // Each page is remembered once it has been read in full.
    await expectAnswer(accountId, 'zebu', true, 3)
    await expectAnswer(accountId, 'zebu', false, 3)
    await expectAnswer(accountId, 'zebu', false)
    // Past the last page: remembered as empty.
    await expectAnswer(accountId, 'zebu', true, 50)
    await expectAnswer(accountId, 'zebu', false, 50)
    // Fewer matches than REMEMBERED_TOTAL_MIN (here 100: "Zebu 0000x" to "Zebu 0009x"): always in full.
    expect(REMEMBERED_TOTAL_MIN).toBeGreaterThan(100)
    await expectAnswer(accountId, 'zebu 000', true)
    await expectAnswer(accountId, 'zebu 000', true)
  })

  it('answers a group’s search again while neither the account’s contacts nor the group’s members change', async () => {
    const accountId = await seeded()
    const other = await otherInstance()
    const { id: groupId } = await kit.db.group.findFirstOrThrow({ where: { accountId } })
    const groupPage = (number = 1, deps = kit.deps) =>
      listContacts(deps, { accountId, groupId, request: pageRequest({ search: 'zebu', page: number, perPage: 25 }) }, COLUMNS)
    const expectGroup = async (counted: boolean, what: string, number = 1, deps = kit.deps) => {
      const got = await groupPage(number, deps)
      const want = await prismaPage(kit.db, { accountId, groupId }, { search: 'zebu', page: number, perPage: 25 }, ['firstName', 'gender'])
      expect({ rows: got.rows, total: got.total }, what).toEqual(want)
      expect(got.counted, what).toBe(counted)
      return got
    }
    const groupTotal = (deps = kit.deps) => searchTotal(deps, { accountId, groupId, searchKey: 'zebu' })
    const enlist = (deps: typeof kit.deps, mobile: string, firstName: string, group?: string) =>
      upsertContacts(deps, accountId, parseContacts([{ mobile, firstName, familyName: 'Ng' }], 'KE'), group)

    expect((await expectGroup(true, 'first')).total).toBe(1_100)
    await expectGroup(false, 'again')
    await expectGroup(true, 'page 3', 3)
    await expectGroup(false, 'page 3 again', 3)
    // Its total (the Relay connection's totalCount) is the one the pages counted.
    expect(await groupTotal()).toEqual({ total: 1_100, counted: false })
    // The account's search of the same term is another search, remembered on its own.
    await expectAnswer(accountId, 'zebu', true)
    await expectAnswer(accountId, 'zebu', false)

    // Another group of the account gains a member: this group's search is unchanged.
    const { group: second } = await createGroup(kit.deps, accountId, { name: 'Second' })
    const { mobile: firstMobile } = await kit.db.contact.findFirstOrThrow({ where: { accountId, firstName: 'Zebu 00000' } })
    await enlist(other, firstMobile, 'Zebu 00000', second.id)
    await expectGroup(false, 'another group changed')
    // A column outside the search text changes no match.
    await kit.db.contact.updateMany({ where: { accountId, mobile: firstMobile }, data: { gender: 'female' } })
    expect((await expectGroup(false, 'a gender changed')).rows[0]!.gender).toBe('female')

    const changes: [string, () => Promise<unknown>, number][] = [
      ['a member removed by another instance', () => delistContacts(other, accountId, groupId, [firstMobile]), 1_099],
      ['a matching contact added to the account, not to the group', () => enlist(kit.deps, '+254799333001', 'Zebu 00000g'), 1_099],
      ['that contact added to the group by another instance', () => enlist(other, '+254799333001', 'Zebu 00000g', groupId), 1_100],
      [
        'a member renamed away',
        () =>
          kit.db.contact
            .findFirstOrThrow({ where: { accountId, firstName: 'Zebu 00500' } })
            .then((c) => enlist(kit.deps, c.mobile, 'Renamed')),
        1_099,
      ],
      ['a member’s contact deleted', () => kit.db.contact.deleteMany({ where: { accountId, firstName: 'Zebu 00501' } }), 1_098],
    ]
    for (const [what, change, total] of changes) {
      await expectGroup(false, `${what}: before`)
      await expectGroup(false, `${what}: before, page 3`, 3)
      // The other instance remembers the total too, so that its count after the change says something.
      await groupTotal(other)
      await change()
      expect((await expectGroup(true, what)).total, what).toBe(total)
      expect(await groupTotal(other), what).toEqual({ total, counted: true })
      await expectGroup(true, `${what}, page 3`, 3)
      await expectGroup(false, `${what}: after`)
      expect(await groupTotal(), what).toEqual({ total, counted: false })
    }
    // Fewer matches than REMEMBERED_TOTAL_MIN: never remembered.
    const few = await prismaPage(kit.db, { accountId, groupId }, { search: 'zebu 000', page: 1, perPage: 25 }, ['firstName', 'gender'])
    expect(few.total).toBeGreaterThan(0)
    expect(few.total).toBeLessThan(REMEMBERED_TOTAL_MIN)
    for (let i = 0; i < 2; i++) {
      const got = await listContacts(
        kit.deps,
        { accountId, groupId, request: pageRequest({ search: 'zebu 000', page: 1, perPage: 25 }) },
        COLUMNS,
      )
      expect({ rows: got.rows, total: got.total, counted: got.counted }).toEqual({ ...few, counted: true })
    }
  })

  it('sees a member added by a write that was still open when the group’s search was counted', async () => {
    const accountId = await seeded()
    const { id: groupId } = await kit.db.group.findFirstOrThrow({ where: { accountId } })
    const [joining] = await upsertContacts(
      kit.deps,
      accountId,
      parseContacts([{ mobile: '+254799333002', firstName: 'Zebu 0000' }], 'KE'),
    ).then((r) => r.saved)
    const groupPage = () =>
      listContacts(kit.deps, { accountId, groupId, request: pageRequest({ search: 'zebu', page: 1, perPage: 25 }) }, COLUMNS)
    const insert = `INSERT INTO "Membership" ("groupId", "contactId") VALUES`
    let commit: () => Promise<void>
    if (kit.deps.dbKind === 'sqlite') {
      const writer = new BetterSqlite3(parseDatabaseUrl(kit.url).file!, { timeout: 5_000 })
      closing.push(() => writer.close())
      writer.exec('BEGIN IMMEDIATE')
      writer.prepare(`${insert} (?, ?)`).run(groupId, joining!.id)
      commit = async () => void writer.exec('COMMIT')
    } else {
      const writer = await schemaClient(kit.url)
      closing.push(() => writer.end())
      await writer.query('BEGIN')
      await writer.query(`${insert} ($1, $2)`, [groupId, joining!.id])
      commit = async () => void (await writer.query('COMMIT'))
      // A write that starts after the open one and ends before the count (see above).
      await kit.seed().account()
    }
    expect(await groupPage()).toMatchObject({ total: 1_100, counted: true })
    expect(await groupPage()).toMatchObject({ total: 1_100, counted: false })
    await commit()
    const after = await groupPage()
    expect(after).toMatchObject({ total: 1_101, counted: true })
    // It sorts first ("zebu 0000" before "zebu 00000").
    expect(after.rows[0]!.id).toBe(joining!.id)
    expect(await groupPage()).toMatchObject({ total: 1_101, counted: false })
  })

  it('answers a group’s connection page again from its ids until the group’s members change', async () => {
    const accountId = await seeded()
    const other = await otherInstance()
    const { id: groupId } = await kit.db.group.findFirstOrThrow({ where: { accountId } })
    // A walk of one row finds too few: the search index answers, and the page is remembered.
    const request = { accountId, groupId, searchKey: 'zebu', from: null, until: null, backward: false, take: 26 }
    const reference = async () =>
      (
        await kit.db.contact.findMany({
          where: contactListWhere(accountId, { searchKey: 'zebu' }, groupId),
          orderBy: contactListOrder,
          take: 26,
          select: { id: true },
        })
      ).map((row) => row.id)
    const way = async (deps = kit.deps) => {
      const want = await reference()
      kit.statements.length = 0
      expect(await searchPageIds(deps, request, { probe: 1 })).toEqual(want)
      return kit.statements.length
    }
    expect(await way()).toBe(2) // the walk, then the search index
    expect(await way()).toBe(1) // remembered: checked unchanged
    // A contact that sorts first joins the account but not the group: the page is counted again.
    const enlist = (deps: typeof kit.deps, mobile: string, group?: string) =>
      upsertContacts(deps, accountId, parseContacts([{ mobile, firstName: 'Zebu', familyName: 'Ng' }], 'KE'), group)
    await enlist(other, '+254799333002')
    expect(await way()).toBe(3) // the check, the walk, the search index
    expect(await way()).toBe(1)
    // Another instance adds it to the group: the page starts with it.
    await enlist(other, '+254799333002', groupId)
    expect(await way()).toBe(3)
    const [firstId] = await searchPageIds(kit.deps, request, { probe: 1 })
    expect((await kit.db.contact.findUniqueOrThrow({ where: { id: firstId } })).mobile).toBe('+254799333002')
  })

  it('reads the columns fresh, and follows every change of the matches, whoever wrote it', async () => {
    const accountId = await seeded()
    const other = await otherInstance()
    await expectAnswer(accountId, 'zebu', true)
    const [firstId] = (await page(accountId, 'zebu')).rows.map((r) => r.id as string)
    const first = await kit.db.contact.findUniqueOrThrow({ where: { id: firstId }, select: { mobile: true } })
    // Page 3 too: its window starts past the list's start (25 matches before it).
    await expectAnswer(accountId, 'zebu', true, 3)
    const third = (await page(accountId, 'zebu', 3)).rows.map((r) => r.id as string)

    // Sorts before "Zebu 00001 Ng" (no family name), until its family and other names swap.
    await upsertContacts(kit.deps, accountId, parseContacts([{ mobile: '+254799111121', firstName: 'Zebu 00001', otherNames: 'Zz' }], 'KE'))
    expect(await answerWay(accountId, 'zebu')).toBe('followed')
    expect(await answerWay(accountId, 'zebu', 3)).toBe('followed')

    // A column outside the search text changes no match: still remembered, the new value shown.
    await kit.db.contact.update({ where: { id: firstId }, data: { gender: 'female' } })
    const shown = await expectAnswer(accountId, 'zebu', false)
    expect(shown.rows[0]!.gender).toBe('female')

    const changes: [string, () => Promise<unknown>][] = [
      [
        'a new match, written by another instance',
        () => upsertContacts(other, accountId, parseContacts([{ mobile: '+254799111111', firstName: 'Zebu 00000a' }], 'KE')),
      ],
      [
        'a match renamed away',
        () => upsertContacts(kit.deps, accountId, parseContacts([{ mobile: first.mobile, firstName: 'Renamed' }], 'KE')),
      ],
      ['a match deleted by another instance', () => other.db.contact.delete({ where: { id: firstId } })],
      [
        'a match renamed from page 3 to page 1',
        async () => {
          const { mobile } = await kit.db.contact.findUniqueOrThrow({ where: { id: third[5]! }, select: { mobile: true } })
          await upsertContacts(other, accountId, parseContacts([{ mobile, firstName: 'Zebu 00000b' }], 'KE'))
        },
      ],
      [
        'a match whose search text stays while its sort keys change (family name and other names swapped)',
        async () => {
          const mobile = '+254799111121'
          const before = await kit.db.contact.findFirstOrThrow({
            where: { accountId, mobile },
            select: { searchText: true, familyNameKey: true },
          })
          await upsertContacts(
            kit.deps,
            accountId,
            parseContacts([{ mobile, firstName: 'Zebu 00001', familyName: 'Zz', otherNames: '' }], 'KE'),
          )
          const after = await kit.db.contact.findFirstOrThrow({
            where: { accountId, mobile },
            select: { searchText: true, familyNameKey: true },
          })
          expect(after.searchText).toBe(before.searchText)
          expect([before.familyNameKey, after.familyNameKey]).toEqual(['', 'zz'])
        },
      ],
      [
        'two matches of page 1 deleted and one added, in one transaction',
        () =>
          kit.db.$transaction(async (tx) => {
            const [a, b] = await tx.contact.findMany({ where: { accountId, firstName: { startsWith: 'Zebu 0000' } }, take: 2 })
            await tx.contact.deleteMany({ where: { id: { in: [a!.id, b!.id] } } })
            await tx.contact.create({
              data: {
                accountId,
                mobile: '+254799111119',
                firstName: 'Zebu 00003z',
                familyName: 'Ng',
                ...contactKeys({ firstName: 'Zebu 00003z', familyName: 'Ng', mobile: '+254799111119' }),
              },
            })
          }),
      ],
    ]
    for (const [what, change] of changes) {
      await expectAnswer(accountId, 'zebu', false)
      await expectAnswer(accountId, 'zebu', false, 3)
      await change()
      expect(await answerWay(accountId, 'zebu'), what).toBe('followed')
      expect(await answerWay(accountId, 'zebu', 3), what).toBe('followed')
      expect(await answerWay(accountId, 'zebu'), what).toBe('remembered')
      // And the other instance, which never counted this search, agrees.
      expect((await page(accountId, 'zebu', 1, other)).total, what).toBe(await reference(accountId, 'zebu').then((r) => r.total))
    }
  })

  it('runs in full when too many contacts were written, or the page has left its window', async () => {
    const accountId = await seeded()
    await expectAnswer(accountId, 'zebu', true)
    await expectAnswer(accountId, 'zebu', true, 3)
    // More contacts written than a search follows: in full, then remembered again.
    const many = Array.from({ length: FOLLOW_MAX_EDITS + 1 }, (_, i) => ({
      mobile: `+2547970${String(i).padStart(5, '0')}`,
      firstName: i % 2 ? 'Zebu 0' : 'Plain',
    }))
    await upsertContacts(kit.deps, accountId, parseContacts(many, 'KE'))
    expect(await answerWay(accountId, 'zebu')).toBe('counted')
    expect(await answerWay(accountId, 'zebu', 3)).toBe('counted')
    expect(await answerWay(accountId, 'zebu', 3)).toBe('remembered')
    // Page 3 with the margin after it emptied: more matches gone from its window than it holds.
    const window = await kit.db.contact.findMany({
      where: contactListWhere(accountId, { searchKey: 'zebu' }),
      orderBy: contactListOrder,
      skip: 50,
      take: 25 + WINDOW_MARGIN + 1,
      select: { id: true },
    })
    await kit.db.contact.deleteMany({ where: { id: { in: window.map((row) => row.id) } } })
    expect(await answerWay(accountId, 'zebu', 3)).toBe('counted')
    // A change in the window's margin alone is followed.
    const [next] = await kit.db.contact.findMany({
      where: contactListWhere(accountId, { searchKey: 'zebu' }),
      orderBy: contactListOrder,
      skip: 80,
      take: 1,
      select: { id: true },
    })
    await kit.db.contact.delete({ where: { id: next!.id } })
    expect(await answerWay(accountId, 'zebu', 3)).toBe('followed')
  })

  it('remembers the total of a search without a page (the Relay connection), shared with the pages', async () => {
    const accountId = await seeded()
    const other = await otherInstance()
    const total = (searchKey: string, deps = kit.deps) => searchTotal(deps, { accountId, searchKey })
    const count = (searchKey: string) => kit.db.contact.count({ where: contactListWhere(accountId, { searchKey }) })
    expect(await total('zebu')).toEqual({ total: 1_100, counted: true })
    expect(await total('zebu')).toEqual({ total: 1_100, counted: false })
    // The pages of the same search, counted under the same mark, join it; the total stays remembered.
    await expectAnswer(accountId, 'zebu', true)
    await expectAnswer(accountId, 'zebu', false)
    expect(await total('zebu')).toEqual({ total: 1_100, counted: false })
    // A new match written by another instance: the total follows it in one statement, and the page too.
    await upsertContacts(other, accountId, parseContacts([{ mobile: '+254799111112', firstName: 'Zebu 00000d' }], 'KE'))
    expect(await count('zebu')).toBe(1_101)
    kit.statements.length = 0
    expect(await total('zebu')).toEqual({ total: 1_101, counted: false })
    expect(kit.statements).toHaveLength(1)
    expect(await answerWay(accountId, 'zebu')).toBe('followed')
    // A total that a page counted (the other instance never asked for the total).
    await page(accountId, 'zebu', 1, other)
    expect(await total('zebu', other)).toEqual({ total: 1_101, counted: false })
    // A rename away from the matches, by this instance.
    const renamed = await kit.db.contact.findFirstOrThrow({ where: { accountId, firstName: 'Zebu 00500' }, select: { mobile: true } })
    await upsertContacts(kit.deps, accountId, parseContacts([{ mobile: renamed.mobile, firstName: 'Renamed' }], 'KE'))
    expect(await total('zebu', other)).toEqual({ total: 1_100, counted: false })
    // Too many contacts written to follow: counted again.
    await upsertContacts(
      kit.deps,
      accountId,
      parseContacts(
        Array.from({ length: FOLLOW_MAX_EDITS + 1 }, (_, i) => ({
          mobile: `+2547960${String(i).padStart(5, '0')}`,
          firstName: 'Plain',
        })),
        'KE',
      ),
    )
    expect(await total('zebu', other)).toEqual({ total: 1_100, counted: true })
    // A 1-2 character term is remembered the same way; fewer than 1,000 matches never are.
    expect(await total('ng')).toEqual({ total: await count('ng'), counted: true })
    expect(await total('ng')).toEqual({ total: await count('ng'), counted: false })
    const few = await count('zebu 000')
    expect(few).toBeLessThan(REMEMBERED_TOTAL_MIN)
    expect(await total('zebu 000')).toEqual({ total: few, counted: true })
    expect(await total('zebu 000')).toEqual({ total: few, counted: true })
    // contactListTotal: the remembered total, of the account's search and of a group's.
    const group = await kit.db.group.findFirstOrThrow({ where: { accountId } })
    expect(await contactListTotal(kit.deps, { accountId, searchKey: 'zebu' })).toBe(1_100)
    expect(await contactListTotal(kit.deps, { accountId, groupId: group.id, searchKey: 'zebu' })).toBe(
      await kit.db.contact.count({ where: contactListWhere(accountId, { searchKey: 'zebu' }, group.id) }),
    )
  })

  it('remembers a Relay connection page found through the search index, with the total', async () => {
    const accountId = await seeded()
    const other = await otherInstance()
    const where = contactListWhere(accountId, { searchKey: 'zebu' })
    const want = async (take: number, cursor?: string) =>
      (
        await kit.db.contact.findMany({
          where,
          orderBy: contactListOrder,
          take,
          ...(cursor ? { cursor: { id: cursor }, skip: 1 } : {}),
          select: { id: true },
        })
      ).map((row) => row.id)
    // Probing 10 contacts reads only "Other …" ones (they sort first): the search index finds the page.
    const ask = async (from: string[] | null = null) => {
      kit.statements.length = 0
      const ids = await searchPageIds(
        kit.deps,
        { accountId, searchKey: 'zebu', from, until: null, backward: false, take: 26 },
        { probe: 10 },
      )
      return { ids, statements: kit.statements.length }
    }
    expect(await ask()).toEqual({ ids: await want(26), statements: 2 })
    // Again: one statement, the check that nothing changed the matches.
    expect(await ask()).toEqual({ ids: await want(26), statements: 1 })
    // Its count is the search's remembered total.
    expect(await searchTotal(kit.deps, { accountId, searchKey: 'zebu' })).toEqual({ total: 1_100, counted: false })
    // A page from a cursor is another page.
    const first = await want(26)
    const cursor = await kit.db.contact.findUniqueOrThrow({ where: { id: first[24]! } })
    const next = [cursor.firstNameKey, cursor.familyNameKey, cursor.id]
    expect(await ask(next)).toEqual({ ids: await want(26, cursor.id), statements: 2 })
    expect(await ask(next)).toEqual({ ids: await want(26, cursor.id), statements: 1 })
    // A new first match, written by another instance: the first page follows it (the check, then
    // the changes since), and is remembered again.
    await upsertContacts(other, accountId, parseContacts([{ mobile: '+254799111113', firstName: 'Zebu 00000' }], 'KE'))
    const moved = await ask()
    expect(moved).toEqual({ ids: await want(26), statements: 2 })
    expect(moved.ids).not.toEqual(first)
    expect(await ask()).toEqual({ ids: await want(26), statements: 1 })
    // A page from a cursor follows too: the matches past its cursor are its window.
    expect(await ask(next)).toEqual({ ids: await want(26, cursor.id), statements: 2 })
    // Its window emptied past the page: found again in full (the check, the follow, the walk, the index).
    const after = await want(26 + WINDOW_MARGIN, cursor.id)
    await kit.db.contact.deleteMany({ where: { id: { in: after } } })
    expect(await ask(next)).toEqual({ ids: await want(26, cursor.id), statements: 4 })
    // A match written right past its cursor: followed into the page.
    await upsertContacts(other, accountId, parseContacts([{ mobile: '+254799111116', firstName: `${cursor.firstName}a` }], 'KE'))
    const past = await ask(next)
    expect(past).toEqual({ ids: await want(26, cursor.id), statements: 2 })
    expect(past.ids).toContain((await kit.db.contact.findFirstOrThrow({ where: { accountId, mobile: '+254799111116' } })).id)
    // A page read backward keeps no window: found again in full after a change (the check, the walk, the index).
    const back = async () => {
      kit.statements.length = 0
      const ids = await searchPageIds(
        kit.deps,
        { accountId, searchKey: 'zebu', from: next, until: null, backward: true, take: 26 },
        { probe: 10 },
      )
      return { ids, statements: kit.statements.length }
    }
    await back()
    expect((await back()).statements).toBe(1)
    await upsertContacts(other, accountId, parseContacts([{ mobile: '+254799111117', firstName: 'Zebu 00000' }], 'KE'))
    expect((await back()).statements).toBe(3)
    // The first page loses all 26 contacts and the margin after them: in full too.
    const gone = await kit.db.contact.findMany({ where, orderBy: contactListOrder, take: 26 + WINDOW_MARGIN, select: { id: true } })
    await kit.db.contact.deleteMany({ where: { id: { in: gone.map((row) => row.id) } } })
    expect(await ask()).toEqual({ ids: await want(26), statements: 4 })
  })

  it('sees a write that was still open when the search was counted', async () => {
    const accountId = await seeded()
    const now = new Date()
    const contact = { id: randomUUID(), mobile: '+254799222222', firstName: 'Zebu 00000b', familyName: 'Ng' }
    const keys = contactKeys(contact)
    const values = [
      contact.id,
      accountId,
      contact.mobile,
      contact.firstName,
      contact.familyName,
      keys.firstNameKey,
      keys.familyNameKey,
      keys.searchText,
    ]
    const columns = `"id", "accountId", "mobile", "firstName", "familyName", "firstNameKey", "familyNameKey", "searchText", "createdAt", "updatedAt"`
    let commit: () => Promise<void>
    if (kit.deps.dbKind === 'sqlite') {
      const writer = new BetterSqlite3(parseDatabaseUrl(kit.url).file!, { timeout: 5_000 })
      closing.push(() => writer.close())
      writer.exec('BEGIN IMMEDIATE')
      writer
        .prepare(`INSERT INTO "Contact" (${columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
        .run(...values, now.toISOString(), now.toISOString())
      commit = async () => void writer.exec('COMMIT')
    } else {
      const writer = await schemaClient(kit.url)
      closing.push(() => writer.end())
      await writer.query('BEGIN')
      await writer.query(`INSERT INTO "Contact" (${columns}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`, [...values, now])
      commit = async () => void (await writer.query('COMMIT'))
    }
    // PostgreSQL: a write that starts after the open one and ends before the count, so that the
    // count's snapshot holds the open write among its running transactions, below its upper bound.
    // (SQLite has one writer at a time.)
    if (kit.deps.dbKind === 'postgresql') await kit.seed().account()
    // Counted without the open write, and remembered.
    expect((await expectAnswer(accountId, 'zebu', true)).total).toBe(1_100)
    await expectAnswer(accountId, 'zebu', false)
    await commit()
    expect((await expectAnswer(accountId, 'zebu', false)).total).toBe(1_101)
    expect(await answerWay(accountId, 'zebu')).toBe('remembered')
  })

  it('answers like the full search through random writes and searches from two instances', async () => {
    const other = await otherInstance()
    const instances = [kit.deps, other]
    // Mobiles of the writes' own contacts; names that match "zebu" (and "zebu 0") or not.
    const mobileOf = (n: number) => `+2547980${String(n).padStart(5, '0')}`
    const instance = fc.nat(1)
    const n = fc.nat(29)
    type Op =
      | { kind: 'search'; term: string; page: number; via: number; group: boolean }
      | { kind: 'total'; term: string; via: number; group: boolean }
      | { kind: 'join' | 'leave'; n: number; via: number }
      | { kind: 'save'; n: number; name: string; via: number }
      | { kind: 'delete' | 'gender'; n: number; via: number }
      | { kind: 'prune'; digit: number; via: number }
    // Searches weigh most, over few pages, so that many find their page remembered.
    const op: fc.Arbitrary<Op> = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          kind: fc.constant('search' as const),
          term: fc.constantFrom('zebu', 'zebu 0', 'ng', 'zebu 01'),
          page: fc.integer({ min: 1, max: 3 }),
          via: instance,
          // A group's search one time in three.
          group: fc.constantFrom(false, false, true),
        }),
      },
      fc.record({
        kind: fc.constant('total' as const),
        term: fc.constantFrom('zebu', 'ng', 'zebu 01'),
        via: instance,
        group: fc.boolean(),
      }),
      // The group's members: one of the writes' own contacts joins or leaves it.
      fc.record({ kind: fc.constantFrom('join' as const, 'leave' as const), n, via: instance }),
      fc.record({ kind: fc.constant('save' as const), n, name: fc.constantFrom('Zebu 00000c', 'Zebu 2', 'Plain'), via: instance }),
      fc.record({ kind: fc.constantFrom('delete' as const, 'gender' as const), n, via: instance }),
      // Ten seeded matches at once ("Zebu 000d0" to "Zebu 000d9"): pages 1 to 3 lose part of their windows.
      fc.record({ kind: fc.constant('prune' as const), digit: fc.nat(7), via: instance }),
    )
    let remembered = 0
    let rememberedOfGroup = 0
    let followed = 0
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 8, maxLength: 24 }), async (ops) => {
        const accountId = await seeded()
        const { id: groupId } = await kit.db.group.findFirstOrThrow({ where: { accountId } })
        const listOf = (group: boolean) => ({ accountId, ...(group ? { groupId } : {}) })
        // Every search twice before the writes start, so that each is remembered by one instance.
        for (const via of [0, 1]) for (const term of ['zebu', 'ng']) await page(accountId, term, 1, instances[via])
        for (const o of ops) {
          const deps = instances[o.via]!
          if (o.kind === 'search') {
            const request = pageRequest({ search: o.term, page: o.page, perPage: 25 })
            const want = await prismaPage(kit.db, listOf(o.group), { search: o.term, page: o.page, perPage: 25 }, ['firstName', 'gender'])
            // A group's search follows no change, so it is asked twice: the second finds it remembered.
            for (let again = 0; again < (o.group ? 2 : 1); again++) {
              kit.statements.length = 0
              const got = await listContacts(deps, { ...listOf(o.group), request }, COLUMNS)
              if (!got.counted) remembered++
              if (!got.counted && o.group) rememberedOfGroup++
              if (!got.counted && o.via === 0 && kit.statements.length === 3) followed++
              expect({ rows: got.rows, total: got.total }, JSON.stringify(o)).toEqual(want)
            }
          } else if (o.kind === 'total') {
            const got = await searchTotal(deps, { ...listOf(o.group), searchKey: o.term })
            if (!got.counted) remembered++
            expect(got.total, JSON.stringify(o)).toBe(
              await deps.db.contact.count({ where: contactListWhere(accountId, { searchKey: o.term }, o.group ? groupId : undefined) }),
            )
          } else if (o.kind === 'join' || o.kind === 'leave') {
            const found = await deps.db.contact.findFirst({ where: { accountId, mobile: mobileOf(o.n) }, select: { id: true } })
            if (!found) continue
            // Joined as the SMS opt-in joins (Prisma's upsert; the trigger copies the sort keys).
            if (o.kind === 'join')
              await deps.db.membership.upsert({
                where: { groupId_contactId: { groupId, contactId: found.id } },
                create: { groupId, contactId: found.id, selfSubscribed: true },
                update: {},
              })
            else await delistContacts(deps, accountId, groupId, [mobileOf(o.n)])
          } else if (o.kind === 'prune') {
            await deps.db.contact.deleteMany({ where: { accountId, firstName: { startsWith: `Zebu 000${o.digit}` } } })
          } else if (o.kind === 'save') {
            await upsertContacts(deps, accountId, parseContacts([{ mobile: mobileOf(o.n), firstName: o.name, familyName: 'Ng' }], 'KE'))
          } else {
            const found = await deps.db.contact.findFirst({ where: { accountId, mobile: mobileOf(o.n) }, select: { id: true } })
            if (!found) continue
            if (o.kind === 'delete') await deps.db.contact.delete({ where: { id: found.id } })
            else await deps.db.contact.update({ where: { id: found.id }, data: { gender: o.n % 2 ? 'male' : 'female' } })
          }
        }
      }),
      { numRuns: 10, seed: 42 },
    )
    // The remembered path was taken, not only the full search, and changes were followed.
    expect(remembered).toBeGreaterThan(0)
    expect(rememberedOfGroup).toBeGreaterThan(0)
    expect(followed).toBeGreaterThan(0)
  })

  it.runIf(target.name === 'sqlite')('runs in full when an edit since its count is gone (SQLite)', async () => {
    const accountId = await seeded()
    await expectAnswer(accountId, 'zebu', true)
    await upsertContacts(kit.deps, accountId, parseContacts([{ mobile: '+254799111114', firstName: 'Zebu 00000e' }], 'KE'))
    await upsertContacts(kit.deps, accountId, parseContacts([{ mobile: '+254799111115', firstName: 'Zebu 00000f' }], 'KE'))
    // The first of the two edits purged: the changes since the count are not all there to follow.
    await kit.db.$executeRawUnsafe(
      `DELETE FROM "ContactEdit" WHERE "accountId" = ? AND "change" = (SELECT MIN("change") FROM "ContactEdit" WHERE "accountId" = ? AND "change" > (SELECT "changes" - 2 FROM "ListTotal" WHERE "listId" = ?))`,
      accountId,
      accountId,
      accountId,
    )
    expect(await answerWay(accountId, 'zebu')).toBe('counted')
  })

  it.runIf(target.name === 'postgresql')('still writes the previous release’s change rows, and purges them after an hour', async () => {
    // During a rolling deploy the instances of the previous release check "ContactChange".
    const accountId = await seeded()
    const rows = (id: string) =>
      kit.db
        .$queryRawUnsafe<{ n: bigint }[]>(`SELECT COUNT(*) AS "n" FROM "ContactChange" WHERE "accountId" = $1`, id)
        .then((r) => Number(r[0]!.n))
    expect(await rows(accountId)).toBeGreaterThanOrEqual(1)
    await kit.db.$executeRawUnsafe(`UPDATE "ContactChange" SET "at" = now() - interval '61 minutes' WHERE "accountId" = $1`, accountId)
    const young = (await kit.seed().account().contacts(1)).account.id
    expect(await rows(young)).toBe(1)
    expect(await purgeContactChanges(kit.deps, { minIntervalMs: 0 })).toBeGreaterThanOrEqual(1)
    expect(await rows(accountId)).toBe(0)
    expect(await rows(young)).toBe(1)
  })

  it('purges contact edit rows older than an hour, and only those', async () => {
    const accountId = await seeded()
    const param = target.name === 'sqlite' ? '?' : '$1'
    // An hour and a minute pass for every row written so far.
    const age = (where: string, ...values: string[]) =>
      kit.db.$executeRawUnsafe(
        target.name === 'sqlite'
          ? `UPDATE "ContactEdit" SET "at" = unixepoch() - 3660 ${where}`
          : `UPDATE "ContactEdit" SET "at" = now() - interval '61 minutes' ${where}`,
        ...values,
      )
    await age('')
    const edits = (id: string) =>
      kit.db
        .$queryRawUnsafe<{ n: number | bigint }[]>(`SELECT COUNT(*) AS "n" FROM "ContactEdit" WHERE "accountId" = ${param}`, id)
        .then((rows) => Number(rows[0]!.n))
    const old = await edits(accountId)
    expect(old).toBe(1_120)
    // A young row after them: another account's contact, written now.
    const other = (await kit.seed().account().contacts(1)).account.id
    expect(await edits(other)).toBe(1)
    expect(await purgeContactChanges(kit.deps, { minIntervalMs: 0 })).toBeGreaterThanOrEqual(old)
    expect(await edits(accountId)).toBe(0)
    expect(await edits(other)).toBe(1)
    // Within the interval of the last purge nothing is done.
    await age(`WHERE "accountId" = ${param}`, other)
    expect(await purgeContactChanges(kit.deps, { minIntervalMs: 60_000 })).toBe(0)
    expect(await edits(other)).toBe(1)
    // With no young row left, every old one goes.
    expect(await purgeContactChanges(kit.deps, { minIntervalMs: 0 })).toBe(1)
    expect(await edits(other)).toBe(0)
  })
})
