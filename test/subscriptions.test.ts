import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { graphql } from '../src/graphql/typed-documents.js'

const RECEIVE = `mutation($input: InboundSmsInput!) {
  receiveSms(input: $input) { action group { name subscriberCount } contact { id mobile firstName selfSubscribed } autoresponse { to text status sender } }
}`

describe.each(targets)('subscribable groups on $name', (target) => {
  const kit = useKit(target)

  async function setup() {
    const s = await kit.seed().account().group({
      name: 'Weather alerts',
      subscribable: true,
      subscriptionSim: '22384',
      optinCode: 'JOIN WEATHER',
      optoutCode: 'STOP WEATHER',
      subscriptionAutoresponse: 'You will get weather alerts. Text STOP WEATHER to leave.',
      unsubscribeAutoresponse: 'You left weather alerts.',
    })
    await kit.db.account.update({ where: { id: s.account.id }, data: { creditBalance: 100_000n } })
    return s
  }

  it('subscribes a new number by its opt-in code, creating the contact and answering', async () => {
    const s = await setup()
    const res = await kit.gql(RECEIVE, { input: { to: '22384', from: '0712 300 400', text: '  join weather ' } }, s.key)
    expect(res.receiveSms).toEqual({
      action: 'SUBSCRIBED',
      group: { name: 'Weather alerts', subscriberCount: 1 },
      contact: { id: expect.any(String), mobile: '+254712300400', firstName: '+254712300400', selfSubscribed: true },
      autoresponse: {
        to: '+254712300400',
        text: 'You will get weather alerts. Text STOP WEATHER to leave.',
        status: 'SENT',
        sender: '22384',
      },
    })
    const details = await kit.rest('GET', `/api/contact/group/${s.group.id}`, { key: s.key })
    expect(details.body.group.subscription_object).toBe(1)
    const contact = await kit.rest('GET', `/api/contact/${res.receiveSms.contact.id}`, { key: s.key })
    expect(contact.body.contact.self_subscribed).toBe(1)
    expect(contact.body.groups).toEqual([{ uuid: s.group.id, name: 'Weather alerts' }])
    // The autoresponse has its own delivery report.
    const messages = await kit.db.message.findMany({ where: { accountId: s.account.id } })
    expect(messages).toHaveLength(1)
    const report = await kit.rest('GET', `/api/sms/delivery-report/${messages[0]!.id}`, { key: s.key })
    expect(report.body).toMatchObject({ mobile: '+254712300400', status: 'SENT' })
  })

  it('unsubscribes by the opt-out code and records joins and leaves', async () => {
    const s = await setup()
    await kit.gql(RECEIVE, { input: { to: '22384', from: '+254712300401', text: 'JOIN WEATHER' } }, s.key)
    const left = await kit.gql(RECEIVE, { input: { to: '22384', from: '+254712300401', text: 'Stop Weather' } }, s.key)
    expect(left.receiveSms).toMatchObject({
      action: 'UNSUBSCRIBED',
      group: { subscriberCount: 0 },
      autoresponse: { text: 'You left weather alerts.' },
    })
    const events = await kit.gql(
      graphql(`query($id: ID!) { group(id: $id) { subscriptionEvents { kind text contact { mobile } } } }`),
      { id: s.group.id },
      s.key,
    )
    expect(events.group?.subscriptionEvents).toEqual([
      { kind: 'LEAVE', text: 'Stop Weather', contact: { mobile: '+254712300401' } },
      { kind: 'JOIN', text: 'JOIN WEATHER', contact: { mobile: '+254712300401' } },
    ])
    const members = await kit.rest('GET', `/api/contact/group/${s.group.id}/contacts`, { key: s.key })
    expect(members.body.meta.total).toBe(0)
    // The contact stays, no longer self-subscribed.
    const contacts = await kit.rest('GET', '/api/contacts?search=300401', { key: s.key })
    expect(contacts.body.meta.total).toBe(1)
  })

  it('keeps an existing contact’s details and marks an existing member as self-subscribed', async () => {
    const s = await setup()
    await kit.rest('POST', '/api/contact/save', {
      key: s.key,
      body: { mobile: '+254712300402', first_name: 'Achieng', groups: [s.group.id] },
    })
    const res = await kit.gql(RECEIVE, { input: { to: '22384', from: '+254712300402', text: 'join weather' } }, s.key)
    expect(res.receiveSms.contact).toMatchObject({ firstName: 'Achieng', selfSubscribed: true })
    expect(res.receiveSms.group.subscriberCount).toBe(1)
  })

  it('ignores other texts, other SIMs and groups that are not subscribable', async () => {
    const s = await setup()
    await kit.seed().account()
    const cases = [
      { to: '22384', from: '+254712300403', text: 'hello' },
      { to: '99999', from: '+254712300403', text: 'JOIN WEATHER' },
      { to: '22384', from: '+254712300403', text: '' },
    ]
    for (const input of cases) {
      const res = await kit.gql(RECEIVE, { input }, s.key)
      expect(res.receiveSms, JSON.stringify(input)).toEqual({ action: 'IGNORED', group: null, contact: null, autoresponse: null })
    }
    await kit.rest('PATCH', `/api/contact/group/${s.group.id}/update`, { key: s.key, body: { subscribable: false } })
    const off = await kit.gql(RECEIVE, { input: { to: '22384', from: '+254712300403', text: 'JOIN WEATHER' } }, s.key)
    expect(off.receiveSms.action).toBe('IGNORED')
    expect(await kit.db.contact.count({ where: { accountId: s.account.id } })).toBe(0)
    const bad = await kit.graphql(RECEIVE, { input: { to: '22384', from: 'nobody', text: 'JOIN WEATHER' } }, s.key)
    expect(bad.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED')
  })

  it('matches codes only within the account that owns them', async () => {
    await setup()
    const other = await kit.seed().account()
    const res = await kit.gql(RECEIVE, { input: { to: '22384', from: '+254712300404', text: 'JOIN WEATHER' } }, other.key)
    expect(res.receiveSms.action).toBe('IGNORED')
  })

  it('changes nothing when the autoresponse cannot be sent (422 VALIDATION_FAILED)', async () => {
    // A SIM label is free text, but it is not a valid sender id: the autoresponse fails validation.
    const s = await kit.seed().account().group({
      name: 'Bad sender',
      subscribable: true,
      subscriptionSim: 'KE_22384',
      optinCode: 'JOIN',
      optoutCode: 'STOP',
      subscriptionAutoresponse: 'Welcome',
      unsubscribeAutoresponse: 'Bye',
    })
    await kit.db.account.update({ where: { id: s.account.id }, data: { creditBalance: 100_000n } })
    await kit.rest('POST', '/api/contact/save', {
      key: s.key,
      body: { mobile: '+254712300499', first_name: 'Member', groups: [s.group.id] },
    })
    const counts = async () => ({
      contacts: await kit.db.contact.count({ where: { accountId: s.account.id } }),
      memberships: await kit.db.membership.count({ where: { groupId: s.group.id } }),
      selfSubscribed: await kit.db.membership.count({ where: { groupId: s.group.id, selfSubscribed: true } }),
      events: await kit.db.subscriptionEvent.count({ where: { groupId: s.group.id } }),
      messages: await kit.db.message.count({ where: { accountId: s.account.id } }),
      credit: (await kit.db.account.findUniqueOrThrow({ where: { id: s.account.id } })).creditBalance,
    })
    const before = await counts()
    expect(before).toMatchObject({ contacts: 1, memberships: 1, selfSubscribed: 0, events: 0, messages: 0 })
    for (const input of [
      { to: 'KE_22384', from: '+254712300498', text: 'join' }, // new contact
      { to: 'KE_22384', from: '+254712300499', text: 'join' }, // existing member
      { to: 'KE_22384', from: '+254712300499', text: 'stop' }, // leaving
    ]) {
      const res = await kit.graphql(RECEIVE, { input }, s.key)
      expect(res.errors?.[0]?.extensions, JSON.stringify(input)).toMatchObject({
        code: 'VALIDATION_FAILED',
        details: [{ field: 'sender' }],
      })
      expect(await counts(), JSON.stringify(input)).toEqual(before)
    }
  })
})
