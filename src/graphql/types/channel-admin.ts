// Channel management: authenticated by an operator key (an API key of the account that operates the channel).
import { builder } from '../builder.js'
import { localId } from '../node-id.js'
import { ChannelRef } from './channel.js'
import { importChannel } from '../../channel/import-channel.js'
import { cancelAiring, endEpisodeFeed, endLiveBroadcast, startEpisodeFeed, startLiveBroadcast } from '../../channel/operate.js'
import { findChannel } from '../../channel/queries.js'
import { publishAiringChanged, publishChannelChanged } from '../../live/channel-events.js'

/** Publishes channel.changed for now playing subscribers once the change is done, then answers it. */
const announced = async <T extends { channelId: string }>(ctx: { deps: Parameters<typeof publishChannelChanged>[0] }, done: T) => {
  await publishChannelChanged(ctx.deps, done.channelId)
  return done
}
const announcedAiring = async <T extends { id: number }>(ctx: { deps: Parameters<typeof publishAiringChanged>[0] }, done: T) => {
  await publishAiringChanged(ctx.deps, done.id)
  return done
}

const LiveBroadcastRef = builder
  .objectRef<{ id: number; title: string; description: string; location: string; startedAt: Date; endedAt: Date | null }>('LiveBroadcast')
  .implement({
    description: 'An unscheduled live broadcast: while it runs it interrupts the playlist in now playing.',
    fields: (t) => ({
      id: t.exposeInt('id', { description: 'The live broadcast id.' }),
      title: t.exposeString('title', { description: 'Title.' }),
      description: t.exposeString('description', { description: 'Description; empty when none.' }),
      location: t.exposeString('location', { description: 'Where it comes from; empty when not given.' }),
      startedAt: t.expose('startedAt', { type: 'DateTime', description: 'When it started.' }),
      endedAt: t.expose('endedAt', { type: 'DateTime', nullable: true, description: 'When it ended; null while it runs.' }),
    }),
  })

const AiringFeedRef = builder
  .objectRef<{ id: number; cancelled: boolean; wentLiveAt: Date | null; liveEndedAt: Date | null }>('AiringFeed')
  .implement({
    description: "An airing's operator-set state: cancellation and its live feed.",
    fields: (t) => ({
      id: t.exposeInt('id', { description: 'The airing id.' }),
      cancelled: t.exposeBoolean('cancelled', { description: 'Cancelled by the operator.' }),
      wentLiveAt: t.expose('wentLiveAt', { type: 'DateTime', nullable: true, description: 'When its live feed first arrived.' }),
      liveEndedAt: t.expose('liveEndedAt', { type: 'DateTime', nullable: true, description: 'When its live feed ended.' }),
    }),
  })

builder.mutationFields((t) => ({
  importChannel: t.field({
    scope: 'channels:manage',
    type: ChannelRef,
    description:
      'Creates or updates a whole channel from an import document (docs/channel.md, docs/channel-import.schema.json). The key’s account becomes its operator.',
    args: { document: t.arg.string({ required: true, description: 'The import document as JSON text.' }) },
    resolve: async (_root, { document }, ctx) => {
      const channel = await importChannel(ctx.deps, document, (await ctx.account()).id)
      await publishChannelChanged(ctx.deps, channel.id)
      return findChannel(ctx.deps.db, channel.id, false)
    },
  }),
  startLiveBroadcast: t.field({
    scope: 'channels:manage',
    type: LiveBroadcastRef,
    description: 'Starts an unscheduled live broadcast on a channel the key operates.',
    args: {
      channel: t.arg.string({ required: true, description: 'uuid or slug, or the global id' }),
      title: t.arg.string({ required: true, description: 'Title, at most 200 characters.' }),
      description: t.arg.string({ description: 'Description, at most 2,000 characters.' }),
      location: t.arg.string({ description: 'Where it comes from, at most 200 characters.' }),
    },
    resolve: async (_root, { channel, ...input }, ctx) =>
      announced(ctx, await startLiveBroadcast(ctx.deps, (await ctx.account()).id, localId(channel, 'Channel'), input)),
  }),
  endLiveBroadcast: t.field({
    scope: 'channels:manage',
    type: LiveBroadcastRef,
    description: 'Ends a live broadcast.',
    args: { id: t.arg.int({ required: true, description: 'The live broadcast id.' }) },
    resolve: async (_root, { id }, ctx) => announced(ctx, await endLiveBroadcast(ctx.deps, (await ctx.account()).id, id)),
  }),
  startEpisodeFeed: t.field({
    scope: 'channels:manage',
    type: AiringFeedRef,
    description: 'A live episode’s feed arrived for this airing.',
    args: { airingId: t.arg.int({ required: true, description: 'The airing id.' }) },
    resolve: async (_root, { airingId }, ctx) => announcedAiring(ctx, await startEpisodeFeed(ctx.deps, (await ctx.account()).id, airingId)),
  }),
  endEpisodeFeed: t.field({
    scope: 'channels:manage',
    type: AiringFeedRef,
    description: "A live episode's feed ended for this airing.",
    args: { airingId: t.arg.int({ required: true, description: 'The airing id.' }) },
    resolve: async (_root, { airingId }, ctx) => announcedAiring(ctx, await endEpisodeFeed(ctx.deps, (await ctx.account()).id, airingId)),
  }),
  cancelAiring: t.field({
    scope: 'channels:manage',
    type: AiringFeedRef,
    description: 'Cancels one airing; it stays listed with state CANCELLED.',
    args: { airingId: t.arg.int({ required: true, description: 'The airing id.' }) },
    resolve: async (_root, { airingId }, ctx) => announcedAiring(ctx, await cancelAiring(ctx.deps, (await ctx.account()).id, airingId)),
  }),
}))
