// The public channel interface: nine GET paths, each one GraphQL operation, exact legacy shapes;
// then the program guides (XMLTV, iCalendar, M3U), which answer in their own formats.
import { AppError, notFound } from '../src/core/errors.js'
import { isoUtcMicros, isoWithOffset } from '../src/channel/zoned-time.js'
import { route, type Found, type ParameterDoc, type RestRoute, type RouteInput } from './route.js'
import { graphql, type ResultOf } from '../src/graphql/typed-documents.js'
import { integer, oneOf, ref, string, uuid } from './openapi/json-schema.js'
import { buildXmltv } from '../src/channel/xmltv.js'
import { buildICalendar } from '../src/channel/ical.js'
import { buildM3u } from '../src/channel/m3u.js'
import type { GuideAiring, GuideChannel } from '../src/channel/guide-types.js'
import { GUIDE_AHEAD_MS, GUIDE_PAST_MS } from '../src/channel/queries.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** `{uuid}` paths take the channel uuid only. */
function uuidParam({ params }: RouteInput) {
  if (!UUID.test(params.uuid!)) throw notFound('Channel')
  return params.uuid!
}

/** A whole number from the query string, or undefined; anything else is a 400. */
function intParam(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name)
  if (raw === null || raw.trim() === '') return undefined
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1) throw new AppError('BAD_REQUEST', `${name} must be a whole number from 1`)
  return Math.min(Number(raw), 1_000_000)
}

function enumParam(query: URLSearchParams, name: string, allowed: readonly string[]): string | undefined {
  const raw = query.get(name)
  if (raw === null || raw === '') return undefined
  if (!allowed.includes(raw)) throw new AppError('BAD_REQUEST', `${name} must be one of ${allowed.join(', ')}`)
  return raw.toUpperCase()
}

const low = (v: string | null) => (v === null ? null : v.toLowerCase())
const withOffset = (iso: string | null, tz: string) => (iso === null ? null : isoWithOffset(new Date(iso), tz))
const utc = (iso: string) => isoUtcMicros(new Date(iso))

// Program.uuid is an ID (the program number as text, like every Node's uuid); REST answers the number.
const AIRING = graphql(`fragment LegacyAiring on Airing {
  id startsAt endsAt startTime durationMinutes episodeType state wentLiveAt bannerUrl
  program { id: uuid name } episode { id episodeNumber name }
}`)

const legacyAiring = (a: ResultOf<typeof AIRING>, tz: string) => ({
  id: a.id,
  program: { id: Number(a.program.id), name: a.program.name },
  episode: { id: a.episode.id, episode_number: a.episode.episodeNumber, name: a.episode.name },
  starts_at: withOffset(a.startsAt, tz),
  ends_at: withOffset(a.endsAt, tz),
  start_time: a.startTime,
  duration_minutes: a.durationMinutes,
  episode_type: low(a.episodeType),
  state: low(a.state),
  went_live_at: withOffset(a.wentLiveAt, tz),
  banner_url: a.bannerUrl,
})

const PROGRAM = graphql(`fragment LegacyProgram on Program {
  id: uuid name slug synopsis bannerUrl trailerUrl type status availableOnDemand
  schedule { id dayOfWeek day startTime durationMinutes }
}`)

const legacyProgram = (p: ResultOf<typeof PROGRAM> & { episodesCount?: number }) => ({
  id: Number(p.id),
  name: p.name,
  slug: p.slug,
  synopsis: p.synopsis,
  banner_url: p.bannerUrl,
  trailer_url: p.trailerUrl,
  type: low(p.type),
  status: low(p.status),
  available_on_demand: p.availableOnDemand,
  ...(p.episodesCount !== undefined ? { episodes_count: p.episodesCount } : {}),
  schedule: p.schedule.map((s) => ({
    id: s.id,
    day_of_week: s.dayOfWeek,
    day: s.day,
    start_time: s.startTime,
    duration_minutes: s.durationMinutes,
  })),
})

const pageMeta = (p: { total: number; currentPage: number; lastPage: number; perPage: number }) => ({
  total: p.total,
  current_page: p.currentPage,
  last_page: p.lastPage,
  per_page: p.perPage,
})

const pagePosition = (p: { total: number; currentPage: number; lastPage: number }) => ({
  page: p.currentPage,
  lastPage: p.lastPage,
  total: p.total,
})

const upcomingDocument = graphql(
  `query Upcoming($channel: String!, $limit: Int, $from: String, $to: String) {
  channel(id: $channel) { name timezone upcomingAirings(limit: $limit, from: $from, to: $to) { ...LegacyAiring } }
}`,
  [AIRING],
)
const legacyUpcoming = ({ channel: c }: Found<ResultOf<typeof upcomingDocument>>) => {
  const upcoming = c.upcomingAirings.map((a) => legacyAiring(a, c.timezone))
  return { channel_name: c.name, upcoming, count: upcoming.length }
}

// OpenAPI: parameters and examples shared by the entries below.
const uuidParamDoc: ParameterDoc = {
  description: 'The channel uuid (a slug is not accepted here).',
  schema: uuid(),
  example: '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f',
}
const channelParam: ParameterDoc = { description: 'The channel uuid or slug.', schema: string(), example: 'city-tv' }
const pageQuery: ParameterDoc = {
  description: '1-based page number (default 1). Not a whole number from 1: 400.',
  schema: integer(undefined, { minimum: 1 }),
}
const CHANNEL_META = { total: 1, current_page: 1, last_page: 1, per_page: 15 }
const PROGRAM_EXAMPLE = {
  id: 1,
  name: 'Breakfast Show',
  slug: 'breakfast-show',
  synopsis: 'Mornings, live.',
  banner_url: null,
  trailer_url: null,
  type: 'live',
  status: 'active',
  available_on_demand: true,
  episodes_count: 12,
  schedule: [{ id: 1, day_of_week: 1, day: 'Monday', start_time: '07:00', duration_minutes: 120 }],
}
const AIRING_EXAMPLE = {
  id: 21,
  program: { id: 1, name: 'Breakfast Show' },
  episode: { id: 11, episode_number: 12, name: 'Episode 12' },
  starts_at: '2026-03-09T07:00:00+03:00',
  ends_at: '2026-03-09T09:00:00+03:00',
  start_time: '07:00',
  duration_minutes: 120,
  episode_type: 'live',
  state: 'upcoming',
  went_live_at: null,
  banner_url: 'https://cdn.example.com/breakfast.jpg',
}

// Guides: the channel and its airings as GraphQL gives them, as the guide builders take them.
const GUIDE_CHANNEL = graphql(`fragment GuideChannel on Channel { id: uuid slug name timezone showBannerUrl streamUrl }`)
const guideDocument = graphql(
  `query Guide($channel: String!) {
  channel(id: $channel) { ...GuideChannel
    guide { id startsAt endsAt state bannerUrl program { name synopsis type } episode { episodeNumber name synopsis } }
  }
}`,
  [GUIDE_CHANNEL],
)
const guideChannel = (c: ResultOf<typeof GUIDE_CHANNEL>): GuideChannel => ({
  id: c.id,
  slug: c.slug,
  name: c.name,
  timezone: c.timezone,
  iconUrl: c.showBannerUrl,
  streamUrl: c.streamUrl,
})
const guideAirings = (c: Found<ResultOf<typeof guideDocument>>['channel']): GuideAiring[] =>
  c.guide.map((a) => ({
    id: a.id,
    startsAt: new Date(a.startsAt),
    endsAt: new Date(a.endsAt),
    cancelled: a.state === 'CANCELLED',
    programName: a.program.name,
    programSynopsis: a.program.synopsis,
    programType: low(a.program.type)!,
    episodeNumber: a.episode.episodeNumber,
    episodeName: a.episode.name,
    episodeSynopsis: a.episode.synopsis,
    bannerUrl: a.bannerUrl,
  }))
/** Guides change when an operator re-imports; players poll them every few hours at most. */
const GUIDE_CACHE = { 'Cache-Control': 'public, max-age=300' }
/**
 * A guide is computed at most once a minute per instance (microcache span): it costs far more than
 * the JSON answers, and with its key free of query strings no client can make it run more often.
 */
export const GUIDE_MICROCACHE_SECONDS = 60
const GENERATOR = 'sms-channel-gateway'
const textBody = (description: string, example: string) => ({ schema: string(description), example })
const XMLTV_EXAMPLE = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE tv SYSTEM "xmltv.dtd">
<tv generator-info-name="sms-channel-gateway" source-info-name="City TV">
  <channel id="city-tv.example.com">
    <display-name>City TV</display-name>
  </channel>
  <programme start="20260309070000 +0300" stop="20260309090000 +0300" channel="city-tv.example.com">
    <title>Breakfast Show</title>
    <sub-title>Episode 12</sub-title>
    <episode-num system="xmltv_ns">.11.</episode-num>
    <episode-num system="onscreen">E12</episode-num>
  </programme>
</tv>
`

export const channelRoutes: RestRoute[] = [
  route({
    method: 'GET',
    path: '/channels/:uuid/status',
    api: 'channel',
    etag: true,
    microcache: true,
    document: graphql(`query NowPlaying($channel: String!) {
      channel(id: $channel) { timezone nowPlaying {
        channelName isLive estimatedEndAt cacheSeconds
        currentVideo { videoId name description location thumbnail startTime endTime remainingTime remainingTimeHuman }
      } }
    }`),
    variables: (input) => ({ channel: uuidParam(input) }),
    headers: ({ channel }) => ({ 'Cache-Control': `public, max-age=${channel.nowPlaying.cacheSeconds}` }),
    toLegacy: ({ channel: { timezone: tz, nowPlaying: n } }) => {
      const v = n.currentVideo
      return {
        channel_name: n.channelName,
        is_live: n.isLive,
        current_video: v && {
          // The video id is given for scheduled broadcasts only.
          ...(v.videoId !== null ? { id: v.videoId } : {}),
          name: v.name,
          description: v.description,
          location: v.location,
          thumbnail: v.thumbnail,
          start_time: withOffset(v.startTime, tz),
          end_time: withOffset(v.endTime, tz),
          remaining_time: v.remainingTime,
          remaining_time_human: v.remainingTimeHuman,
        },
        estimated_end_at: withOffset(n.estimatedEndAt, tz),
      }
    },
    openapi: {
      operationId: 'getNowPlaying',
      tag: 'Channel',
      summary: 'Now playing',
      description:
        'What the channel is showing now. Cacheable until `estimated_end_at` (Cache-Control says so; 60 s for a live broadcast or an unknown end). Answers carry an ETag; send it back in If-None-Match for a 304.',
      params: { uuid: uuidParamDoc },
      response: {
        description: 'The now-playing object.',
        schema: ref('NowPlaying'),
        example: {
          channel_name: 'City TV',
          is_live: false,
          current_video: {
            id: 42,
            name: 'Morning News',
            description: 'Headlines and weather',
            location: 'Nairobi',
            thumbnail: 'https://cdn.example.com/news.jpg',
            start_time: '2026-03-03T09:00:00+03:00',
            end_time: '2026-03-03T09:30:00+03:00',
            remaining_time: 754,
            remaining_time_human: '12:34',
          },
          estimated_end_at: '2026-03-03T09:30:00+03:00',
        },
      },
    },
  }),
  route({
    method: 'GET',
    path: '/channels/:uuid/schedule',
    api: 'channel',
    etag: true,
    microcache: true,
    document: graphql(`query Schedule($channel: String!) {
      channel(id: $channel) { name schedule { id startsAt endsAt status video { name description thumbnail } } }
    }`),
    variables: (input) => ({ channel: uuidParam(input) }),
    toLegacy: ({ channel: c }) => ({
      channel_name: c.name,
      schedule_count: c.schedule.length,
      schedule: c.schedule.map((b) => ({
        id: b.id,
        start_time: utc(b.startsAt),
        end_time: utc(b.endsAt),
        status: low(b.status),
        video: { name: b.video.name, description: b.video.description, thumbnail: b.video.thumbnail },
      })),
    }),
    openapi: {
      operationId: 'getSchedule',
      tag: 'Channel',
      summary: 'Scheduled broadcasts',
      description: 'Broadcasts that ended within the last two hours or are still to come, by start time. Program episodes are not in it.',
      params: { uuid: uuidParamDoc },
      response: {
        description: 'The schedule.',
        schema: ref('Schedule'),
        example: {
          channel_name: 'City TV',
          schedule_count: 1,
          schedule: [
            {
              id: 7,
              start_time: '2026-03-03T06:00:00.000000Z',
              end_time: '2026-03-03T06:30:00.000000Z',
              status: 'pending',
              video: { name: 'Morning News', description: 'Headlines and weather', thumbnail: null },
            },
          ],
        },
      },
    },
  }),
  route({
    method: 'GET',
    path: '/channels/:uuid/catchups',
    api: 'channel',
    etag: true,
    microcache: true,
    document: graphql(`query Catchups($channel: String!, $page: Int) {
      channel(id: $channel) { name catchups(page: $page) {
        total currentPage lastPage perPage
        nodes { id title description startsAt endsAt duration video { id name thumbnail hlsUrl resolution } }
      } }
    }`),
    variables: (input) => ({ channel: uuidParam(input), page: intParam(input.query, 'page') }),
    toLegacy: ({ channel: c }) => ({
      channel_name: c.name,
      catchup_count: c.catchups.total,
      current_page: c.catchups.currentPage,
      last_page: c.catchups.lastPage,
      per_page: c.catchups.perPage,
      catchups: c.catchups.nodes.map((k) => ({
        id: k.id,
        title: k.title,
        description: k.description,
        start_time: utc(k.startsAt),
        end_time: utc(k.endsAt),
        duration: k.duration,
        video: {
          id: k.video.id,
          name: k.video.name,
          thumbnail: k.video.thumbnail,
          hls_url: k.video.hlsUrl,
          resolution: k.video.resolution,
        },
      })),
    }),
    paging: ({ channel: c }) => pagePosition(c.catchups),
    openapi: {
      operationId: 'listCatchups',
      tag: 'Channel',
      summary: 'Catchups',
      description: 'Newest air time first, 15 a page.',
      params: { uuid: uuidParamDoc },
      query: { page: pageQuery },
      response: {
        description: 'A page of catchups.',
        schema: ref('Catchups'),
        example: {
          channel_name: 'City TV',
          catchup_count: 1,
          current_page: 1,
          last_page: 1,
          per_page: 15,
          catchups: [
            {
              id: 3,
              title: 'Morning News',
              description: 'Headlines and weather',
              start_time: '2026-03-02T06:00:00.000000Z',
              end_time: '2026-03-02T06:30:00.000000Z',
              duration: 1800,
              video: {
                id: 42,
                name: 'Morning News',
                thumbnail: null,
                hls_url: 'https://cdn.example.com/news/index.m3u8',
                resolution: '1080p',
              },
            },
          ],
        },
      },
      errors: [400],
    },
  }),
  route({
    method: 'GET',
    path: '/channels/:channel/programs',
    api: 'channel',
    etag: true,
    microcache: true,
    document: graphql(
      `query Programs($channel: String!, $status: ProgramStatus, $type: ProgramType, $perPage: Int, $page: Int) {
      channel(id: $channel) { name programs(status: $status, type: $type, perPage: $perPage, page: $page) {
        total currentPage lastPage perPage nodes { ...LegacyProgram episodesCount }
      } }
    }`,
      [PROGRAM],
    ),
    variables: ({ params, query }) => ({
      channel: params.channel,
      status: enumParam(query, 'status', ['active', 'paused']),
      type: enumParam(query, 'type', ['live', 'on_demand']),
      perPage: intParam(query, 'per_page'),
      page: intParam(query, 'page'),
    }),
    toLegacy: ({ channel: c }) => ({ channel_name: c.name, programs: c.programs.nodes.map(legacyProgram), meta: pageMeta(c.programs) }),
    paging: ({ channel: c }) => pagePosition(c.programs),
    openapi: {
      operationId: 'listPrograms',
      tag: 'Programs',
      summary: 'Programs',
      description: 'Active and paused programs, by name.',
      params: { channel: channelParam },
      query: {
        status: { description: 'Only programs with this status.', schema: oneOf(['active', 'paused']) },
        type: { description: 'Only programs of this type.', schema: oneOf(['live', 'on_demand']) },
        per_page: { description: 'Page size (default 15); above 50 it is clamped.', schema: integer(undefined, { minimum: 1 }) },
        page: pageQuery,
      },
      response: {
        description: 'A page of programs.',
        schema: ref('Programs'),
        example: { channel_name: 'City TV', programs: [PROGRAM_EXAMPLE], meta: CHANNEL_META },
      },
      errors: [400],
    },
  }),
  route({
    method: 'GET',
    path: '/channels/:channel/programs/current',
    api: 'channel',
    etag: true,
    microcache: true,
    document: graphql(`query OnAir($channel: String!) {
      channel(id: $channel) { timezone onAir {
        channelName status startedAt endsAt playbackSource bannerUrl
        program { id: uuid name type status } episode { id episodeNumber name type status }
      } }
    }`),
    variables: ({ params }) => ({ channel: params.channel }),
    toLegacy: ({ channel: { timezone: tz, onAir: o } }) => ({
      channel_name: o.channelName,
      program: o.program && { id: Number(o.program.id), name: o.program.name, type: low(o.program.type), status: low(o.program.status) },
      episode: o.episode && {
        id: o.episode.id,
        episode_number: o.episode.episodeNumber,
        name: o.episode.name,
        type: low(o.episode.type),
        status: low(o.episode.status),
      },
      status: low(o.status),
      started_at: withOffset(o.startedAt, tz),
      ends_at: withOffset(o.endsAt, tz),
      playback_source: low(o.playbackSource),
      ...(o.status === 'ON_AIR' ? { banner_url: o.bannerUrl } : {}),
    }),
    openapi: {
      operationId: 'getOnAir',
      tag: 'Programs',
      summary: 'Program on air now',
      description:
        'When no weekly slot is open: `status` off_air and program, episode, times and playback_source null. Valid for any channel, also one without programs.',
      params: { channel: channelParam },
      response: {
        description: 'The on-air object.',
        schema: ref('OnAir'),
        example: {
          channel_name: 'City TV',
          program: { id: 1, name: 'Breakfast Show', type: 'live', status: 'active' },
          episode: { id: 11, episode_number: 12, name: 'Episode 12', type: 'live', status: 'on_air' },
          status: 'on_air',
          started_at: '2026-03-03T07:00:00+03:00',
          ends_at: '2026-03-03T09:00:00+03:00',
          playback_source: 'livestream',
          banner_url: 'https://cdn.example.com/breakfast.jpg',
        },
      },
    },
  }),
  route({
    method: 'GET',
    path: '/channels/:channel/programs/next',
    api: 'channel',
    etag: true,
    microcache: true,
    document: graphql(`query NextAiring($channel: String!) { channel(id: $channel) { name timezone nextAiring { ...LegacyAiring } } }`, [
      AIRING,
    ]),
    variables: ({ params }) => ({ channel: params.channel }),
    toLegacy: ({ channel: c }) => ({ channel_name: c.name, next: c.nextAiring && legacyAiring(c.nextAiring, c.timezone) }),
    openapi: {
      operationId: 'getNextAiring',
      tag: 'Programs',
      summary: 'Next airing',
      params: { channel: channelParam },
      response: {
        description: '`next` is null when nothing is booked.',
        schema: ref('NextAiring'),
        example: { channel_name: 'City TV', next: AIRING_EXAMPLE },
      },
    },
  }),
  route({
    method: 'GET',
    path: '/channels/:channel/programs/upcoming',
    api: 'channel',
    etag: true,
    microcache: true,
    document: upcomingDocument,
    variables: ({ params, query }) => ({
      channel: params.channel,
      limit: intParam(query, 'limit'),
      from: query.get('from') || undefined,
      to: query.get('to') || undefined,
    }),
    toLegacy: legacyUpcoming,
    openapi: {
      operationId: 'listUpcomingAirings',
      tag: 'Programs',
      summary: 'Upcoming airings',
      description: 'Soonest first; an episode on air now is at the top.',
      params: { channel: channelParam },
      query: {
        limit: { description: 'How many (default 10); above 50 it is clamped.', schema: integer(undefined, { minimum: 1 }) },
        from: {
          description:
            'Airings at or after (default now). ISO 8601 date-time, a date YYYY-MM-DD (midnight in the channel timezone), or Unix seconds.',
          schema: string(),
          example: '2026-03-03',
        },
        to: { description: 'Airings starting at or before; same formats as `from`.', schema: string() },
      },
      response: {
        description: 'The upcoming airings.',
        schema: ref('Upcoming'),
        example: { channel_name: 'City TV', upcoming: [AIRING_EXAMPLE], count: 1 },
      },
      errors: [400],
    },
  }),
  route({
    method: 'GET',
    path: '/channels/:channel/programs/next/:limit',
    api: 'channel',
    etag: true,
    microcache: true,
    document: upcomingDocument,
    variables: ({ params }) => ({ channel: params.channel, limit: intParam(new URLSearchParams({ limit: params.limit! }), 'limit') }),
    toLegacy: legacyUpcoming,
    openapi: {
      operationId: 'listNextAirings',
      tag: 'Programs',
      summary: 'Next N airings',
      description: 'The same as upcoming with that `limit`.',
      params: {
        channel: channelParam,
        limit: { description: 'How many (at most 50; larger is clamped).', schema: integer(undefined, { minimum: 1 }), example: 5 },
      },
      response: {
        description: 'The upcoming airings.',
        schema: ref('Upcoming'),
        example: { channel_name: 'City TV', upcoming: [AIRING_EXAMPLE], count: 1 },
      },
      errors: [400],
    },
  }),
  route({
    method: 'GET',
    path: '/programs/:program/episodes',
    api: 'channel',
    etag: true,
    microcache: true,
    document: graphql(
      `query Episodes($program: String!, $status: EpisodeStatus, $from: String, $to: String, $perPage: Int, $page: Int) {
      program(id: $program) {
        id: uuid name channel { timezone }
        episodes(status: $status, from: $from, to: $to, perPage: $perPage, page: $page) {
          total currentPage lastPage perPage
          nodes {
            id episodeNumber name synopsis bannerUrl trailerUrl type status availableOnDemand
            onDemand { id duration hlsUrl thumbnailUrl }
            broadcasts { ...LegacyAiring }
          }
        }
      }
    }`,
      [AIRING],
    ),
    variables: ({ params, query }) => ({
      program: params.program,
      status: enumParam(query, 'status', ['draft', 'scheduled', 'on_air', 'completed', 'missed', 'cancelled']),
      from: query.get('from') || undefined,
      to: query.get('to') || undefined,
      perPage: intParam(query, 'per_page'),
      page: intParam(query, 'page'),
    }),
    toLegacy: ({ program: p }) => ({
      program: { id: Number(p.id), name: p.name },
      episodes: p.episodes.nodes.map((e) => ({
        id: e.id,
        episode_number: e.episodeNumber,
        name: e.name,
        synopsis: e.synopsis,
        banner_url: e.bannerUrl,
        trailer_url: e.trailerUrl,
        type: low(e.type),
        status: low(e.status),
        available_on_demand: e.availableOnDemand,
        on_demand: e.onDemand && {
          id: e.onDemand.id,
          duration: e.onDemand.duration,
          hls_url: e.onDemand.hlsUrl,
          thumbnail_url: e.onDemand.thumbnailUrl,
        },
        broadcasts: e.broadcasts.map((a) => legacyAiring(a, p.channel.timezone)),
      })),
      meta: pageMeta(p.episodes),
    }),
    paging: ({ program: p }) => pagePosition(p.episodes),
    openapi: {
      operationId: 'listEpisodes',
      tag: 'Programs',
      summary: 'Program episodes',
      description:
        'Highest episode number first; for active and paused programs. The `status` filter applies to the page already fetched, so a page may hold fewer than `per_page`; `meta.last_page` tells whether more exist.',
      params: { program: { description: 'Program id or slug.', schema: string(), example: 'breakfast-show' } },
      query: {
        status: {
          description: 'Only episodes with this status.',
          schema: oneOf(['draft', 'scheduled', 'on_air', 'completed', 'missed', 'cancelled']),
        },
        from: { description: 'Episodes with an airing at or after; formats as in upcoming.', schema: string() },
        to: { description: 'Episodes with an airing at or before.', schema: string() },
        per_page: { description: 'Page size (default 15); above 50 it is clamped.', schema: integer(undefined, { minimum: 1 }) },
        page: pageQuery,
      },
      response: {
        description: 'A page of episodes.',
        schema: ref('Episodes'),
        example: {
          program: { id: 1, name: 'Breakfast Show' },
          episodes: [
            {
              id: 11,
              episode_number: 12,
              name: 'Episode 12',
              synopsis: null,
              banner_url: null,
              trailer_url: null,
              type: 'live',
              status: 'scheduled',
              available_on_demand: true,
              on_demand: null,
              broadcasts: [AIRING_EXAMPLE],
            },
          ],
          meta: CHANNEL_META,
        },
      },
      errors: [400],
    },
  }),
  route({
    method: 'GET',
    path: '/channels/:uuid/xmltv',
    api: 'channel',
    etag: true,
    microcache: true,
    microcacheSeconds: GUIDE_MICROCACHE_SECONDS,
    contentType: 'application/xml; charset=utf-8',
    document: guideDocument,
    variables: (input) => ({ channel: uuidParam(input) }),
    headers: () => GUIDE_CACHE,
    toLegacy: ({ channel: c }, { publicBaseUrl }) => buildXmltv(guideChannel(c), guideAirings(c), { publicBaseUrl, generator: GENERATOR }),
    openapi: {
      operationId: 'getXmltvGuide',
      tag: 'Guides',
      summary: 'XMLTV program guide',
      description:
        "The channel's airings from a day ago to 14 days ahead as XMLTV (xmltv.dtd), for Kodi, Jellyfin, Plex (via xTeVe/Threadfin) and TiviMate. Start and stop carry the channel's UTC offset at that instant. Cancelled airings and scheduled broadcasts are not in it. Cache-Control: 5 minutes.",
      params: { uuid: uuidParamDoc },
      response: {
        description: 'An XMLTV document.',
        contentType: 'application/xml; charset=utf-8',
        ...textBody('XMLTV (xmltv.dtd).', XMLTV_EXAMPLE),
      },
    },
  }),
  route({
    method: 'GET',
    path: '/channels/:uuid/schedule.ics',
    api: 'channel',
    etag: true,
    microcache: true,
    microcacheSeconds: GUIDE_MICROCACHE_SECONDS,
    contentType: 'text/calendar; charset=utf-8',
    document: guideDocument,
    variables: (input) => ({ channel: uuidParam(input) }),
    headers: () => GUIDE_CACHE,
    toLegacy: ({ channel: c }, { publicBaseUrl, now }) =>
      buildICalendar(guideChannel(c), guideAirings(c), {
        host: new URL(publicBaseUrl).hostname,
        now,
        window: { from: new Date(now.getTime() - GUIDE_PAST_MS), to: new Date(now.getTime() + GUIDE_AHEAD_MS) },
        prodId: `-//${GENERATOR}//Channel guide//EN`,
      }),
    openapi: {
      operationId: 'getICalendarGuide',
      tag: 'Guides',
      summary: 'iCalendar program guide',
      description:
        "The same airings as the XMLTV guide as an iCalendar (RFC 5545) feed to subscribe to: one VEVENT per airing (UID `airing-<id>@<host>`), in the channel's zone (VTIMEZONE), cancelled airings with STATUS:CANCELLED.",
      params: { uuid: uuidParamDoc },
      response: {
        description: 'An iCalendar document.',
        contentType: 'text/calendar; charset=utf-8',
        ...textBody(
          'iCalendar (RFC 5545), CRLF line ends.',
          'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//sms-channel-gateway//Channel guide//EN\r\nEND:VCALENDAR\r\n',
        ),
      },
    },
  }),
  route({
    method: 'GET',
    path: '/channels.m3u',
    api: 'channel',
    etag: true,
    microcache: true,
    microcacheSeconds: GUIDE_MICROCACHE_SECONDS,
    contentType: 'audio/x-mpegurl; charset=utf-8',
    document: graphql(`query StreamChannels { streamChannels { ...GuideChannel } }`, [GUIDE_CHANNEL]),
    variables: () => ({}),
    headers: () => GUIDE_CACHE,
    toLegacy: ({ streamChannels }, { publicBaseUrl }) => buildM3u(streamChannels.map(guideChannel), { publicBaseUrl }),
    openapi: {
      operationId: 'getM3uPlaylist',
      tag: 'Guides',
      summary: 'M3U playlist of live channels',
      description:
        'Every channel with a live stream URL (`channel.stream_url` in the import format), by name, as an extended M3U playlist; `tvg-id` is the channel id of its XMLTV guide.',
      params: {},
      response: {
        description: 'An M3U playlist.',
        contentType: 'audio/x-mpegurl; charset=utf-8',
        ...textBody(
          'Extended M3U.',
          '#EXTM3U\n#EXTINF:-1 tvg-id="city-tv.example.com" tvg-name="City TV" group-title="Channels",City TV\nhttps://cdn.example.com/city/live.m3u8\n',
        ),
      },
    },
  }),
]
