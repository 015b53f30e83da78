import type { Deps } from '../deps.js'
import { createAccount } from '../accounts/create-account.js'
import { createGroup } from '../messaging/groups.js'
import { parseContacts } from '../messaging/contacts.js'
import { upsertContacts } from '../messaging/upsert-contacts.js'
import { importChannel } from '../channel/import-channel.js'
import { setChannelOperator } from '../channel/set-operator.js'
import { DEMO_CHANNEL_SLUG, demoChannel } from './demo-channel.js'
import { publishChannelChanged } from '../live/channel-events.js'

const PEOPLE = [
  ['Wanjiru', 'Kamau'],
  ['Otieno', 'Odhiambo'],
  ['Achieng', 'Atieno'],
  ['Kiprop', 'Cheruiyot'],
  ['Njeri', 'Mwangi'],
  ['Mutua', 'Musyoka'],
  ['Amina', 'Hassan'],
  ['Baraka', 'Wekesa'],
  ['Chebet', 'Korir'],
  ['Daudi', 'Mutiso'],
  ['Esther', 'Wambui'],
  ['Faith', 'Nyambura'],
] as const

/** Credits given to the demo account, so that sendSms works at once (sandbox gateway). */
const DEMO_CREDITS = 1_000_000n // 100 credits in ten-thousandths

/**
 * A ready-to-try account: a key, three groups (one subscribable by SMS), a dozen contacts, credit,
 * and the demo channel laid around `now`. Each run makes a new account; the demo channel is
 * refreshed and handed to it.
 */
export async function seedDemo(deps: Deps) {
  const { db } = deps
  const { account, apiKey } = await createAccount(deps, { name: 'Demo', timezone: 'Africa/Nairobi' })
  await db.account.update({ where: { id: account.id }, data: { creditBalance: DEMO_CREDITS } })
  const groups = [
    await createGroup(deps, account.id, { name: 'Customers', description: 'Everyone who bought from us' }),
    await createGroup(deps, account.id, { name: 'Staff', description: 'The team' }),
    await createGroup(deps, account.id, {
      name: 'Newsletter',
      description: 'Subscribe by SMS: JOIN NEWS to the hosted SIM; STOP NEWS to leave',
      subscribable: true,
      subscriptionSim: '+254711000000',
      optinCode: 'JOIN NEWS',
      optoutCode: 'STOP NEWS',
      subscriptionAutoresponse: 'Welcome to the Demo newsletter',
      unsubscribeAutoresponse: 'You have left the Demo newsletter',
    }),
  ].map((g) => g.group)
  const contacts = parseContacts(
    PEOPLE.map(([firstName, familyName], i) => ({
      mobile: `+2547120000${String(i).padStart(2, '0')}`,
      firstName,
      familyName,
      email: `${firstName.toLowerCase()}@example.com`,
      groups: [groups[i % 2]!.id, ...(i % 3 === 0 ? [groups[2]!.id] : [])],
    })),
    deps.env.DEFAULT_COUNTRY,
  )
  await upsertContacts(deps, account.id, contacts)

  const existing = await db.channel.findUnique({ where: { slug: DEMO_CHANNEL_SLUG }, select: { id: true } })
  if (existing) await setChannelOperator(db, existing.id, account.id)
  const channel = await importChannel(deps, demoChannel(deps.clock.now()), account.id)
  await publishChannelChanged(deps, channel.id)
  return {
    account: { uuid: account.id, name: account.name },
    apiKey,
    groups: groups.map((g) => ({ uuid: g.id, name: g.name })),
    contacts: contacts.length,
    channel: { uuid: channel.id, slug: channel.slug },
  }
}
