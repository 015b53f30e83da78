import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { anyUuid, legacyTime } from './kit/matchers.js'

describe.each(targets)('REST groups on $name', (target) => {
  const kit = useKit(target)

  it('creates a group, and answers "Group Exists" for the same name in any case', async () => {
    const { key } = await kit.seed().account()
    const created = await kit.rest('POST', '/api/contact/group/create', { key, body: { name: 'Customers', description: 'All' } })
    expect(created.status).toBe(200)
    expect(created.body).toEqual({ reference: anyUuid(), new: true, message: 'Group Created' })

    const again = await kit.rest('POST', '/api/contact/group/create', { key, body: { name: '  CUSTOMERS ', description: 'other' } })
    expect(again.body).toEqual({ reference: created.body.reference, new: false, message: 'Group Exists' })
    const details = await kit.rest('GET', `/api/contact/group/${created.body.reference}`, { key })
    expect(details.body.group.description).toBe('All')
  })

  it('returns the whole group details object with an absolute contacts_endpoint', async () => {
    const { key } = await kit.seed().account()
    const { body } = await kit.rest('POST', '/api/contact/group/create', {
      key,
      body: {
        name: 'Alerts',
        subscribable: true,
        subscription_autoresponse: 'Welcome',
        unsubscribe_autoresponse: 'Bye',
        optin_code: 'JOIN',
        optout_code: 'STOP',
        subscription_sim: '+254700000001',
      },
    })
    const res = await kit.rest('GET', `/api/contact/group/${body.reference}`, { key })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      group: {
        name: 'Alerts',
        uuid: body.reference,
        group_type: null,
        description: '',
        subscription_object: 0,
        subscribable: 1,
        subscription_autoresponse: 'Welcome',
        unsubscribe_autoresponse: 'Bye',
        subscription_sim: '+254700000001',
        optin_code: 'JOIN',
        optout_code: 'STOP',
        created_at: legacyTime(),
        updated_at: legacyTime(),
      },
      contacts_endpoint: `http://localhost:4000/api/contact/group/${body.reference}/contacts`,
    })
  })

  it('refuses a create without a name, or with fields of the wrong type, and saves nothing', async () => {
    const { key, account } = await kit.seed().account()
    const missing = await kit.rest('POST', '/api/contact/group/create', { key, body: { description: 'x' } })
    expect(missing.status).toBe(422)
    expect(missing.body).toEqual({
      error: 'name is required',
      code: 'VALIDATION_FAILED',
      details: [{ field: 'name', message: 'name is required' }],
    })
    const blank = await kit.rest('POST', '/api/contact/group/create', { key, body: { name: '   ' } })
    expect(blank.status).toBe(422)
    const wrongType = await kit.rest('POST', '/api/contact/group/create', { key, body: { name: 'A', subscribable: 'yes' } })
    expect(wrongType.status).toBe(422)
    expect(wrongType.body.details).toEqual([{ field: 'subscribable', message: 'subscribable must be true or false' }])
    const tooLong = await kit.rest('POST', '/api/contact/group/create', { key, body: { name: 'n'.repeat(101) } })
    expect(tooLong.body.details).toEqual([{ field: 'name', message: 'name must be at most 100 characters' }])
    expect(await kit.db.group.count({ where: { accountId: account.id } })).toBe(0)
  })

  it('lists groups by name with paging meta, search and clamping', async () => {
    const { key } = await kit.seed().account()
    for (const name of ['delta', 'Alpha', 'charlie', 'Bravo']) {
      await kit.rest('POST', '/api/contact/group/create', { key, body: { name, description: name === 'delta' ? 'The ALPHA team' : '' } })
    }
    const first = await kit.rest('GET', '/api/contact/groups?perPage=3', { key })
    expect(first.body).toEqual({
      data: [
        { uuid: anyUuid(), name: 'Alpha', description: '' },
        { uuid: anyUuid(), name: 'Bravo', description: '' },
        { uuid: anyUuid(), name: 'charlie', description: '' },
      ],
      meta: { search: '', total: 4, skipped: 0, perPage: 3, page: 1, pageCount: 2 },
    })
    const last = await kit.rest('GET', '/api/contact/groups?perPage=3&page=2', { key })
    expect(last.body.data.map((g: any) => g.name)).toEqual(['delta'])
    expect(last.body.meta).toEqual({ search: '', total: 4, skipped: 3, perPage: 3, page: 2, pageCount: 2 })
    const past = await kit.rest('GET', '/api/contact/groups?perPage=3&page=9', { key })
    expect(past.body).toEqual({ data: [], meta: { search: '', total: 4, skipped: 24, perPage: 3, page: 9, pageCount: 2 } })
    const clamped = await kit.rest('GET', '/api/contact/groups?perPage=5000', { key })
    expect(clamped.body.meta.perPage).toBe(100)
    const search = await kit.rest('GET', '/api/contact/groups?search=alpha', { key })
    expect(search.body.data.map((g: any) => g.name)).toEqual(['Alpha', 'delta'])
    expect(search.body.meta).toMatchObject({ search: 'alpha', total: 2 })
    const bad = await kit.rest('GET', '/api/contact/groups?page=two', { key })
    expect(bad.status).toBe(422)
    expect(bad.body.details).toEqual([{ field: 'page', message: 'page must be a whole number' }])
    const zero = await kit.rest('GET', '/api/contact/groups?page=0', { key })
    expect(zero.status).toBe(422)
  })

  it('answers an empty list with zero pages', async () => {
    const { key } = await kit.seed().account()
    const res = await kit.rest('GET', '/api/contact/groups', { key })
    expect(res.body).toEqual({ data: [], meta: { search: '', total: 0, skipped: 0, perPage: 25, page: 1, pageCount: 0 } })
  })

  it('edits every create field, refuses unknown fields and name collisions', async () => {
    const s = await kit.seed().account().group({ name: 'Old' }).group({ name: 'Taken' })
    const id = s.groups[0]!.id
    const ok = await kit.rest('PATCH', `/api/contact/group/${id}/update`, {
      key: s.key,
      body: { name: 'New', description: 'd', subscribable: 1, optin_code: 'IN', optout_code: 'OUT', subscription_sim: '22384' },
    })
    expect(ok).toMatchObject({ status: 200, body: { status: 'success' } })
    const after = await kit.rest('GET', `/api/contact/group/${id}`, { key: s.key })
    expect(after.body.group).toMatchObject({ name: 'New', description: 'd', subscribable: 1, optin_code: 'IN', subscription_sim: '22384' })

    const unknown = await kit.rest('PATCH', `/api/contact/group/${id}/update`, { key: s.key, body: { description: 'z', colour: 'red' } })
    expect(unknown.status).toBe(422)
    expect(unknown.body.details).toEqual([{ field: 'colour', message: 'colour is not a field that can be changed' }])

    const clash = await kit.rest('PATCH', `/api/contact/group/${id}/update`, { key: s.key, body: { name: 'taken' } })
    expect(clash.status).toBe(409)
    expect(clash.body.code).toBe('CONFLICT')
    const unchanged = await kit.rest('GET', `/api/contact/group/${id}`, { key: s.key })
    expect(unchanged.body.group.description).toBe('d')
  })

  it('refuses an opt-in or opt-out code already used on the same SIM, case-insensitively', async () => {
    const s = await kit.seed().account().group({ name: 'A', subscriptionSim: '+254 700 000 002', optinCode: 'JOIN', optoutCode: 'LEAVE' })
    const clash = await kit.rest('POST', '/api/contact/group/create', {
      key: s.key,
      body: { name: 'B', subscription_sim: '0700000002', optin_code: 'join ' },
    })
    expect(clash.status).toBe(409)
    expect(await kit.db.group.count({ where: { accountId: s.account.id } })).toBe(1)
    const crossed = await kit.rest('POST', '/api/contact/group/create', {
      key: s.key,
      body: { name: 'C', subscription_sim: '+254700000002', optin_code: 'Leave' },
    })
    expect(crossed.status).toBe(409)
    const otherSim = await kit.rest('POST', '/api/contact/group/create', {
      key: s.key,
      body: { name: 'D', subscription_sim: '+254700000003', optin_code: 'JOIN' },
    })
    expect(otherSim.body.new).toBe(true)
    const update = await kit.rest('PATCH', `/api/contact/group/${otherSim.body.reference}/update`, {
      key: s.key,
      body: { subscription_sim: '+254700000002' },
    })
    expect(update.status).toBe(409)
  })

  it('deletes a group and keeps its contacts', async () => {
    const s = await kit.seed().account().group().contacts(2)
    const res = await kit.rest('DELETE', `/api/contact/group/${s.group.id}`, { key: s.key })
    expect(res).toMatchObject({ status: 200, body: { status: 'success' } })
    expect((await kit.rest('GET', `/api/contact/group/${s.group.id}`, { key: s.key })).status).toBe(404)
    const contacts = await kit.rest('GET', '/api/contacts', { key: s.key })
    expect(contacts.body.meta.total).toBe(2)
    const again = await kit.rest('DELETE', `/api/contact/group/${s.group.id}`, { key: s.key })
    expect(again.status).toBe(404)
  })
})
