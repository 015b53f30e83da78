import type { Deps } from '../deps.js'
import { validationError } from '../core/errors.js'
import { normalizeMobile, simKey } from '../messaging/mobile.js'
import { InputRules } from '../messaging/input-rules.js'
import { sendSms } from '../sms/send-sms.js'
import { contactKeys } from '../messaging/contacts.js'
import { prismaTransaction, type Db, type Tx } from '../db/client.js'
import { deferredEvents, publishQuietly, TOPIC, type MembershipEvent } from '../live/topics.js'

export interface InboundSms {
  /** The hosted SIM (number or short code) the text was sent to. */
  to: string
  from: string
  text: string
}

export type InboundAction = 'SUBSCRIBED' | 'UNSUBSCRIBED' | 'IGNORED'

/**
 * An SMS received on one of the account's hosted SIMs. A text equal (trimmed, any case) to a
 * subscribable group's opt-in code on that SIM subscribes the sender, creating the contact if
 * new; its opt-out code unsubscribes. The group's autoresponse goes back as an SMS with its own
 * delivery report. Anything else is ignored.
 */
export async function handleInboundSms(
  deps: Pick<Deps, 'db' | 'dbKind' | 'env' | 'clock' | 'gateway' | 'logger'> & Partial<Pick<Deps, 'events'>>,
  accountId: string,
  input: InboundSms,
) {
  const rules = new InputRules()
  const to = rules.required('to', input.to, 64)
  const rawFrom = rules.required('from', input.from, 64)
  if (typeof input.text !== 'string') rules.fail('text', 'text is required')
  else rules.storable('text', input.text)
  rules.check()
  const from = normalizeMobile(rawFrom!, deps.env.DEFAULT_COUNTRY)
  if (!from) throw validationError([{ field: 'from', message: `from "${rawFrom}" is not a valid mobile number` }])
  const code = input.text.trim().toLowerCase()
  const sim = simKey(to!, deps.env.DEFAULT_COUNTRY)
  const match = code
    ? await deps.db.simCode.findUnique({ where: { accountId_sim_code: { accountId, sim, code } }, include: { group: true } })
    : null
  if (!match || !match.group.subscribable)
    return { action: 'IGNORED' as InboundAction, groupId: null, contactId: null, autoresponseId: null }

  const now = deps.clock.now()
  const joining = match.kind === 'optin'
  const reply = joining ? match.group.subscriptionAutoresponse : match.group.unsubscribeAutoresponse
  // One transaction for the subscription and its autoresponse: an autoresponse that cannot be sent
  // (say the group's SIM is not a valid sender id) is a 422 that must leave no contact, membership or
  // event behind. sendSms runs on the transaction; its own transactions join this one.
  const later = deferredEvents(deps)
  const result = await deps.db.$transaction(
    async (tx) => {
      let contact = await tx.contact.findUnique({ where: { accountId_mobile: { accountId, mobile: from } }, select: { id: true } })
      if (contact || joining) {
        contact ??= await tx.contact.create({
          data: {
            accountId,
            mobile: from,
            firstName: from,
            familyName: '',
            ...contactKeys({ firstName: from, familyName: '', mobile: from }),
          },
          select: { id: true },
        })
        const key = { groupId_contactId: { groupId: match.groupId, contactId: contact.id } }
        if (joining) {
          await tx.membership.upsert({
            where: key,
            create: { groupId: match.groupId, contactId: contact.id, selfSubscribed: true },
            update: { selfSubscribed: true },
          })
        } else {
          await tx.membership.deleteMany({ where: { groupId: match.groupId, contactId: contact.id } })
        }
        await tx.subscriptionEvent.create({
          data: {
            groupId: match.groupId,
            contactId: contact.id,
            kind: joining ? 'join' : 'leave',
            sim: to!,
            text: input.text,
            createdAt: now,
          },
        })
      }
      let autoresponseId: string | null = null
      if (reply) {
        // Its raw statements too (src/sms/sql.ts): through Prisma on this transaction, not beside it.
        const onTx = onTransaction(tx)
        const nested = {
          ...deps,
          db: onTx,
          directRead: undefined,
          directTransaction: prismaTransaction(onTx, deps.dbKind),
          events: later.events,
        }
        const sent = await sendSms(nested, accountId, {
          to: from,
          message: reply,
          sender: match.group.subscriptionSim,
        })
        autoresponseId = sent.id
      }
      return {
        action: (joining ? 'SUBSCRIBED' : 'UNSUBSCRIBED') as InboundAction,
        groupId: match.groupId,
        contactId: contact?.id ?? null,
        autoresponseId,
      }
    },
    // The gateway submission happens inside: give it more than Prisma's 5 s default.
    { timeout: 15_000 },
  )
  // Committed: the live subscriptions hear of the join or leave and of the autoresponse's status.
  if (result.contactId) {
    const event: MembershipEvent = {
      accountId,
      groupId: match.groupId,
      kind: joining ? 'join' : 'leave',
      via: 'sms',
      contactIds: [result.contactId],
      count: 1,
      at: now.toISOString(),
    }
    await publishQuietly(deps, TOPIC.groupMembership, event)
  }
  await later.flush()
  return result
}

/** A client whose $transaction runs on an open transaction, so nested work commits or rolls back with it. */
function onTransaction(tx: Tx): Db {
  return new Proxy(tx, {
    get(target, property, receiver) {
      if (property === '$transaction') return (work: (tx: Tx) => Promise<unknown>) => work(tx)
      return Reflect.get(target, property, receiver)
    },
  }) as unknown as Db
}
