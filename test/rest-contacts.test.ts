import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { mobile } from './kit/seed.js'
import { anyUuid } from './kit/matchers.js'

describe.each(targets)('REST contacts on $name', (target) => {
  const kit = useKit(target)

  it('saves a new contact, then overwrites only the given fields for any spelling of its number', async () => {
    const s = await kit.seed().account().group({ name: 'VIP' })
    const added = await kit.rest('POST', '/api/contact/save', {
      key: s.key,
      body: { mobile: '0712 000 001', first_name: 'Wanjiru', family_name: 'K', email: 'w@example.com', groups: [s.group.id] },
    })
    expect(added).toMatchObject({ status: 200, body: { reference: anyUuid(), new: true, message: 'Contact Added' } })
    for (const spelling of ['+254712000001', '254712000001', '00254712000001', '0712-000-001']) {
      const again = await kit.rest('POST', '/api/contact/save', { key: s.key, body: { mobile: spelling, first_name: 'Wanjiru' } })
      expect(again.body).toEqual({ reference: added.body.reference, new: false, message: 'Contact Updated' })
    }
    const numeric = await kit.rest('POST', '/api/contact/save', {
      key: s.key,
      body: { mobile: 254712000001, first_name: 'Wanjiru', organization: 'ACME' },
    })
    expect(numeric.body.reference).toBe(added.body.reference)

    const details = await kit.rest('GET', `/api/contact/${added.body.reference}`, { key: s.key })
    expect(details.body).toEqual({
      contact: {
        uuid: added.body.reference,
        phone: '+254712000001',
        email: 'w@example.com',
        first_name: 'Wanjiru',
        family_name: 'K',
        other_names: null,
        gender: '',
        organization: 'ACME',
        skype_id: null,
        whatsapp_number: null,
        viber_number: null,
        facebook: null,
        twitter: null,
        linkedin: null,
        groupme: null,
        wechat: null,
        youtube: null,
        self_subscribed: 0,
      },
      groups: [{ uuid: s.group.id, name: 'VIP' }],
    })
    expect(await kit.db.contact.count({ where: { accountId: s.account.id } })).toBe(1)
  })

  it('keeps group memberships not listed on a later save', async () => {
    const s = await kit.seed().account().group({ name: 'A' }).group({ name: 'B' })
    const [a, b] = s.groups
    const body = { mobile: mobile(), first_name: 'Zed' }
    const first = await kit.rest('POST', '/api/contact/save', { key: s.key, body: { ...body, groups: [a!.id] } })
    await kit.rest('POST', '/api/contact/save', { key: s.key, body: { ...body, groups: [b!.id] } })
    const groups = await kit.rest('GET', `/api/contact/${first.body.reference}/groups`, { key: s.key })
    expect(groups.body).toEqual([
      { uuid: a!.id, name: 'A' },
      { uuid: b!.id, name: 'B' },
    ])
  })

  it('refuses invalid input with per-field details and saves nothing', async () => {
    const s = await kit.seed().account()
    const cases: [unknown, { field: string; message: string }[]][] = [
      [{ first_name: 'A' }, [{ field: 'mobile', message: 'mobile is required' }]],
      [{ mobile: '0712000002' }, [{ field: 'first_name', message: 'first_name is required' }]],
      [{ mobile: '12345', first_name: 'A' }, [{ field: 'mobile', message: 'mobile "12345" is not a valid mobile number' }]],
      [
        { mobile: '0712000002', first_name: 'A', email: 'not-an-email' },
        [{ field: 'email', message: 'email "not-an-email" is not a valid email address' }],
      ],
      [
        { mobile: '0712000002', first_name: 'A', organization: 'o'.repeat(201) },
        [{ field: 'organization', message: 'organization must be at most 200 characters' }],
      ],
      [
        { mobile: '0712000002', first_name: 'A', groups: ['no-such-group'] },
        [{ field: 'groups[0]', message: 'unknown group no-such-group' }],
      ],
      [{ mobile: '0712000002', first_name: 42 }, [{ field: 'first_name', message: 'first_name must be a string' }]],
    ]
    for (const [body, details] of cases) {
      const res = await kit.rest('POST', '/api/contact/save', { key: s.key, body })
      expect(res.status, JSON.stringify(body)).toBe(422)
      expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', details })
    }
    expect(await kit.db.contact.count({ where: { accountId: s.account.id } })).toBe(0)
  })

  it('lists contacts alphabetically by first then family name with the list item fields', async () => {
    const s = await kit.seed().account()
    const people = [
      ['bob', 'Zulu'],
      ['Alice', 'Young'],
      ['bob', 'adams'],
      ['Carol', ''],
    ]
    for (const [first, family] of people) {
      await kit.rest('POST', '/api/contact/save', { key: s.key, body: { mobile: mobile(), first_name: first, family_name: family } })
    }
    const res = await kit.rest('GET', '/api/contacts', { key: s.key })
    expect(res.body.data.map((c: any) => `${c.first_name} ${c.family_name}`)).toEqual(['Alice Young', 'bob adams', 'bob Zulu', 'Carol '])
    expect(res.body.data[0]).toEqual({
      uuid: anyUuid(),
      first_name: 'Alice',
      family_name: 'Young',
      other_names: null,
      mobile: expect.stringMatching(/^\+2547\d{8}$/),
      email: null,
      organization: null,
      gender: '',
    })
    const search = await kit.rest('GET', '/api/contacts?search=ZUL', { key: s.key })
    expect(search.body.data.map((c: any) => c.family_name)).toEqual(['Zulu'])
    const byNumber = await kit.rest('GET', `/api/contacts?search=${encodeURIComponent(res.body.data[0].mobile.slice(1))}`, { key: s.key })
    expect(byNumber.body.data.map((c: any) => c.first_name)).toEqual(['Alice'])
    const wildcard = await kit.rest('GET', '/api/contacts?search=%25', { key: s.key })
    expect(wildcard.body.meta.total).toBe(0)
  })

  it('deletes a contact permanently and from every group', async () => {
    const s = await kit.seed().account().group().contacts(2)
    const [gone, stays] = s.contacts
    const res = await kit.rest('DELETE', `/api/contact/${gone!.id}`, { key: s.key })
    expect(res).toMatchObject({ status: 200, body: { status: 'success' } })
    expect((await kit.rest('GET', `/api/contact/${gone!.id}`, { key: s.key })).status).toBe(404)
    const members = await kit.rest('GET', `/api/contact/group/${s.group.id}/contacts`, { key: s.key })
    expect(members.body.data.map((c: any) => c.uuid)).toEqual([stays!.id])
    expect((await kit.rest('DELETE', `/api/contact/${gone!.id}`, { key: s.key })).status).toBe(404)
  })
})

describe.each(targets)('REST group membership on $name', (target) => {
  const kit = useKit(target)

  it('adds contacts to a group, updating existing ones and listing each once', async () => {
    const s = await kit
      .seed()
      .account()
      .group({ name: 'Team' })
      .contacts(1, () => ({ firstName: 'Existing' }))
    const existing = s.contacts[0]!
    const body = {
      contacts: [
        { first_name: 'New', family_name: 'One', email: 'n1@example.com', mobile: mobile() },
        { first_name: 'Renamed', mobile: existing.mobile.replace('+254', '0') },
        { first_name: 'Renamed', mobile: existing.mobile },
      ],
    }
    const res = await kit.rest('POST', `/api/contact/group/${s.group.id}/add-contacts`, { key: s.key, body })
    expect(res).toMatchObject({ status: 200, body: { status: 'successful' } })
    const list = await kit.rest('GET', `/api/contact/group/${s.group.id}/contacts`, { key: s.key })
    expect(list.body.data.map((c: any) => c.first_name)).toEqual(['New', 'Renamed'])
    expect(list.body.meta).toEqual({ search: '', total: 2, skipped: 0, perPage: 25, page: 1, pageCount: 1 })
  })

  it('fails the whole request on one bad item, names it, and saves nothing', async () => {
    const s = await kit.seed().account().group()
    const contacts = [
      { first_name: 'Good', mobile: mobile() },
      { first_name: 'Good too', mobile: mobile() },
      { first_name: 'Good three', mobile: mobile() },
      { first_name: 'Bad', mobile: 'not a number' },
    ]
    const res = await kit.rest('POST', `/api/contact/group/${s.group.id}/add-contacts`, { key: s.key, body: { contacts } })
    expect(res.status).toBe(422)
    expect(res.body).toEqual({
      error: 'mobile "not a number" is not a valid mobile number',
      code: 'VALIDATION_FAILED',
      details: [{ field: 'contacts[3].mobile', message: 'mobile "not a number" is not a valid mobile number' }],
    })
    const missing = await kit.rest('POST', `/api/contact/group/${s.group.id}/add-contacts`, {
      key: s.key,
      body: { contacts: [{ mobile: mobile() }, 'x'] },
    })
    expect(missing.body.details).toEqual([
      { field: 'contacts[0].first_name', message: 'first_name is required' },
      { field: 'contacts[1]', message: 'each contact must be an object' },
    ])
    expect(await kit.db.contact.count({ where: { accountId: s.account.id } })).toBe(0)
  })

  it('refuses an empty list, a list over 10,000 and a body without contacts', async () => {
    const s = await kit.seed().account().group()
    const path = `/api/contact/group/${s.group.id}/add-contacts`
    expect((await kit.rest('POST', path, { key: s.key, body: { contacts: [] } })).status).toBe(422)
    const many = Array.from({ length: 10_001 }, (_, i) => ({ first_name: 'x', mobile: `+2547${String(20_000_000 + i)}` }))
    const tooMany = await kit.rest('POST', path, { key: s.key, body: { contacts: many } })
    expect(tooMany.status).toBe(422)
    expect(tooMany.body.details).toEqual([{ field: 'contacts', message: 'at most 10000 contacts per request' }])
    expect((await kit.rest('POST', path, { key: s.key, body: { people: [] } })).body.details).toEqual([
      { field: 'contacts', message: 'contacts must be an array' },
    ])
  })

  it('pages group contacts and searches them', async () => {
    const s = await kit
      .seed()
      .account()
      .group()
      .contacts(5, (i) => ({ firstName: `P${i}`, organization: i % 2 ? 'Odd Ltd' : 'Even Ltd' }))
    const page = await kit.rest('GET', `/api/contact/group/${s.group.id}/contacts?perPage=2&page=3`, { key: s.key })
    expect(page.body.data.map((c: any) => c.first_name)).toEqual(['P4'])
    expect(page.body.meta).toEqual({ search: '', total: 5, skipped: 4, perPage: 2, page: 3, pageCount: 3 })
    const odd = await kit.rest('GET', `/api/contact/group/${s.group.id}/contacts?search=odd`, { key: s.key })
    expect(odd.body.data.map((c: any) => c.first_name)).toEqual(['P1', 'P3'])
  })

  it('delists numbers, ignoring unknown ones, and names the group', async () => {
    const s = await kit.seed().account().group({ name: 'Runners' }).contacts(3)
    const [a, b, c] = s.contacts
    const res = await kit.rest('DELETE', `/api/contact/group/${s.group.id}/delist-contacts`, {
      key: s.key,
      body: { contacts: [a!.mobile.replace('+254', '0'), b!.mobile, '+254799999999', 'garbage'] },
    })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'success', message: 'The submitted contacts were delisted from the group Runners' })
    const left = await kit.rest('GET', `/api/contact/group/${s.group.id}/contacts`, { key: s.key })
    expect(left.body.data.map((x: any) => x.uuid)).toEqual([c!.id])
    expect(await kit.db.contact.count({ where: { accountId: s.account.id } })).toBe(3)
    const bad = await kit.rest('DELETE', `/api/contact/group/${s.group.id}/delist-contacts`, { key: s.key, body: { contacts: [{}] } })
    expect(bad.status).toBe(422)
  })
})
