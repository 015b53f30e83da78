import { builder } from '../builder.js'
import { AppError } from '../../core/errors.js'
import type { Context } from '../context.js'
import type { Airing, Catchup, Episode, Program, Video, WeeklySlot } from '../../generated/sqlite/client.js'
import type { AiringRow, ChannelRow } from '../../channel/types.js'
import {
  airingEnd,
  airingState,
  bannerOf,
  broadcastStatus,
  episodeStatus,
  nowPlaying,
  onAirNow,
  onDemandShown,
  type CurrentVideo,
  type NowPlaying,
  type OnAir,
} from '../../channel/rules.js'
import {
  channelSelect,
  findChannel,
  findProgram,
  guideAirings,
  nextAiring,
  parseTimeParam,
  streamChannels,
  upcomingAirings,
} from '../../channel/queries.js'
import { DAY_NAMES, localHourMinute } from '../../channel/zoned-time.js'
import { localId } from '../node-id.js'

const now = (ctx: Context) => ctx.deps.clock.now()
const nullWhenNotFound = (error: unknown) => {
  if (error instanceof AppError && error.code === 'NOT_FOUND') return null
  throw error
}
/** GraphQL enum values are the REST values upper-cased; each keeps its meaning as a description. */
const upper = <T extends string>(values: Record<T, string>) =>
  Object.fromEntries(Object.entries<string>(values).map(([v, description]) => [v.toUpperCase(), { value: v, description }])) as {
    [K in Uppercase<T>]: { value: T; description: string }
  }

const ProgramType = builder.enumType('ProgramType', {
  description: 'How a program is made.',
  values: upper({ live: 'Broadcast live from a feed.', on_demand: 'Pre-recorded episodes, also offered on demand.' }),
})
const ProgramStatus = builder.enumType('ProgramStatus', {
  description: "A program's status as set by the operator; only active and paused programs are public.",
  values: upper({
    draft: 'Being prepared; not public.',
    active: 'On the schedule: its weekly slots air.',
    paused: 'Listed, but its slots do not air.',
    archived: 'Retired; not public.',
  }),
})
const EpisodeType = builder.enumType('EpisodeType', {
  description: 'How an episode reaches the air.',
  values: upper({ pre_recorded: 'Played from a recording.', live: 'Broadcast from a live feed.' }),
})
const EpisodeStatus = builder.enumType('EpisodeStatus', {
  description: 'draft and cancelled are set by operators; the others follow from the airings.',
  values: upper({
    draft: 'Not yet published.',
    scheduled: 'An airing is still to come.',
    on_air: 'An airing is on air now.',
    completed: 'Every airing is over and at least one was not missed.',
    missed: 'Every airing of this live episode passed without a feed.',
    cancelled: 'Cancelled by the operator, or every airing was cancelled.',
  }),
})
const AiringStateEnum = builder.enumType('AiringState', {
  description: 'Where an airing stands, at the time of the request.',
  values: upper({
    upcoming: 'Starts later than 15 minutes from now.',
    pre_show: 'Starts within 15 minutes.',
    on_air: 'Between its start and its end.',
    ended: 'Over.',
    missed: 'Over, and a live episode never received its feed.',
    cancelled: 'The airing or its episode was cancelled.',
  }),
})
const BroadcastStatusEnum = builder.enumType('BroadcastStatus', {
  description: "A scheduled broadcast's status by its times.",
  values: upper({ pending: 'Not started.', live: 'Playing now.', completed: 'Over.', cancelled: 'Cancelled by the operator.' }),
})
const PlaybackSourceEnum = builder.enumType('PlaybackSource', {
  description: 'What the player shows during the open slot.',
  values: upper({
    livestream: "The live episode's feed.",
    pre_recorded: 'The pre-recorded episode.',
    trailer: 'A trailer, while a live episode waits for its feed.',
    standby: 'A starts-soon card, while a live episode without a trailer waits for its feed.',
    fallback: "The channel's usual content: no episode airs in the open slot.",
  }),
})
const OnAirStatus = builder.enumType('OnAirStatus', {
  description: 'Whether a weekly slot is open now.',
  values: upper({ on_air: 'A slot is open.', off_air: 'No slot is open.' }),
})

const VideoRef = builder.objectRef<Video>('Video').implement({
  description: "A video in the channel's library: played by scheduled broadcasts, the playlist and catchups.",
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'The video id.' }),
    name: t.exposeString('name', { description: 'Title.' }),
    description: t.exposeString('description', { description: 'Description; empty when none.' }),
    thumbnail: t.exposeString('thumbnail', { nullable: true, description: 'Thumbnail image URL.' }),
    hlsUrl: t.exposeString('hlsUrl', { nullable: true, description: 'HLS playlist (.m3u8) URL.' }),
    resolution: t.exposeString('resolution', { nullable: true, description: 'For example 1080p.' }),
    durationSeconds: t.exposeInt('durationSeconds', { description: 'Length in seconds.' }),
  }),
})

const CurrentVideoRef = builder.objectRef<CurrentVideo>('CurrentVideo').implement({
  description: 'What is playing now: an episode, a scheduled video, a live broadcast or the playlist.',
  fields: (t) => ({
    videoId: t.int({ nullable: true, description: 'Scheduled broadcasts only.', resolve: (v) => v.videoId ?? null }),
    name: t.exposeString('name', { description: 'Title of what is playing.' }),
    description: t.exposeString('description', { description: 'Synopsis or description; empty when none.' }),
    location: t.exposeString('location', { description: 'Where a live broadcast comes from; empty otherwise.' }),
    thumbnail: t.exposeString('thumbnail', { nullable: true, description: 'Banner or thumbnail image URL.' }),
    startTime: t.expose('startTime', { type: 'DateTime', nullable: true, description: 'Null for a live broadcast.' }),
    endTime: t.expose('endTime', { type: 'DateTime', nullable: true, description: 'Null for a live broadcast.' }),
    remainingTime: t.exposeInt('remainingTime', { description: 'Seconds left; 0 for a live broadcast.' }),
    remainingTimeHuman: t.exposeString('remainingTimeHuman', { description: 'MM:SS, HH:MM:SS, or Live.' }),
  }),
})

export const NowPlayingRef = builder.objectRef<NowPlaying>('NowPlaying').implement({
  description: "The channel's now playing answer (REST /channels/{uuid}/status).",
  fields: (t) => ({
    channelName: t.exposeString('channelName', { description: "The channel's name." }),
    isLive: t.exposeBoolean('isLive', { description: 'A live feed is on air.' }),
    currentVideo: t.field({
      type: CurrentVideoRef,
      nullable: true,
      description: 'Null when nothing plays.',
      resolve: (n) => n.currentVideo,
    }),
    estimatedEndAt: t.expose('estimatedEndAt', { type: 'DateTime', description: 'When this answer is expected to change.' }),
    cacheSeconds: t.exposeInt('cacheSeconds', { description: 'How long the answer may be cached.' }),
  }),
})

interface SlotSource extends WeeklySlot {}
const WeeklySlotRef = builder.objectRef<SlotSource>('WeeklySlot').implement({
  description: "A weekly slot in the channel's local time.",
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'The slot id.' }),
    dayOfWeek: t.exposeInt('dayOfWeek', { description: '0 = Sunday' }),
    day: t.string({ description: 'The day name in English (Sunday...).', resolve: (s) => DAY_NAMES[s.dayOfWeek]! }),
    startTime: t.exposeString('startTime', { description: 'HH:MM' }),
    durationMinutes: t.exposeInt('durationMinutes', { description: 'Length in minutes; a slot may cross midnight.' }),
  }),
})

type ProgramSource = Program & { slots?: WeeklySlot[]; _count?: { episodes: number } }
const ProgramRef = builder.objectRef<ProgramSource>('Program')
type EpisodeSource = { episode: Episode; program: Program; channel: ChannelRow; airings?: Airing[] }
const EpisodeRef = builder.objectRef<EpisodeSource>('Episode')
type AiringSource = { airing: AiringRow; channel: ChannelRow }
const AiringRef = builder.objectRef<AiringSource>('Airing')

ProgramRef.implement({
  description: 'A program of a channel, with weekly slots and episodes.',
  fields: (t) => ({
    uuid: t.exposeID('id', {
      description: 'The program id (a number written as an ID; the REST `id`): the database id, named uuid as on every other Node.',
    }),
    name: t.exposeString('name', { description: 'Title.' }),
    slug: t.exposeString('slug', { description: 'Unique across channels; usable wherever the id is.' }),
    synopsis: t.exposeString('synopsis', { description: 'Synopsis; empty when none.' }),
    bannerUrl: t.exposeString('bannerUrl', { nullable: true, description: 'Banner image URL.' }),
    trailerUrl: t.exposeString('trailerUrl', { nullable: true, description: 'Trailer video URL.' }),
    type: t.field({ type: ProgramType, description: 'Live or on demand.', resolve: (p) => p.type as 'live' }),
    status: t.field({ type: ProgramStatus, description: 'As set by the operator.', resolve: (p) => p.status as 'active' }),
    availableOnDemand: t.exposeBoolean('availableOnDemand', { description: 'Episodes stay available after airing.' }),
    episodesCount: t.int({
      description: 'How many episodes it has, drafts included.',
      resolve: async (p, _a, ctx) => p._count?.episodes ?? ctx.deps.db.episode.count({ where: { programId: p.id } }),
    }),
    schedule: t.field({
      type: [WeeklySlotRef],
      description: 'Its weekly slots, Sunday first, then by start time.',
      resolve: async (p, _a, ctx) =>
        (p.slots ?? (await ctx.deps.db.weeklySlot.findMany({ where: { programId: p.id } }))).sort(
          (a, b) => a.dayOfWeek - b.dayOfWeek || a.startTime.localeCompare(b.startTime) || a.id - b.id,
        ),
    }),
  }),
})

const OnDemandRef = builder.objectRef<Episode>('OnDemandAsset').implement({
  description: "An episode's on-demand recording.",
  fields: (t) => ({
    id: t.int({
      description: "The asset's id in the video platform (the episode id when none was given).",
      resolve: (e) => e.onDemandId ?? e.id,
    }),
    duration: t.int({ nullable: true, description: 'Length in seconds, when known.', resolve: (e) => e.onDemandDuration }),
    hlsUrl: t.exposeString('onDemandHlsUrl', { nullable: true, description: 'HLS playlist (.m3u8) URL.' }),
    thumbnailUrl: t.exposeString('onDemandThumbnailUrl', { nullable: true, description: 'Thumbnail image URL.' }),
    availableAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'From when the asset is shown (by default the end of the first airing); null: from the start.',
      resolve: (e) => e.onDemandAvailableAt,
    }),
  }),
})

/** What a channel plays when no episode airs in the open slot. */
const FallbackRef = builder
  .objectRef<{ name: string; description: string; hlsUrl: string | null; thumbnail: string | null }>('FallbackContent')
  .implement({
    description: "The channel's usual content, played when the open slot has no episode (playback source FALLBACK).",
    fields: (t) => ({
      name: t.exposeString('name', { description: 'Title.' }),
      description: t.exposeString('description', { description: 'Description; empty when none.' }),
      hlsUrl: t.exposeString('hlsUrl', { nullable: true, description: 'HLS playlist (.m3u8) URL.' }),
      thumbnail: t.exposeString('thumbnail', { nullable: true, description: 'Image URL.' }),
    }),
  })
const fallbackOf = (c: ChannelRow) =>
  c.fallbackName === null
    ? null
    : { name: c.fallbackName, description: c.fallbackDescription ?? '', hlsUrl: c.fallbackHlsUrl, thumbnail: c.fallbackThumbnail }

EpisodeRef.implement({
  description: 'An episode of a program, with its airings.',
  fields: (t) => ({
    id: t.int({ description: 'The episode id.', resolve: (s) => s.episode.id }),
    episodeNumber: t.int({ description: 'Its number within the program.', resolve: (s) => s.episode.episodeNumber }),
    name: t.string({ description: 'Title.', resolve: (s) => s.episode.name }),
    synopsis: t.string({ nullable: true, description: 'Synopsis.', resolve: (s) => s.episode.synopsis }),
    bannerUrl: t.string({ nullable: true, description: "The episode's own banner image URL.", resolve: (s) => s.episode.bannerUrl }),
    trailerUrl: t.string({
      nullable: true,
      description: "The episode's own; no fallback to the program's.",
      resolve: (s) => s.episode.trailerUrl,
    }),
    type: t.field({ type: EpisodeType, description: 'Live or pre-recorded.', resolve: (s) => s.episode.type as 'live' }),
    status: t.field({
      type: EpisodeStatus,
      description: 'Set by operators (draft, cancelled) or following from the airings.',
      resolve: async (s, _a, ctx) => episodeStatus(s.episode, s.airings ?? (await airingsOf(ctx, s.episode.id)), now(ctx)),
    }),
    availableOnDemand: t.boolean({ description: 'Whether the episode is offered on demand.', resolve: (s) => s.episode.availableOnDemand }),
    onDemand: t.field({
      type: OnDemandRef,
      nullable: true,
      description: 'Once the episode is available on demand: offered, with an asset, and from its availableAt on.',
      resolve: (s, _a, ctx) => (onDemandShown(s.episode, now(ctx)) ? s.episode : null),
    }),
    broadcasts: t.field({
      type: [AiringRef],
      description: 'Its airings, earliest first.',
      resolve: async (s, _a, ctx) =>
        (s.airings ?? (await airingsOf(ctx, s.episode.id))).map((a) => ({
          airing: { ...a, episode: { ...s.episode, program: s.program } },
          channel: s.channel,
        })),
    }),
  }),
})

const airingsOf = (ctx: Context, episodeId: number) => ctx.deps.db.airing.findMany({ where: { episodeId }, orderBy: { startsAt: 'asc' } })

AiringRef.implement({
  description: 'One airing of an episode at a booked time.',
  fields: (t) => ({
    id: t.int({ description: 'The airing id.', resolve: (s) => s.airing.id }),
    program: t.field({ type: ProgramRef, description: 'The program.', resolve: (s) => s.airing.episode.program }),
    episode: t.field({
      type: EpisodeRef,
      description: 'The episode it airs.',
      resolve: (s) => ({ episode: s.airing.episode, program: s.airing.episode.program, channel: s.channel }),
    }),
    startsAt: t.field({ type: 'DateTime', description: 'Start.', resolve: (s) => s.airing.startsAt }),
    endsAt: t.field({ type: 'DateTime', description: 'Start plus its duration.', resolve: (s) => airingEnd(s.airing) }),
    startTime: t.string({
      description: "HH:MM in the channel's zone.",
      resolve: (s) => localHourMinute(s.airing.startsAt, s.channel.timezone),
    }),
    durationMinutes: t.int({ description: 'Length in minutes.', resolve: (s) => s.airing.durationMinutes }),
    episodeType: t.field({ type: EpisodeType, description: "The episode's type.", resolve: (s) => s.airing.episode.type as 'live' }),
    state: t.field({
      type: AiringStateEnum,
      description: 'Where the airing stands now.',
      resolve: (s, _a, ctx) => airingState(s.airing, s.airing.episode, now(ctx)),
    }),
    wentLiveAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When its live feed first arrived.',
      resolve: (s) => s.airing.wentLiveAt,
    }),
    bannerUrl: t.string({
      nullable: true,
      description: "The episode's banner, else the program's, else the channel's show banner.",
      resolve: (s) => bannerOf(s.airing.episode, s.airing.episode.program, s.channel),
    }),
  }),
})

const OnAirRef = builder.objectRef<OnAir & { channel: ChannelRow }>('OnAir').implement({
  description: 'The program whose weekly slot is open now (REST /programs/current).',
  fields: (t) => ({
    channelName: t.string({ description: "The channel's name.", resolve: (o) => o.channel.name }),
    status: t.field({ type: OnAirStatus, description: 'Whether a slot is open.', resolve: (o) => o.status }),
    program: t.field({ type: ProgramRef, nullable: true, description: 'Null when off air.', resolve: (o) => o.program }),
    episode: t.field({
      type: EpisodeRef,
      nullable: true,
      description: 'The episode airing in the slot; null when none does.',
      resolve: (o) => (o.airing ? { episode: o.airing.episode, program: o.airing.episode.program, channel: o.channel } : null),
    }),
    startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true, description: "The slot's start; null when off air." }),
    endsAt: t.expose('endsAt', { type: 'DateTime', nullable: true, description: "The slot's end; null when off air." }),
    playbackSource: t.field({
      type: PlaybackSourceEnum,
      nullable: true,
      description: 'Null when off air.',
      resolve: (o) => o.playbackSource,
    }),
    bannerUrl: t.exposeString('bannerUrl', { nullable: true, description: 'Null when off air.' }),
    fallback: t.field({
      type: FallbackRef,
      nullable: true,
      description: 'What plays while playbackSource is FALLBACK, when the channel describes it; null otherwise.',
      resolve: (o) => (o.playbackSource === 'fallback' ? fallbackOf(o.channel) : null),
    }),
  }),
})

const ScheduledBroadcastRef = builder
  .objectRef<{ id: number; startsAt: Date; endsAt: Date; cancelled: boolean; video: Video }>('ScheduledBroadcast')
  .implement({
    description: 'A video booked to play at a set time.',
    fields: (t) => ({
      id: t.exposeInt('id', { description: 'The broadcast id.' }),
      startsAt: t.expose('startsAt', { type: 'DateTime', description: 'Start.' }),
      endsAt: t.expose('endsAt', { type: 'DateTime', description: 'End.' }),
      status: t.field({
        type: BroadcastStatusEnum,
        description: 'By its times, now.',
        resolve: (b, _a, ctx) => broadcastStatus(b, now(ctx)),
      }),
      video: t.field({ type: VideoRef, description: 'The video it plays.', resolve: (b) => b.video }),
    }),
  })

const CatchupRef = builder.objectRef<Catchup & { video: Video }>('Catchup').implement({
  description: 'A past broadcast offered to watch again.',
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'The catchup id.' }),
    title: t.exposeString('title', { description: 'Title.' }),
    description: t.exposeString('description', { description: 'Description; empty when none.' }),
    startsAt: t.expose('startsAt', { type: 'DateTime', description: 'When it was on air.' }),
    endsAt: t.expose('endsAt', { type: 'DateTime', description: 'When it ended.' }),
    duration: t.int({ description: 'Seconds.', resolve: (c) => Math.round((c.endsAt.getTime() - c.startsAt.getTime()) / 1000) }),
    video: t.field({ type: VideoRef, description: 'The video to play.', resolve: (c) => c.video }),
  }),
})

interface Paged<T> {
  nodes: T[]
  total: number
  currentPage: number
  perPage: number
}
// any: Pothos types an object ref by its shape; the page's item ref is any of the channel types.
// oxlint-disable-next-line typescript/no-explicit-any
function pageRef<T>(name: string, item: any, what: string) {
  return builder.objectRef<Paged<T>>(name).implement({
    description: `One page of ${what}.`,
    fields: (t) => ({
      // oxlint-disable-next-line typescript/no-explicit-any
      nodes: t.field({ type: [item], description: `The ${what} on this page.`, resolve: (p) => p.nodes as any }),
      total: t.exposeInt('total', { description: `How many ${what} there are in all.` }),
      currentPage: t.exposeInt('currentPage', { description: 'This page, from 1.' }),
      perPage: t.exposeInt('perPage', { description: 'Page size.' }),
      lastPage: t.int({ description: 'The last page; at least 1.', resolve: (p) => Math.max(1, Math.ceil(p.total / p.perPage)) }),
    }),
  })
}
const CatchupPage = pageRef<Catchup & { video: Video }>('CatchupPage', CatchupRef, 'catchups')
const ProgramPage = pageRef<ProgramSource>('ProgramPage', ProgramRef, 'programs')
const EpisodePage = pageRef<EpisodeSource>('EpisodePage', EpisodeRef, 'episodes')

/** page >= 1; perPage clamped to [1, max]; anything unparseable was refused by the caller. */
function paging(page: number | null | undefined, perPage: number | null | undefined, fallback: number, max: number) {
  const p = page ?? 1
  const n = perPage ?? fallback
  if (!Number.isInteger(p) || p < 1) throw new AppError('BAD_REQUEST', 'page must be a whole number from 1')
  if (!Number.isInteger(n) || n < 1) throw new AppError('BAD_REQUEST', 'per_page must be a whole number from 1')
  return { page: p, perPage: Math.min(n, max) }
}

export const ChannelRef = builder.objectRef<ChannelRow>('Channel').implement({
  description: 'A broadcast channel: public, read-only.',
  fields: (t) => ({
    uuid: t.exposeID('id', { description: 'The channel uuid (the REST `uuid`).' }),
    slug: t.exposeString('slug', { description: 'Short name, usable wherever the uuid is.' }),
    name: t.exposeString('name', { description: 'Display name.' }),
    timezone: t.exposeString('timezone', { description: 'IANA zone of its weekly slots.' }),
    showBannerUrl: t.exposeString('showBannerUrl', {
      nullable: true,
      description: "The channel's banner, shown when nothing else has one.",
    }),
    streamUrl: t.exposeString('streamUrl', {
      nullable: true,
      description: 'The live stream (HLS) players tune to; listed in /api/channels.m3u when set.',
    }),
    fallback: t.field({
      type: FallbackRef,
      nullable: true,
      description: 'What plays when the open slot has no episode (playback source FALLBACK); null when the channel does not say.',
      resolve: (c) => fallbackOf(c),
    }),
    guide: t.field({
      type: [AiringRef],
      description:
        'The program guide: airings that end after a day ago and start within 14 days, soonest first, cancelled ones included (REST xmltv and schedule.ics).',
      resolve: async (c, _a, ctx) => (await guideAirings(ctx.deps.db, c.id, now(ctx))).map((airing) => ({ airing, channel: c })),
    }),
    nowPlaying: t.field({
      type: NowPlayingRef,
      description: 'What is playing now (REST /channels/{uuid}/status).',
      resolve: async (c, _a, ctx) => nowPlaying(await ctx.deps.channelCache.snapshot(ctx.deps.db, c, now(ctx)), now(ctx)),
    }),
    onAir: t.field({
      type: OnAirRef,
      description: 'The program whose weekly slot is open now.',
      resolve: async (c, _a, ctx) => ({
        ...onAirNow(await ctx.deps.channelCache.snapshot(ctx.deps.db, c, now(ctx)), now(ctx)),
        channel: c,
      }),
    }),
    schedule: t.field({
      type: [ScheduledBroadcastRef],
      description:
        'Scheduled broadcasts that ended within the last two hours or are still to come, by start time. Program episodes are not in it.',
      resolve: (c, _a, ctx) =>
        ctx.deps.db.scheduledBroadcast.findMany({
          where: { channelId: c.id, endsAt: { gt: new Date(now(ctx).getTime() - 2 * 3_600_000) } },
          include: { video: true },
          orderBy: [{ startsAt: 'asc' }, { id: 'asc' }],
        }),
    }),
    catchups: t.field({
      type: CatchupPage,
      description: 'Newest air time first, 15 a page.',
      args: { page: t.arg.int({ defaultValue: 1, description: 'From 1.' }) },
      resolve: async (c, args, ctx) => {
        const { page, perPage } = paging(args.page, 15, 15, 15)
        const [total, nodes] = await Promise.all([
          ctx.deps.db.catchup.count({ where: { channelId: c.id } }),
          ctx.deps.db.catchup.findMany({
            where: { channelId: c.id },
            include: { video: true },
            orderBy: [{ startsAt: 'desc' }, { id: 'desc' }],
            skip: (page - 1) * perPage,
            take: perPage,
          }),
        ])
        return { nodes, total, currentPage: page, perPage }
      },
    }),
    programs: t.field({
      type: ProgramPage,
      description: 'Active and paused programs, by name.',
      args: {
        status: t.arg({ type: ProgramStatus, description: 'Only ACTIVE or only PAUSED programs; other values give an empty page.' }),
        type: t.arg({ type: ProgramType, description: 'Only programs of this type.' }),
        perPage: t.arg.int({ defaultValue: 15, description: 'At most 50; larger values are clamped.' }),
        page: t.arg.int({ defaultValue: 1, description: 'From 1.' }),
      },
      resolve: async (c, args, ctx) => {
        const { page, perPage } = paging(args.page, args.perPage, 15, 50)
        if (args.status && args.status !== 'active' && args.status !== 'paused') return { nodes: [], total: 0, currentPage: page, perPage }
        const where = {
          channelId: c.id,
          status: args.status ? args.status : { in: ['active', 'paused'] },
          ...(args.type ? { type: args.type } : {}),
        }
        const [total, nodes] = await Promise.all([
          ctx.deps.db.program.count({ where }),
          ctx.deps.db.program.findMany({
            where,
            include: { slots: true, _count: { select: { episodes: true } } },
            orderBy: [{ name: 'asc' }, { id: 'asc' }],
            skip: (page - 1) * perPage,
            take: perPage,
          }),
        ])
        return { nodes, total, currentPage: page, perPage }
      },
    }),
    nextAiring: t.field({
      type: AiringRef,
      nullable: true,
      description: 'The next booked airing; null if nothing is booked.',
      resolve: async (c, _a, ctx) => {
        const airing = await nextAiring(ctx.deps.db, c.id, now(ctx))
        return airing ? { airing, channel: c } : null
      },
    }),
    upcomingAirings: t.field({
      type: [AiringRef],
      description: 'Soonest first; an episode on air at `from` comes first.',
      args: {
        limit: t.arg.int({ defaultValue: 10, description: 'At most 50; larger values are clamped.' }),
        from: t.arg.string({
          description: 'ISO 8601 with offset, YYYY-MM-DD (midnight in the channel zone) or Unix seconds. Default: now.',
        }),
        to: t.arg.string({ description: 'Airings starting at or before; same formats.' }),
      },
      resolve: async (c, args, ctx) => {
        const limit = args.limit ?? 10
        if (!Number.isInteger(limit) || limit < 1) throw new AppError('BAD_REQUEST', 'limit must be a whole number from 1')
        const from = args.from ? parseTimeParam('from', args.from, c.timezone) : now(ctx)
        const to = args.to ? parseTimeParam('to', args.to, c.timezone) : null
        const rows = await upcomingAirings(ctx.deps.db, c.id, { from, to, limit: Math.min(limit, 50) })
        return rows.map((airing) => ({ airing, channel: c }))
      },
    }),
  }),
})

// Public nodes: node(id:) answers what channel(id:) and program(id:) answer, null where they are NOT_FOUND.
builder.nodeRef<ChannelRow, string, typeof ChannelRef>(ChannelRef, {
  id: { description: 'The global id (Relay); `uuid` is the database id.', resolve: (c) => c.id },
  loadOne: (id, ctx) => ctx.deps.channelCache.channel(ctx.deps.db, id, false).catch(nullWhenNotFound),
})
builder.nodeRef<ProgramSource, string, typeof ProgramRef>(ProgramRef, {
  id: { description: 'The global id (Relay); `uuid` is the program id.', resolve: (p) => p.id },
  loadOne: (id, ctx) => findProgram(ctx.deps.db, id).catch(nullWhenNotFound),
})

builder.objectField(ProgramRef, 'channel', (t) =>
  t.field({
    type: ChannelRef,
    description: 'The channel it belongs to.',
    resolve: (p, _a, ctx) => findChannel(ctx.deps.db, p.channelId, false),
  }),
)

builder.objectField(ProgramRef, 'episodes', (t) =>
  t.field({
    type: EpisodePage,
    description: 'Highest episode number first. The status filter applies to the page already fetched, so a page may hold fewer.',
    args: {
      status: t.arg({ type: EpisodeStatus, description: 'Only episodes with this status (applied to the fetched page).' }),
      from: t.arg.string({ description: 'Episodes with an airing at or after; same formats as upcomingAirings.' }),
      to: t.arg.string({ description: 'Episodes with an airing at or before.' }),
      perPage: t.arg.int({ defaultValue: 15, description: 'At most 50; larger values are clamped.' }),
      page: t.arg.int({ defaultValue: 1, description: 'From 1.' }),
    },
    resolve: async (program, args, ctx) => {
      const { page, perPage } = paging(args.page, args.perPage, 15, 50)
      const channel = await ctx.deps.db.channel.findUniqueOrThrow({
        where: { id: program.channelId },
        select: channelSelect,
      })
      const from = args.from ? parseTimeParam('from', args.from, channel.timezone) : null
      const to = args.to ? parseTimeParam('to', args.to, channel.timezone) : null
      const where = {
        programId: program.id,
        ...(from || to ? { airings: { some: { startsAt: { ...(from ? { gte: from } : {}), ...(to ? { lte: to } : {}) } } } } : {}),
      }
      const [total, rows] = await Promise.all([
        ctx.deps.db.episode.count({ where }),
        ctx.deps.db.episode.findMany({
          where,
          include: { airings: { orderBy: { startsAt: 'asc' } } },
          orderBy: { episodeNumber: 'desc' },
          skip: (page - 1) * perPage,
          take: perPage,
        }),
      ])
      const at = now(ctx)
      const nodes = rows
        .filter((e) => !args.status || episodeStatus(e, e.airings, at) === args.status)
        .map((e) => ({ episode: e, program, channel, airings: e.airings }))
      return { nodes, total, currentPage: page, perPage }
    },
  }),
)

builder.queryFields((t) => ({
  channel: t.field({
    scope: 'public',
    type: ChannelRef,
    nullable: true,
    description: 'A channel by uuid or slug. Public. Null, with a NOT_FOUND error, when there is none.',
    args: { id: t.arg.string({ required: true, description: 'The channel uuid or slug, or its global id.' }) },
    resolve: (_root, { id }, ctx) => ctx.deps.channelCache.channel(ctx.deps.db, localId(id, 'Channel'), true),
  }),
  streamChannels: t.field({
    scope: 'public',
    type: [ChannelRef],
    description: 'Channels that have a live stream URL, by name (REST /channels.m3u). Public.',
    resolve: (_root, _a, ctx) => streamChannels(ctx.deps.db),
  }),
  program: t.field({
    scope: 'public',
    type: ProgramRef,
    nullable: true,
    description: 'An active or paused program by id or slug. Public. Null, with a NOT_FOUND error, when there is none.',
    args: { id: t.arg.string({ required: true, description: 'The program id or slug, or its global id.' }) },
    resolve: (_root, { id }, ctx) => findProgram(ctx.deps.db, localId(id, 'Program')),
  }),
}))
