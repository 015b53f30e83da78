// Each membership carries its contact's sort keys (migration membership_sort_keys), so that a
// group's list walks its own index in name order (src/messaging/contact-list.ts). The copies must
// be the contact's keys whichever way a membership is written (add-contacts writes them, a Prisma
// write such as the SMS opt-in leaves them to a trigger) and whenever a contact is renamed, or the
// group's pages come out in the wrong order. Every page is compared with Prisma's findMany, which
// orders by the contacts' own keys.
import { describe, expect, it } from 'vitest'
import { schemaClient, targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { prismaPage } from './kit/contact-pages.js'
import { listContacts } from '../src/messaging/contact-list.js'
import { pageRequest } from '../src/messaging/paging.js'
import { addContactsToGroup, saveContact } from '../src/messaging/upsert-contacts.js'
import { createGroup } from '../src/messaging/groups.js'

describe.each(targets)('group members’ sort keys on $name', (target) => {
  const kit = useKit(target)

  /** The account's memberships whose keys are missing or not their contact's: none may be. */
  async function staleMemberships(accountId: string): Promise<number> {
    const [row] = await kit.db.$queryRaw<
      { n: number | bigint }[]
    >`SELECT COUNT(*) AS n FROM "Membership" m JOIN "Contact" c ON c."id" = m."contactId"
      WHERE c."accountId" = ${accountId} AND (m."firstNameKey" IS NULL OR m."familyNameKey" IS NULL
        OR m."firstNameKey" <> c."firstNameKey" OR m."familyNameKey" <> c."familyNameKey")`
    return Number(row!.n)
  }

  /** Every page of the group's list (and one past its end) against Prisma's findMany and count. */
  async function expectGroupPages(accountId: string, groupId: string, perPage: number) {
    const list = { accountId, groupId }
    const { total } = await prismaPage(kit.db, list, { page: 1, perPage }, ['firstName'])
    for (let page = 1; page <= Math.ceil(total / perPage) + 1; page++) {
      const want = await prismaPage(kit.db, list, { page, perPage }, ['firstName'])
      const got = await listContacts(kit.deps, { ...list, request: pageRequest({ page, perPage }) }, ['id', 'firstName'])
      expect({ rows: got.rows, total: got.total }, `page ${page}`).toEqual(want)
    }
    return total
  }

  it('moves a renamed member to its new place in every group it is in, on every page', async () => {
    const s = await kit
      .seed()
      .account('Renames')
      .group()
      .contacts(12, (i) => ({ firstName: `M${String(i).padStart(2, '0')}` }))
    const second = (await createGroup(kit.deps, s.account.id, { name: 'Second' })).group.id
    await addContactsToGroup(
      kit.deps,
      s.account.id,
      second,
      s.contacts.slice(0, 6).map((c) => ({ mobile: c.mobile, firstName: c.firstName })),
    )
    expect(await expectGroupPages(s.account.id, s.group.id, 5)).toBe(12)

    // The first member renamed to sort last, the last to sort first, one in the middle renamed by
    // its family name alone: the save's upsert updates the contacts, the trigger their memberships.
    await saveContact(kit.deps, s.account.id, { mobile: s.contacts[0]!.mobile, firstName: 'Zed' })
    await saveContact(kit.deps, s.account.id, { mobile: s.contacts[11]!.mobile, firstName: 'Aaron' })
    await saveContact(kit.deps, s.account.id, { mobile: s.contacts[5]!.mobile, firstName: 'M05', familyName: 'Zulu' })
    // And add-contacts renaming one that is already a member (the membership stays, its keys move).
    await addContactsToGroup(kit.deps, s.account.id, s.group.id, [{ mobile: s.contacts[3]!.mobile, firstName: 'Abel' }])

    expect(await staleMemberships(s.account.id)).toBe(0)
    for (const perPage of [1, 5]) {
      expect(await expectGroupPages(s.account.id, s.group.id, perPage)).toBe(12)
      expect(await expectGroupPages(s.account.id, second, perPage)).toBe(6)
    }
    const first = await listContacts(
      kit.deps,
      { accountId: s.account.id, groupId: s.group.id, request: pageRequest({ page: 1, perPage: 2 }) },
      ['id', 'firstName'],
    )
    expect(first.rows.map((r) => r.firstName)).toEqual(['Aaron', 'Abel'])
    const last = await listContacts(
      kit.deps,
      { accountId: s.account.id, groupId: s.group.id, request: pageRequest({ page: 6, perPage: 2 }) },
      ['id', 'firstName'],
    )
    expect(last.rows.map((r) => r.firstName)).toEqual(['M10', 'Zed'])
  })

  it('gives a membership written without its keys (as the SMS opt-in writes it) the contact’s keys', async () => {
    const s = await kit
      .seed()
      .account('Opt-in')
      .contacts(5, (i) => ({ firstName: ['Eve', 'Bob', 'Dan', 'Cat', 'Ann'][i]! }))
    const groupId = (await createGroup(kit.deps, s.account.id, { name: 'Joined by SMS' })).group.id
    for (const c of s.contacts)
      await kit.db.membership.upsert({
        where: { groupId_contactId: { groupId, contactId: c.id } },
        create: { groupId, contactId: c.id, selfSubscribed: true },
        update: { selfSubscribed: true },
      })
    expect(await staleMemberships(s.account.id)).toBe(0)
    expect(await expectGroupPages(s.account.id, groupId, 2)).toBe(5)
    const all = await listContacts(kit.deps, { accountId: s.account.id, groupId, request: pageRequest({ page: 1, perPage: 10 }) }, [
      'id',
      'firstName',
    ])
    expect(all.rows.map((r) => r.firstName)).toEqual(['Ann', 'Bob', 'Cat', 'Dan', 'Eve'])
  })

  it.runIf(target.name === 'postgresql')(
    'a membership written while its contact’s rename is uncommitted waits for it and takes the new keys',
    async () => {
      const s = await kit
        .seed()
        .account('Race')
        .contacts(1, () => ({ firstName: 'Old' }))
      const groupId = (await createGroup(kit.deps, s.account.id, { name: 'Race' })).group.id
      const renamer = await schemaClient(kit.url)
      try {
        await renamer.query('BEGIN')
        await renamer.query(`UPDATE "Contact" SET "firstName" = 'Zoe', "firstNameKey" = 'zoe' WHERE "id" = $1`, [s.contacts[0]!.id])
        // The rename holds the contact's row; the membership's trigger must wait for it (FOR SHARE).
        let settled = false
        const enlisting = kit.db.membership.create({ data: { groupId, contactId: s.contacts[0]!.id } }).finally(() => {
          settled = true
        })
        // The insert is blocked on the contact's row lock: pg_locks shows a session waiting for the
        // renaming transaction (however long the insert takes to get there).
        const waitingForRename = `SELECT 1 FROM pg_locks WHERE NOT granted AND locktype = 'transactionid'
          AND transactionid::text = pg_current_xact_id()::text`
        while (!(await renamer.query(waitingForRename)).rowCount && !settled) await new Promise((resolve) => setTimeout(resolve, 10))
        expect(settled).toBe(false)
        await renamer.query('COMMIT')
        await enlisting
      } finally {
        await renamer.end()
      }
      const [membership] = await kit.db.$queryRawUnsafe<{ firstNameKey: string }[]>(
        `SELECT "firstNameKey" FROM "Membership" WHERE "groupId" = $1`,
        groupId,
      )
      expect(membership!.firstNameKey).toBe('zoe')
      expect(await staleMemberships(s.account.id)).toBe(0)
    },
  )
})
