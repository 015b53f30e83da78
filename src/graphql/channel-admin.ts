// Channel management: authenticated by an operator key (an API key of the account that operates the channel).
import { builder } from './builder.js'
import { ChannelRef } from './channel.js'
import { importChannel } from '../channel/import-channel.js'
import { cancelAiring, endEpisodeFeed, endLiveBroadcast, startEpisodeFeed, startLiveBroadcast } from '../channel/operate.js'
import { findChannel } from '../channel/queries.js'

const LiveBroadcastRef = builder.objectRef<{ id: number; title: string; description: string; location: string; startedAt: Date; endedAt: Date | null }>('LiveBroadcast').implement({
  fields: (t) => ({
    id: t.exposeInt('id'),
    title: t.exposeString('title'),
    description: t.exposeString('description'),
    location: t.exposeString('location'),
    startedAt: t.expose('startedAt', { type: 'DateTime' }),
    endedAt: t.expose('endedAt', { type: 'DateTime', nullable: true }),
  }),
})

const AiringFeedRef = builder.objectRef<{ id: number; cancelled: boolean; wentLiveAt: Date | null; liveEndedAt: Date | null }>('AiringFeed').implement({
  fields: (t) => ({
    id: t.exposeInt('id'),
    cancelled: t.exposeBoolean('cancelled'),
    wentLiveAt: t.expose('wentLiveAt', { type: 'DateTime', nullable: true }),
    liveEndedAt: t.expose('liveEndedAt', { type: 'DateTime', nullable: true }),
  }),
})

builder.mutationFields((t) => ({
  importChannel: t.field({
    type: ChannelRef,
    description: 'Creates or updates a whole channel from an import document (docs/channel-import.md). The key’s account becomes its operator.',
    args: { document: t.arg.string({ required: true, description: 'The import document as JSON text.' }) },
    resolve: async (_root, { document }, ctx) => {
      const channel = await importChannel(ctx.deps, document, (await ctx.account()).id)
      return findChannel(ctx.deps.db, channel.id, false)
    },
  }),
  startLiveBroadcast: t.field({
    type: LiveBroadcastRef,
    args: {
      channel: t.arg.string({ required: true, description: 'uuid or slug' }),
      title: t.arg.string({ required: true }),
      description: t.arg.string(),
      location: t.arg.string(),
    },
    resolve: async (_root, { channel, ...input }, ctx) => startLiveBroadcast(ctx.deps, (await ctx.account()).id, channel, input),
  }),
  endLiveBroadcast: t.field({
    type: LiveBroadcastRef,
    args: { id: t.arg.int({ required: true }) },
    resolve: async (_root, { id }, ctx) => endLiveBroadcast(ctx.deps, (await ctx.account()).id, id),
  }),
  startEpisodeFeed: t.field({
    type: AiringFeedRef,
    description: 'A live episode’s feed arrived for this airing.',
    args: { airingId: t.arg.int({ required: true }) },
    resolve: async (_root, { airingId }, ctx) => startEpisodeFeed(ctx.deps, (await ctx.account()).id, airingId),
  }),
  endEpisodeFeed: t.field({
    type: AiringFeedRef,
    args: { airingId: t.arg.int({ required: true }) },
    resolve: async (_root, { airingId }, ctx) => endEpisodeFeed(ctx.deps, (await ctx.account()).id, airingId),
  }),
  cancelAiring: t.field({
    type: AiringFeedRef,
    args: { airingId: t.arg.int({ required: true }) },
    resolve: async (_root, { airingId }, ctx) => cancelAiring(ctx.deps, (await ctx.account()).id, airingId),
  }),
}))
