import { builder } from './builder.js'
import { AppError } from '../errors.js'
import type { Context } from './context.js'
import type { Airing, Catchup, Episode, Program, Video, WeeklySlot } from '../generated/sqlite/client.js'
import type { AiringRow, ChannelRow } from '../channel/types.js'
import {
  airingEnd,
  airingState,
  bannerOf,
  broadcastStatus,
  episodeStatus,
  nowPlaying,
  onAirNow,
  type CurrentVideo,
  type NowPlaying,
  type OnAir,
} from '../channel/rules.js'
import { findChannel, findProgram, nextAiring, parseTimeParam, upcomingAirings } from '../channel/queries.js'
import { DAY_NAMES, localHourMinute } from '../channel/zoned-time.js'

const now = (ctx: Context) => ctx.deps.clock.now()
const upper = <T extends string>(values: readonly T[]) =>
  Object.fromEntries(values.map((v) => [v.toUpperCase(), { value: v }])) as { [K in Uppercase<T>]: { value: T } }

const ProgramType = builder.enumType('ProgramType', { values: upper(['live', 'on_demand'] as const) })
const ProgramStatus = builder.enumType('ProgramStatus', { values: upper(['draft', 'active', 'paused', 'archived'] as const) })
const EpisodeType = builder.enumType('EpisodeType', { values: upper(['pre_recorded', 'live'] as const) })
const EpisodeStatus = builder.enumType('EpisodeStatus', { values: upper(['draft', 'scheduled', 'on_air', 'completed', 'missed', 'cancelled'] as const) })
const AiringStateEnum = builder.enumType('AiringState', {
  description: 'upcoming; pre_show (starts within 15 minutes); on_air; ended; missed (a live episode that never received a feed); cancelled.',
  values: upper(['upcoming', 'pre_show', 'on_air', 'ended', 'missed', 'cancelled'] as const),
})
const BroadcastStatusEnum = builder.enumType('BroadcastStatus', { values: upper(['pending', 'live', 'completed', 'cancelled'] as const) })
const PlaybackSourceEnum = builder.enumType('PlaybackSource', {
  description: 'livestream; pre_recorded; trailer (while a live episode waits for its feed); standby (starts-soon card); fallback (the usual content).',
  values: upper(['livestream', 'pre_recorded', 'trailer', 'standby', 'fallback'] as const),
})
const OnAirStatus = builder.enumType('OnAirStatus', { values: upper(['on_air', 'off_air'] as const) })

const VideoRef = builder.objectRef<Video>('Video').implement({
  fields: (t) => ({
    id: t.exposeInt('id'),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    thumbnail: t.exposeString('thumbnail', { nullable: true }),
    hlsUrl: t.exposeString('hlsUrl', { nullable: true }),
    resolution: t.exposeString('resolution', { nullable: true }),
    durationSeconds: t.exposeInt('durationSeconds'),
  }),
})

const CurrentVideoRef = builder.objectRef<CurrentVideo>('CurrentVideo').implement({
  fields: (t) => ({
    videoId: t.int({ nullable: true, description: 'Scheduled broadcasts only.', resolve: (v) => v.videoId ?? null }),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    location: t.exposeString('location'),
    thumbnail: t.exposeString('thumbnail', { nullable: true }),
    startTime: t.expose('startTime', { type: 'DateTime', nullable: true, description: 'Null for a live broadcast.' }),
    endTime: t.expose('endTime', { type: 'DateTime', nullable: true }),
    remainingTime: t.exposeInt('remainingTime', { description: 'Seconds left; 0 for a live broadcast.' }),
    remainingTimeHuman: t.exposeString('remainingTimeHuman', { description: 'MM:SS, HH:MM:SS, or Live.' }),
  }),
})

const NowPlayingRef = builder.objectRef<NowPlaying>('NowPlaying').implement({
  fields: (t) => ({
    channelName: t.exposeString('channelName'),
    isLive: t.exposeBoolean('isLive', { description: 'A live feed is on air.' }),
    currentVideo: t.field({ type: CurrentVideoRef, nullable: true, resolve: (n) => n.currentVideo }),
    estimatedEndAt: t.expose('estimatedEndAt', { type: 'DateTime', description: 'When this answer is expected to change.' }),
    cacheSeconds: t.exposeInt('cacheSeconds', { description: 'How long the answer may be cached.' }),
  }),
})

interface SlotSource extends WeeklySlot {}
const WeeklySlotRef = builder.objectRef<SlotSource>('WeeklySlot').implement({
  description: "A weekly slot in the channel's local time.",
  fields: (t) => ({
    id: t.exposeInt('id'),
    dayOfWeek: t.exposeInt('dayOfWeek', { description: '0 = Sunday' }),
    day: t.string({ resolve: (s) => DAY_NAMES[s.dayOfWeek]! }),
    startTime: t.exposeString('startTime', { description: 'HH:MM' }),
    durationMinutes: t.exposeInt('durationMinutes'),
  }),
})

type ProgramSource = Program & { slots?: WeeklySlot[]; _count?: { episodes: number } }
const ProgramRef = builder.objectRef<ProgramSource>('Program')
type EpisodeSource = { episode: Episode; program: Program; channel: ChannelRow; airings?: Airing[] }
const EpisodeRef = builder.objectRef<EpisodeSource>('Episode')
type AiringSource = { airing: AiringRow; channel: ChannelRow }
const AiringRef = builder.objectRef<AiringSource>('Airing')

ProgramRef.implement({
  fields: (t) => ({
    id: t.exposeInt('id'),
    name: t.exposeString('name'),
    slug: t.exposeString('slug'),
    synopsis: t.exposeString('synopsis'),
    bannerUrl: t.exposeString('bannerUrl', { nullable: true }),
    trailerUrl: t.exposeString('trailerUrl', { nullable: true }),
    type: t.field({ type: ProgramType, resolve: (p) => p.type as 'live' }),
    status: t.field({ type: ProgramStatus, resolve: (p) => p.status as 'active' }),
    availableOnDemand: t.exposeBoolean('availableOnDemand', { description: 'Episodes stay available after airing.' }),
    episodesCount: t.int({
      resolve: async (p, _a, ctx) => p._count?.episodes ?? ctx.deps.db.episode.count({ where: { programId: p.id } }),
    }),
    schedule: t.field({
      type: [WeeklySlotRef],
      resolve: async (p, _a, ctx) =>
        (p.slots ?? (await ctx.deps.db.weeklySlot.findMany({ where: { programId: p.id } }))).sort(
          (a, b) => a.dayOfWeek - b.dayOfWeek || a.startTime.localeCompare(b.startTime) || a.id - b.id,
        ),
    }),
  }),
})

const OnDemandRef = builder.objectRef<Episode>('OnDemandAsset').implement({
  fields: (t) => ({
    id: t.int({ resolve: (e) => e.onDemandId ?? e.id }),
    duration: t.int({ nullable: true, resolve: (e) => e.onDemandDuration }),
    hlsUrl: t.exposeString('onDemandHlsUrl', { nullable: true }),
    thumbnailUrl: t.exposeString('onDemandThumbnailUrl', { nullable: true }),
  }),
})

EpisodeRef.implement({
  fields: (t) => ({
    id: t.int({ resolve: (s) => s.episode.id }),
    episodeNumber: t.int({ resolve: (s) => s.episode.episodeNumber }),
    name: t.string({ resolve: (s) => s.episode.name }),
    synopsis: t.string({ nullable: true, resolve: (s) => s.episode.synopsis }),
    bannerUrl: t.string({ nullable: true, resolve: (s) => s.episode.bannerUrl }),
    trailerUrl: t.string({ nullable: true, description: "The episode's own; no fallback to the program's.", resolve: (s) => s.episode.trailerUrl }),
    type: t.field({ type: EpisodeType, resolve: (s) => s.episode.type as 'live' }),
    status: t.field({
      type: EpisodeStatus,
      resolve: async (s, _a, ctx) => episodeStatus(s.episode, s.airings ?? (await airingsOf(ctx, s.episode.id)), now(ctx)),
    }),
    availableOnDemand: t.boolean({ resolve: (s) => s.episode.availableOnDemand }),
    onDemand: t.field({
      type: OnDemandRef,
      nullable: true,
      description: 'Once the episode is available on demand.',
      resolve: (s) => (s.episode.availableOnDemand && s.episode.onDemandHlsUrl ? s.episode : null),
    }),
    broadcasts: t.field({
      type: [AiringRef],
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
  fields: (t) => ({
    id: t.int({ resolve: (s) => s.airing.id }),
    program: t.field({ type: ProgramRef, resolve: (s) => s.airing.episode.program }),
    episode: t.field({ type: EpisodeRef, resolve: (s) => ({ episode: s.airing.episode, program: s.airing.episode.program, channel: s.channel }) }),
    startsAt: t.field({ type: 'DateTime', resolve: (s) => s.airing.startsAt }),
    endsAt: t.field({ type: 'DateTime', resolve: (s) => airingEnd(s.airing) }),
    startTime: t.string({ description: "HH:MM in the channel's zone.", resolve: (s) => localHourMinute(s.airing.startsAt, s.channel.timezone) }),
    durationMinutes: t.int({ resolve: (s) => s.airing.durationMinutes }),
    episodeType: t.field({ type: EpisodeType, resolve: (s) => s.airing.episode.type as 'live' }),
    state: t.field({ type: AiringStateEnum, resolve: (s, _a, ctx) => airingState(s.airing, s.airing.episode, now(ctx)) }),
    wentLiveAt: t.field({ type: 'DateTime', nullable: true, resolve: (s) => s.airing.wentLiveAt }),
    bannerUrl: t.string({ nullable: true, resolve: (s) => bannerOf(s.airing.episode, s.airing.episode.program, s.channel) }),
  }),
})

const OnAirRef = builder.objectRef<OnAir & { channel: ChannelRow }>('OnAir').implement({
  fields: (t) => ({
    channelName: t.string({ resolve: (o) => o.channel.name }),
    status: t.field({ type: OnAirStatus, resolve: (o) => o.status }),
    program: t.field({ type: ProgramRef, nullable: true, resolve: (o) => o.program }),
    episode: t.field({
      type: EpisodeRef,
      nullable: true,
      resolve: (o) => (o.airing ? { episode: o.airing.episode, program: o.airing.episode.program, channel: o.channel } : null),
    }),
    startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true }),
    endsAt: t.expose('endsAt', { type: 'DateTime', nullable: true }),
    playbackSource: t.field({ type: PlaybackSourceEnum, nullable: true, resolve: (o) => o.playbackSource }),
    bannerUrl: t.exposeString('bannerUrl', { nullable: true, description: 'Null when off air.' }),
  }),
})

const ScheduledBroadcastRef = builder
  .objectRef<{ id: number; startsAt: Date; endsAt: Date; cancelled: boolean; video: Video }>('ScheduledBroadcast')
  .implement({
    fields: (t) => ({
      id: t.exposeInt('id'),
      startsAt: t.expose('startsAt', { type: 'DateTime' }),
      endsAt: t.expose('endsAt', { type: 'DateTime' }),
      status: t.field({ type: BroadcastStatusEnum, resolve: (b, _a, ctx) => broadcastStatus(b, now(ctx)) }),
      video: t.field({ type: VideoRef, resolve: (b) => b.video }),
    }),
  })

const CatchupRef = builder.objectRef<Catchup & { video: Video }>('Catchup').implement({
  fields: (t) => ({
    id: t.exposeInt('id'),
    title: t.exposeString('title'),
    description: t.exposeString('description'),
    startsAt: t.expose('startsAt', { type: 'DateTime' }),
    endsAt: t.expose('endsAt', { type: 'DateTime' }),
    duration: t.int({ description: 'Seconds.', resolve: (c) => Math.round((c.endsAt.getTime() - c.startsAt.getTime()) / 1000) }),
    video: t.field({ type: VideoRef, resolve: (c) => c.video }),
  }),
})

interface Paged<T> {
  nodes: T[]
  total: number
  currentPage: number
  perPage: number
}
function pageRef<T>(name: string, item: any) {
  return builder.objectRef<Paged<T>>(name).implement({
    fields: (t) => ({
      nodes: t.field({ type: [item], resolve: (p) => p.nodes as any }),
      total: t.exposeInt('total'),
      currentPage: t.exposeInt('currentPage'),
      perPage: t.exposeInt('perPage'),
      lastPage: t.int({ resolve: (p) => Math.max(1, Math.ceil(p.total / p.perPage)) }),
    }),
  })
}
const CatchupPage = pageRef<Catchup & { video: Video }>('CatchupPage', CatchupRef)
const ProgramPage = pageRef<ProgramSource>('ProgramPage', ProgramRef)
const EpisodePage = pageRef<EpisodeSource>('EpisodePage', EpisodeRef)

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
    id: t.exposeID('id', { description: 'The channel uuid.' }),
    slug: t.exposeString('slug'),
    name: t.exposeString('name'),
    timezone: t.exposeString('timezone', { description: 'IANA zone of its weekly slots.' }),
    showBannerUrl: t.exposeString('showBannerUrl', { nullable: true }),
    nowPlaying: t.field({
      type: NowPlayingRef,
      resolve: async (c, _a, ctx) => nowPlaying(await ctx.deps.channelCache.snapshot(ctx.deps.db, c, now(ctx)), now(ctx)),
    }),
    onAir: t.field({
      type: OnAirRef,
      description: 'The program whose weekly slot is open now.',
      resolve: async (c, _a, ctx) => ({ ...onAirNow(await ctx.deps.channelCache.snapshot(ctx.deps.db, c, now(ctx)), now(ctx)), channel: c }),
    }),
    schedule: t.field({
      type: [ScheduledBroadcastRef],
      description: 'Scheduled broadcasts that ended within the last two hours or are still to come, by start time. Program episodes are not in it.',
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
      args: { page: t.arg.int({ defaultValue: 1 }) },
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
        status: t.arg({ type: ProgramStatus }),
        type: t.arg({ type: ProgramType }),
        perPage: t.arg.int({ defaultValue: 15, description: 'At most 50; larger values are clamped.' }),
        page: t.arg.int({ defaultValue: 1 }),
      },
      resolve: async (c, args, ctx) => {
        const { page, perPage } = paging(args.page, args.perPage, 15, 50)
        if (args.status && args.status !== 'active' && args.status !== 'paused') return { nodes: [], total: 0, currentPage: page, perPage }
        const where = { channelId: c.id, status: args.status ? args.status : { in: ['active', 'paused'] }, ...(args.type ? { type: args.type } : {}) }
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
        from: t.arg.string({ description: 'ISO 8601 with offset, YYYY-MM-DD (midnight in the channel zone) or Unix seconds. Default: now.' }),
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

builder.objectField(ProgramRef, 'channel', (t) =>
  t.field({
    type: ChannelRef,
    resolve: (p, _a, ctx) => findChannel(ctx.deps.db, p.channelId, false),
  }),
)

builder.objectField(ProgramRef, 'episodes', (t) =>
  t.field({
    type: EpisodePage,
    description: 'Highest episode number first. The status filter applies to the page already fetched, so a page may hold fewer.',
    args: {
      status: t.arg({ type: EpisodeStatus }),
      from: t.arg.string({ description: 'Episodes with an airing at or after; same formats as upcomingAirings.' }),
      to: t.arg.string({ description: 'Episodes with an airing at or before.' }),
      perPage: t.arg.int({ defaultValue: 15, description: 'At most 50; larger values are clamped.' }),
      page: t.arg.int({ defaultValue: 1 }),
    },
    resolve: async (program, args, ctx) => {
      const { page, perPage } = paging(args.page, args.perPage, 15, 50)
      const channel = await ctx.deps.db.channel.findUniqueOrThrow({
        where: { id: program.channelId },
        select: { id: true, slug: true, name: true, timezone: true, showBannerUrl: true },
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
    type: ChannelRef,
    description: 'A channel by uuid or slug. Public.',
    args: { id: t.arg.string({ required: true }) },
    resolve: (_root, { id }, ctx) => ctx.deps.channelCache.channel(ctx.deps.db, id, true),
  }),
  program: t.field({
    type: ProgramRef,
    description: 'An active or paused program by id or slug. Public.',
    args: { id: t.arg.string({ required: true }) },
    resolve: (_root, { id }, ctx) => findProgram(ctx.deps.db, id),
  }),
}))

