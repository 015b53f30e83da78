import { createAccount } from '../../src/accounts/create-account.js'
import { createGroup, type GroupInput } from '../../src/messaging/groups.js'
import { parseContacts, type ContactInput } from '../../src/messaging/contacts.js'
import { upsertContacts } from '../../src/messaging/upsert-contacts.js'
import type { Deps } from '../../src/deps.js'

export interface Seeded {
  account: { id: string; name: string }
  key: string
  group: { id: string; name: string }
  groups: { id: string; name: string }[]
  contacts: { id: string; mobile: string; firstName: string }[]
}

let counter = 0
/** A valid Kenyan mobile number, distinct per call in this process. */
/** The row of a sent SMS, written straight to the table: for tests that need a message to hang webhook deliveries on. */
export const sentMessageRow = (accountId: string, broadcastAt = new Date()) => ({
  accountId,
  mobile: '+254712345678',
  sender: 'X',
  text: 'x',
  encoding: 'GSM_7',
  pages: 1,
  costPerPage: 0n,
  creditsDeducted: 0n,
  gateway: 'sandbox',
  status: 'SENT',
  broadcastAt,
})

export const mobile = (n = counter++) => `+2547${String(10_000_000 + n).padStart(8, '0')}`

/** Fluent fixtures: `await kit.seed().account().group({ name: 'A' }).contacts(3)`. */
export class Seed implements PromiseLike<Seeded> {
  private readonly steps: ((s: Seeded) => Promise<void>)[] = []

  constructor(private readonly kit: { readonly deps: Deps }) {}

  account(name = 'Acme') {
    this.steps.push(async (s) => {
      const { account, apiKey } = await createAccount(this.kit.deps, { name })
      s.account = account
      s.key = apiKey
    })
    return this
  }

  group(input: GroupInput = {}) {
    this.steps.push(async (s) => {
      const { group } = await createGroup(this.kit.deps, s.account.id, { name: `Group ${counter++}`, ...input })
      s.group = group
      s.groups.push(group)
    })
    return this
  }

  /** n contacts, enlisted on the last group when there is one. */
  contacts(n: number, make: (i: number) => ContactInput = (i) => ({ firstName: `Person ${String(i).padStart(5, '0')}` })) {
    this.steps.push(async (s) => {
      const inputs = Array.from({ length: n }, (_, i) => ({ mobile: mobile(), ...make(i) }))
      const parsed = parseContacts(inputs, this.kit.deps.env.DEFAULT_COUNTRY)
      const { saved } = await upsertContacts(this.kit.deps, s.account.id, parsed, s.group?.id)
      s.contacts.push(...saved.map((r, i) => ({ id: r.id, mobile: parsed[i]!.mobile, firstName: parsed[i]!.fields.firstName })))
    })
    return this
  }

  then<A = Seeded, B = never>(
    onfulfilled?: ((value: Seeded) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ) {
    return this.run().then(onfulfilled, onrejected)
  }

  private async run(): Promise<Seeded> {
    const seeded = { groups: [], contacts: [] } as unknown as Seeded
    for (const step of this.steps) await step(seeded)
    return seeded
  }
}
