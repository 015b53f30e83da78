// Live subscriptions over Server-Sent Events (docs/live.md). Events arrive through the event bus
// (src/live/topics.ts) with ids only; each subscriber reads what it sends, scoped to its account.
import { Repeater } from 'graphql-yoga'
import { builder } from '../builder.js'
import { localId } from '../node-id.js'
import { SentMessage } from './sms.js'
import { NowPlayingRef } from './channel.js'
import type { Context } from '../context.js'
import type { NowPlaying } from '../../channel/rules.js'
import { findChannel } from '../../channel/queries.js'
import { findGroup } from '../../messaging/groups.js'
import { isStorableText } from '../../messaging/input-rules.js'
import { isFinal } from '../../sms/delivery-status.js'
import { notFound } from '../../core/errors.js'
import { nowPlayingHub } from '../../live/now-playing-hub.js'
import { TOPIC, type MembershipEvent, type StatusEvent } from '../../live/topics.js'
import { subscriberOutbox } from '../../live/subscriber-outbox.js'
import type { Message } from '../../generated/sqlite/client.js'

/** How long a subscribe waits for the bus to listen before streaming anyway (PostgreSQL). */
const BUS_READY_WAIT_MS = 5000

/** Events published after this resolves reach this instance: no gap between answer and first event. */
export async function busListening(ctx: Context) {
  await Promise.race([ctx.deps.events.ready().catch(() => undefined), new Promise((r) => setTimeout(r, BUS_READY_WAIT_MS).unref())])
}

const MembershipKind = builder.enumType('GroupMembershipKind', {
  description: 'What happened to the group.',
  values: {
    JOIN: { value: 'join', description: 'Contacts joined (opt-in by SMS, addContactsToGroup, saveContact with groups).' },
    LEAVE: { value: 'leave', description: 'Contacts left (opt-out by SMS, delistContacts, deleteContact).' },
    GROUP_DELETED: { value: 'deleted', description: 'The group was deleted; the stream ends after this event.' },
  } as const,
})

const MembershipVia = builder.enumType('GroupMembershipVia', {
  description: 'Where the change came from.',
  values: {
    SMS: { value: 'sms', description: 'An opt-in or opt-out code sent by SMS (receiveSms).' },
    API: { value: 'api', description: 'A mutation (GraphQL or REST).' },
  } as const,
})

const MembershipChange = builder.objectRef<MembershipEvent>('GroupMembershipChange').implement({
  description: 'Contacts joining or leaving a group.',
  fields: (t) => ({
    groupId: t.exposeID('groupId', { description: 'The group uuid.' }),
    kind: t.field({ type: MembershipKind, description: 'Joined, left, or the group was deleted.', resolve: (e) => e.kind }),
    via: t.field({ type: MembershipVia, description: 'SMS code or mutation.', resolve: (e) => e.via }),
    count: t.exposeInt('count', { description: 'How many contacts the change concerns (0 for GROUP_DELETED).' }),
    contactIds: t.exposeIDList('contactIds', { description: 'Their contact uuids; the first 100 when count is larger.' }),
    at: t.field({ type: 'DateTime', description: 'When it happened.', resolve: (e) => new Date(e.at) }),
  }),
})

builder.subscriptionType({
  description:
    'Live updates over Server-Sent Events: send the subscription to /graphql with `Accept: text/event-stream` (GET with `?query=` or POST). Limits per API key and per address (RATE_LIMITED); see docs/live.md.',
})

builder.subscriptionFields((t) => ({
  deliveryReports: t.field({
    scope: 'read',
    type: SentMessage,
    description:
      "Every status change of the key's account's messages, as its delivery report (`status` is the status the change set; the other fields as of when it is sent). Needs an API key.",
    args: {
      messageId: t.arg.id({ description: 'Only this message (uuid or global id); NOT_FOUND when the account has no such message.' }),
    },
    subscribe: async (_root, { messageId }, ctx) => {
      const accountId = (await ctx.account()).id
      const only = messageId === null || messageId === undefined ? null : localId(messageId, 'SentMessage')
      if (
        only !== null &&
        (!isStorableText(only) || !(await ctx.deps.db.message.findFirst({ where: { id: only, accountId }, select: { id: true } })))
      ) {
        throw notFound('Delivery report')
      }
      await busListening(ctx)
      const { db, events } = ctx.deps
      return new Repeater<Message>(async (push, stop) => {
        const send = subscriberOutbox(push, stop, ctx.deps.logger, 'deliveryReports')
        const off = events.subscribe(TOPIC.smsStatus, (payload) => {
          const event = payload as StatusEvent
          if (event.accountId !== accountId || (only !== null && event.messageId !== only)) return
          send(async () => {
            const row = await db.message.findFirst({ where: { id: event.messageId, accountId } })
            if (!row) return undefined // rolled back after all (a nested transaction), or deleted since
            const done = isFinal(event.status as never)
            return { ...row, status: event.status, done, doneAt: done ? row.doneAt : null }
          })
        })
        await stop
        off()
      })
    },
    resolve: (message) => message,
  }),
  nowPlaying: t.field({
    scope: 'public',
    type: NowPlayingRef,
    description:
      "A channel's now playing answer: at once, then whenever it changes (a slot, broadcast or playlist item starts or ends, a live broadcast starts or ends, an operator changes the channel). Public.",
    args: { channel: t.arg.string({ required: true, description: 'uuid or slug, or the global id' }) },
    subscribe: async (_root, { channel }, ctx) => {
      const row = await findChannel(ctx.deps.db, localId(channel, 'Channel'), true)
      await busListening(ctx)
      const hub = nowPlayingHub(ctx.deps)
      return new Repeater<NowPlaying>(async (push, stop) => {
        const off = hub.watch(row.id, subscriberOutbox(push, stop, ctx.deps.logger, 'nowPlaying'))
        await stop
        off()
      })
    },
    resolve: (answer) => answer,
  }),
  groupMembership: t.field({
    scope: 'read',
    type: MembershipChange,
    description:
      "Joins and leaves of one of the key's account's groups, by SMS code or mutation. NOT_FOUND for a group of another account.",
    args: { groupId: t.arg.id({ required: true, description: 'The group uuid or global id.' }) },
    subscribe: async (_root, { groupId }, ctx) => {
      const accountId = (await ctx.account()).id
      const group = await findGroup(ctx.deps.db, accountId, localId(groupId, 'Group'), { select: { id: true } })
      await busListening(ctx)
      const { events } = ctx.deps
      return new Repeater<MembershipEvent>(async (push, stop) => {
        const send = subscriberOutbox(push, stop, ctx.deps.logger, 'groupMembership')
        const off = events.subscribe(TOPIC.groupMembership, (payload) => {
          const event = payload as MembershipEvent
          if (event.accountId !== accountId || event.groupId !== group.id) return
          send(event)
          if (event.kind === 'deleted') send.end()
        })
        await stop
        off()
      })
    },
    resolve: (event) => event,
  }),
}))
