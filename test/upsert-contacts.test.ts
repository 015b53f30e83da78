// The bulk write path (src/messaging/upsert-contacts.ts): every raw statement on both databases.
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { schemaClient, targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { mobile } from './kit/seed.js'
import { parseContacts, type ContactInput } from '../src/messaging/contacts.js'
import { addContactsToGroup, upsertContacts } from '../src/messaging/upsert-contacts.js'

const ALL_FIELDS = (i: number): ContactInput => ({
  firstName: `Full ${i}`,
  familyName: 'Fields',
  otherNames: 'O',
  email: `full${i}@example.com`,
  gender: 'f',
  organization: 'Org',
  whatsappNumber: 'w',
  viberNumber: 'v',
  skypeId: 's',
  facebook: 'f',
  twitter: 't',
  linkedin: 'l',
  groupme: 'g',
  wechat: 'c',
  youtube: 'y',
})

describe.each(targets)('bulk contact upsert on $name', (target) => {
  const kit = useKit(target)
  const upsert = async (accountId: string, inputs: ContactInput[], groupId?: string) =>
    (await upsertContacts(kit.deps, accountId, parseContacts(inputs, 'KE'), groupId)).saved
  const row = (accountId: string, m: string) => kit.db.contact.findUniqueOrThrow({ where: { accountId_mobile: { accountId, mobile: m } } })

  it('counts created and updated contacts, mixed in one request', async () => {
    const s = await kit.seed().account().group().contacts(3)
    const fresh = [mobile(), mobile()]
    const result = await addContactsToGroup(kit.deps, s.account.id, s.group.id, [
      { mobile: s.contacts[0]!.mobile, firstName: 'Again 0' },
      { mobile: fresh[0], firstName: 'New 0' },
      { mobile: s.contacts[1]!.mobile, firstName: 'Again 1' },
      { mobile: fresh[1], firstName: 'New 1' },
    ])
    expect(result).toEqual({ groupId: s.group.id, count: 4, created: 2, joined: expect.any(Map) })
    const saved = await upsert(s.account.id, [
      { mobile: s.contacts[2]!.mobile, firstName: 'X' },
      { mobile: mobile(), firstName: 'Y' },
    ])
    expect(saved).toEqual([
      { id: s.contacts[2]!.id, created: false },
      { id: expect.any(String), created: true },
    ])
    expect((await row(s.account.id, s.contacts[0]!.mobile)).id).toBe(s.contacts[0]!.id)
    expect(await kit.db.contact.count({ where: { accountId: s.account.id } })).toBe(6)
    expect(await kit.db.membership.count({ where: { groupId: s.group.id } })).toBe(5)
  })

  it('reports who joined each group: new memberships only, whatever the order and repetition of the input', async () => {
    const s = await kit.seed().account().group().group()
    const [a, b] = s.groups
    const [m1, m2, m3] = [mobile(), mobile(), mobile()]
    const first = await upsertContacts(kit.deps, s.account.id, parseContacts([{ mobile: m1, firstName: 'One' }], 'KE'), a!.id)
    const one = first.saved[0]!.id
    expect([...first.joined]).toEqual([[a!.id, [one]]])
    const second = await upsertContacts(
      kit.deps,
      s.account.id,
      parseContacts(
        [
          { mobile: m1, firstName: 'One again', groups: [b!.id] },
          { mobile: m2, firstName: 'Two' },
          { mobile: m3, firstName: 'Three', groups: [b!.id, b!.id] },
          { mobile: m2.replace('+254', '0'), firstName: 'Two again' },
        ],
        'KE',
      ),
      a!.id,
    )
    const [, two, three] = second.saved.map((c) => c.id)
    // m1 was on A already: it joined B only.
    expect(new Set(second.joined.get(a!.id))).toEqual(new Set([two, three]))
    expect(new Set(second.joined.get(b!.id))).toEqual(new Set([one, three]))
    expect(second.joined.size).toBe(2)
    const again = await upsertContacts(kit.deps, s.account.id, parseContacts([{ mobile: m3, firstName: 'Three' }], 'KE'), b!.id)
    expect(again.joined.size).toBe(0)
  })

  it('overwrites only the fields sent: an absent field keeps its value, a null clears it', async () => {
    const { account } = await kit.seed().account()
    const m = mobile()
    const [first] = await upsert(account.id, [{ mobile: m, ...ALL_FIELDS(1) }])
    const before = await row(account.id, m)
    await upsert(account.id, [{ mobile: m, firstName: 'Renamed', twitter: null, organization: 'New Org' }])
    const after = await row(account.id, m)
    expect(after).toEqual({
      ...before,
      firstName: 'Renamed',
      firstNameKey: 'renamed',
      twitter: null,
      organization: 'New Org',
      searchText: `renamed\nfields\no\n${m}\nfull1@example.com\nnew org`,
      updatedAt: expect.any(Date),
    })
    expect(after.id).toBe(first!.id)
    expect(after.createdAt).toEqual(before.createdAt)
    expect(after.updatedAt.getTime()).toBeGreaterThanOrEqual(before.updatedAt.getTime())
  })

  it('makes one contact of several inputs with one mobile; later fields win, earlier ones stay', async () => {
    const s = await kit.seed().account().group().group()
    const [a, b] = s.groups
    const m = mobile()
    const saved = await upsert(
      s.account.id,
      [
        { mobile: m, firstName: 'First', email: 'first@example.com', groups: [a!.id] },
        { mobile: m.replace('+254', '0'), firstName: 'Second', familyName: 'Later', groups: [b!.id, a!.id] },
      ],
      a!.id,
    )
    expect(saved[0]).toEqual({ id: saved[1]!.id, created: true })
    expect(saved[1]!.created).toBe(true)
    expect(await row(s.account.id, m)).toMatchObject({ firstName: 'Second', familyName: 'Later', email: 'first@example.com' })
    expect(await kit.db.contact.count({ where: { accountId: s.account.id } })).toBe(1)
    const memberships = await kit.db.membership.findMany({ where: { contactId: saved[0]!.id }, orderBy: { groupId: 'asc' } })
    expect(memberships.map((x) => x.groupId)).toEqual([a!.id, b!.id].sort())
  })

  it('never duplicates a membership and keeps how the contact joined', async () => {
    const s = await kit.seed().account().group().contacts(2)
    await kit.db.membership.update({
      where: { groupId_contactId: { groupId: s.group.id, contactId: s.contacts[0]!.id } },
      data: { selfSubscribed: true },
    })
    const inputs = s.contacts.map((c) => ({ mobile: c.mobile, firstName: c.firstName, groups: [s.group.id, s.group.id] }))
    await addContactsToGroup(kit.deps, s.account.id, s.group.id, inputs)
    await addContactsToGroup(kit.deps, s.account.id, s.group.id, inputs)
    const memberships = await kit.db.membership.findMany({ where: { groupId: s.group.id }, orderBy: { selfSubscribed: 'desc' } })
    expect(memberships.map((x) => [x.contactId, x.selfSubscribed])).toEqual([
      [s.contacts[0]!.id, true],
      [s.contacts[1]!.id, false],
    ])
  })

  it('keeps accounts apart: a mobile of another account is a new contact here', async () => {
    const owner = await kit
      .seed()
      .account('Owner')
      .contacts(1, () => ({ firstName: 'Owned', email: 'owned@example.com' }))
    const other = await kit.seed().account('Other').group()
    const m = owner.contacts[0]!.mobile
    const result = await addContactsToGroup(kit.deps, other.account.id, other.group.id, [{ mobile: m, firstName: 'Mine' }])
    expect(result).toEqual({ groupId: other.group.id, count: 1, created: 1, joined: expect.any(Map) })
    expect(await row(owner.account.id, m)).toMatchObject({ id: owner.contacts[0]!.id, firstName: 'Owned', email: 'owned@example.com' })
    expect(await row(other.account.id, m)).toMatchObject({ firstName: 'Mine', email: null })
    expect(await kit.db.membership.count({ where: { contactId: owner.contacts[0]!.id } })).toBe(0)
  })

  it('recomputes the search text and sort keys from the merged row', async () => {
    const s = await kit.seed().account().group()
    const [x, y] = [mobile(), mobile()]
    await addContactsToGroup(kit.deps, s.account.id, s.group.id, [
      { mobile: x, firstName: 'Aaron', familyName: 'Zulu', organization: 'Acme' },
      { mobile: y, firstName: 'Bella', familyName: 'Young' },
    ])
    // Renamed past Bella, with a name JavaScript lower-cases and SQLite's lower() would not.
    await addContactsToGroup(kit.deps, s.account.id, s.group.id, [{ mobile: x, firstName: 'ÉMILE' }])
    const list = await kit.rest('GET', '/api/contacts', { key: s.key })
    expect(list.body.data.map((c: any) => [c.first_name, c.family_name, c.organization])).toEqual([
      ['Bella', 'Young', null],
      ['ÉMILE', 'Zulu', 'Acme'],
    ])
    for (const search of ['émile', 'zulu', 'acme']) {
      const found = await kit.rest('GET', `/api/contacts?search=${encodeURIComponent(search)}`, { key: s.key })
      expect(
        found.body.data.map((c: any) => c.first_name),
        search,
      ).toEqual(['ÉMILE'])
    }
    const stale = await kit.rest('GET', '/api/contacts?search=aaron', { key: s.key })
    expect(stale.body.data).toEqual([])
    expect(await row(s.account.id, x)).toMatchObject({ firstNameKey: 'émile', familyNameKey: 'zulu' })
  })

  it('writes 1,500 contacts with every field set (the widest chunks) and updates them all', async () => {
    const s = await kit.seed().account().group()
    const inputs = Array.from({ length: 1500 }, (_, i) => ({ mobile: mobile(), ...ALL_FIELDS(i) }))
    expect(await addContactsToGroup(kit.deps, s.account.id, s.group.id, inputs)).toEqual({
      groupId: s.group.id,
      count: 1500,
      created: 1500,
      joined: new Map([[s.group.id, expect.any(Array)]]),
    })
    const again = inputs.map((c) => ({ ...c, email: null, youtube: 'again' }))
    expect(await addContactsToGroup(kit.deps, s.account.id, s.group.id, again)).toEqual({
      groupId: s.group.id,
      count: 1500,
      created: 0,
      joined: new Map(),
    })
    expect(await kit.db.contact.count({ where: { accountId: s.account.id, email: null, youtube: 'again', twitter: 't' } })).toBe(1500)
  })

  it('takes 10,000 contacts in one request, new and then existing, in a bounded number of statements', async () => {
    const s = await kit.seed().account().group()
    const inputs = Array.from({ length: 10_000 }, (_, i) => ({ mobile: mobile(), firstName: `Bulk ${String(i).padStart(5, '0')}` }))
    expect(await addContactsToGroup(kit.deps, s.account.id, s.group.id, inputs)).toEqual({
      groupId: s.group.id,
      count: 10_000,
      created: 10_000,
      joined: expect.any(Map),
    })
    kit.statements.length = 0
    const renamed = inputs.map((c, i) => ({ ...c, familyName: `Again ${i}` }))
    expect(await addContactsToGroup(kit.deps, s.account.id, s.group.id, renamed)).toEqual({
      groupId: s.group.id,
      count: 10_000,
      created: 0,
      joined: new Map(),
    })
    const writes = kit.statements.filter((q) => /^\s*(INSERT|UPDATE|DELETE)/i.test(q))
    // 10 chunks: one contact upsert each, and one membership insert of 10,000; no per-row UPDATE.
    expect(writes.filter((q) => /INSERT INTO "Contact"/.test(q))).toHaveLength(10)
    expect(writes.filter((q) => /INSERT INTO "Membership"/.test(q))).toHaveLength(1)
    expect(writes).toHaveLength(11)
    // The group is read once per request.
    expect(kit.statements.filter((q) => /FROM \S*["`]Group["`]/.test(q))).toHaveLength(1)
    expect(await kit.db.contact.count({ where: { accountId: s.account.id, familyName: { startsWith: 'Again' } } })).toBe(10_000)
    expect(await kit.db.membership.count({ where: { groupId: s.group.id } })).toBe(10_000)
  }, 120_000)

  it('gives new contacts time-ordered ids (UUID version 7): in the order of the request, after every earlier one', async () => {
    const s = await kit.seed().account()
    const first = await upsert(s.account.id, [
      { mobile: mobile(), firstName: 'A' },
      { mobile: mobile(), firstName: 'B' },
    ])
    const second = await upsert(s.account.id, [
      { mobile: mobile(), firstName: 'C' },
      { mobile: mobile(), firstName: 'D' },
      { mobile: mobile(), firstName: 'E' },
    ])
    const ids = [...first, ...second].map((c) => c.id)
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect([...ids].sort()).toEqual(ids)
    // The database orders them the same way (the name order's last key and the primary key).
    const stored = await kit.db.contact.findMany({ where: { accountId: s.account.id }, orderBy: { id: 'asc' }, select: { id: true } })
    expect(stored.map((c) => c.id)).toEqual(ids)
  })

  it('writes only the rows a request changes: the same contacts again cost no contact write and keep their updatedAt', async () => {
    const s = await kit.seed().account().group().group()
    const [first, second] = s.groups
    // In mobile order, the order the chunks of 1,000 are written in.
    const inputs = Array.from({ length: 1200 }, (_, i) => ({ mobile: mobile(), firstName: `Same ${i}`, familyName: 'Kamau' })).sort(
      (a, b) => (a.mobile < b.mobile ? -1 : 1),
    )
    await addContactsToGroup(kit.deps, s.account.id, first!.id, inputs)
    const before = new Map((await kit.db.contact.findMany({ where: { accountId: s.account.id } })).map((c) => [c.mobile, c]))
    // One stored search text out of date (as an older release computed it): that row is rewritten.
    const stale = inputs[700]!.mobile
    await kit.db.contact.update({ where: { accountId_mobile: { accountId: s.account.id, mobile: stale } }, data: { searchText: 'old' } })
    await new Promise((resolve) => setTimeout(resolve, 5))
    kit.statements.length = 0
    const again = inputs.map((c, i) => (i === 3 ? { ...c, email: 'changed@example.com' } : c))
    expect(await addContactsToGroup(kit.deps, s.account.id, second!.id, again)).toEqual({
      groupId: second!.id,
      count: 1200,
      created: 0,
      joined: new Map([[second!.id, expect.any(Array)]]),
    })
    // Two chunks read; only the one holding a changed row writes (its two changed rows).
    expect(kit.statements.filter((q) => /INSERT INTO "Contact"/.test(q))).toHaveLength(1)
    const after = await kit.db.contact.findMany({ where: { accountId: s.account.id } })
    const changed = after.filter((c) => c.updatedAt.getTime() !== before.get(c.mobile)!.updatedAt.getTime()).map((c) => c.mobile)
    expect(changed.sort()).toEqual([inputs[3]!.mobile, stale].sort())
    expect(after.find((c) => c.mobile === stale)!.searchText).toBe(before.get(stale)!.searchText)
    expect(after.find((c) => c.mobile === inputs[3]!.mobile)!.email).toBe('changed@example.com')
    // Every contact joined the second group, unchanged ones included.
    expect(await kit.db.membership.count({ where: { groupId: second!.id } })).toBe(1200)
  }, 60_000)

  it('refuses an unknown group at item 9,999 of 10,000 and writes nothing', async () => {
    const s = await kit
      .seed()
      .account()
      .group()
      .contacts(1, () => ({ firstName: 'Before' }))
    const inputs: ContactInput[] = Array.from({ length: 10_000 }, (_, i) => ({ mobile: mobile(), firstName: `Item ${i}` }))
    inputs[0] = { mobile: s.contacts[0]!.mobile, firstName: 'After' }
    inputs[9_999] = { ...inputs[9_999], groups: [randomUUID()] }
    const refused = await kit.rest('POST', `/api/contact/group/${s.group.id}/add-contacts`, {
      key: s.key,
      body: { contacts: inputs.map((c) => ({ mobile: c.mobile, first_name: c.firstName, groups: c.groups ?? undefined })) },
    })
    expect(refused.status).toBe(422)
    expect(refused.body.details).toEqual([{ field: 'contacts[9999].groups[0]', message: expect.stringMatching(/^unknown group /) }])
    expect(await kit.db.contact.count({ where: { accountId: s.account.id } })).toBe(1)
    expect(await row(s.account.id, s.contacts[0]!.mobile)).toMatchObject({ firstName: 'Before' })
  }, 60_000)

  it('refuses bad items at 7,000 and 8,000 of 10,000 (REST) with every detail in order, and writes nothing', async () => {
    const s = await kit
      .seed()
      .account()
      .group()
      .contacts(1, () => ({ firstName: 'Before' }))
    const contacts: Record<string, unknown>[] = Array.from({ length: 10_000 }, (_, i) => ({ mobile: mobile(), first_name: `Item ${i}` }))
    contacts[0] = { mobile: s.contacts[0]!.mobile, first_name: 'After' }
    contacts[6_999] = { mobile: '0700', first_name: 'Short' }
    contacts[7_999] = { first_name: 5, mobile: null, family_name: ['x'], unknown: 1 }
    const refused = await kit.rest('POST', `/api/contact/group/${s.group.id}/add-contacts`, { key: s.key, body: { contacts } })
    expect(refused.status).toBe(422)
    expect(refused.body).toEqual({
      error: 'The request has invalid fields',
      code: 'VALIDATION_FAILED',
      details: [
        { field: 'contacts[7999].first_name', message: 'first_name must be a string' },
        { field: 'contacts[7999].family_name', message: 'family_name must be a string' },
        { field: 'contacts[7999].mobile', message: 'mobile is required' },
      ],
    })
    // With the body's types right, the items' own rules speak, again for both and nothing else.
    contacts[7_999] = { mobile: '+254 700', first_name: '  ' }
    const again = await kit.rest('POST', `/api/contact/group/${s.group.id}/add-contacts`, { key: s.key, body: { contacts } })
    expect(again.status).toBe(422)
    expect(again.body.details).toEqual([
      { field: 'contacts[6999].mobile', message: 'mobile "0700" is not a valid mobile number' },
      { field: 'contacts[7999].mobile', message: 'mobile "+254 700" is not a valid mobile number' },
      // The field is renamed for the legacy body; the message names the GraphQL field, as it always has.
      { field: 'contacts[7999].first_name', message: 'firstName is required' },
    ])
    expect(await kit.db.contact.count({ where: { accountId: s.account.id } })).toBe(1)
    expect(await row(s.account.id, s.contacts[0]!.mobile)).toMatchObject({ firstName: 'Before' })
    expect(await kit.db.membership.count({ where: { groupId: s.group.id } })).toBe(1)
  }, 60_000)

  it('rolls back every chunk when the database fails in the last one', async () => {
    const s = await kit
      .seed()
      .account()
      .group()
      .contacts(1, () => ({ firstName: 'Before' }))
    const inputs = Array.from({ length: 2500 }, (_, i) => ({ mobile: mobile(), firstName: `Item ${i}` }))
    inputs[0] = { mobile: s.contacts[0]!.mobile, firstName: 'After' }
    // A trigger fails the insert of the last contact, after two chunks were written. (On SQLite
    // not with RAISE(): the adapter reports that as a foreign-key violation, which is retried.)
    const poisoned = inputs
      .map((c) => c.mobile)
      .sort()
      .at(-1)!
    if (target.name === 'sqlite') {
      await kit.db.$executeRawUnsafe(
        `CREATE TRIGGER poison BEFORE INSERT ON "Contact" WHEN NEW.mobile = '${poisoned}' BEGIN INSERT INTO "Account" ("id", "name") VALUES (NULL, 'poisoned'); END`,
      )
    } else {
      await kit.db.$executeRawUnsafe(
        `CREATE FUNCTION poison() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'poisoned'; END $$ LANGUAGE plpgsql`,
      )
      await kit.db.$executeRawUnsafe(
        `CREATE TRIGGER poison BEFORE INSERT ON "Contact" FOR EACH ROW WHEN (NEW.mobile = '${poisoned}') EXECUTE FUNCTION poison()`,
      )
    }
    try {
      await expect(addContactsToGroup(kit.deps, s.account.id, s.group.id, inputs)).rejects.toThrow(
        target.name === 'sqlite' ? /NOT NULL constraint failed: Account.id/ : /poisoned/,
      )
      expect(await kit.db.contact.count({ where: { accountId: s.account.id } })).toBe(1)
      expect(await row(s.account.id, s.contacts[0]!.mobile)).toMatchObject({ firstName: 'Before' })
      expect(await kit.db.membership.count({ where: { groupId: s.group.id } })).toBe(1)
    } finally {
      await kit.db.$executeRawUnsafe(target.name === 'sqlite' ? 'DROP TRIGGER poison' : 'DROP TRIGGER poison ON "Contact"')
    }
    expect(await addContactsToGroup(kit.deps, s.account.id, s.group.id, inputs)).toEqual({
      groupId: s.group.id,
      count: 2500,
      created: 2499,
      joined: expect.any(Map),
    })
  }, 60_000)

  it('answers 404 for a missing group before the items are judged, and 422 when the group exists', async () => {
    const s = await kit.seed().account().group()
    const bad = [{ mobile: 'not a number', firstName: 'X' }]
    await expect(addContactsToGroup(kit.deps, s.account.id, randomUUID(), bad)).rejects.toMatchObject({ code: 'NOT_FOUND' })
    await expect(addContactsToGroup(kit.deps, s.account.id, s.group.id, bad)).rejects.toMatchObject({ code: 'VALIDATION_FAILED' })
    await expect(addContactsToGroup(kit.deps, s.account.id, randomUUID(), [{ mobile: mobile(), firstName: 'Fine' }])).rejects.toMatchObject(
      { code: 'NOT_FOUND' },
    )
    expect(await kit.db.contact.count({ where: { accountId: s.account.id } })).toBe(0)
  })

  it.runIf(target.name === 'postgresql')(
    'retries when another transaction inserts a mobile it read as missing, keeping that row',
    async () => {
      const { account } = await kit.seed().account()
      const m = mobile()
      const blocker = await schemaClient(kit.url)
      try {
        await blocker.query('BEGIN')
        const blockerId = randomUUID()
        await blocker.query(
          `INSERT INTO "Contact" ("id", "accountId", "mobile", "firstName", "email", "firstNameKey", "familyNameKey", "searchText", "updatedAt")
         VALUES ($1, $2, $3, 'Blocker', 'kept@example.com', 'blocker', '', 'blocker', now())`,
          [blockerId, account.id, m],
        )
        const pid = (await blocker.query('SELECT pg_backend_pid() AS pid')).rows[0].pid
        // The upsert reads the mobile as missing (uncommitted) and waits on the unique index.
        const saving = upsert(account.id, [{ mobile: m, firstName: 'Racer' }])
        const deadline = Date.now() + 15_000
        for (;;) {
          const { rows } = await blocker.query('SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [
            pid,
          ])
          if (rows[0].n > 0) break
          if (Date.now() > deadline) throw new Error('the upsert never waited on the blocker')
          await new Promise((r) => setTimeout(r, 20))
        }
        await blocker.query('COMMIT')
        expect(await saving).toEqual([{ id: blockerId, created: false }])
        expect(await row(account.id, m)).toMatchObject({
          id: blockerId,
          firstName: 'Racer',
          email: 'kept@example.com',
          searchText: `racer\n${m}\nkept@example.com`,
        })
      } finally {
        await blocker.end()
      }
    },
  )
})
