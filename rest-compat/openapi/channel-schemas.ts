// The channel API's objects, as the interface description names them.
import { array, boolean, integer, nullable, object, oneOf, ref, string, type JsonSchema } from './json-schema.js'

const withOffset = (description: string) => string(`${description} ISO 8601 with the channel's UTC offset.`, { format: 'date-time' })
const utc = (description: string) => string(`${description} ISO 8601 UTC with microseconds and a trailing Z.`, { format: 'date-time' })
const HH_MM = { pattern: '^\\d{2}:\\d{2}$' }
const EPISODE_TYPE = ['pre_recorded', 'live'] as const
const EPISODE_STATUS = ['draft', 'scheduled', 'on_air', 'completed', 'missed', 'cancelled'] as const

const pageMeta = object({
  total: integer(undefined, { minimum: 0 }),
  current_page: integer(undefined, { minimum: 1 }),
  last_page: integer(undefined, { minimum: 1 }),
  per_page: integer(undefined, { minimum: 1 }),
})

export const channelSchemas: Record<string, JsonSchema> = {
  NowPlaying: object({
    channel_name: string(),
    is_live: boolean('true while a live feed is on air.'),
    current_video: nullable(
      object(
        {
          id: integer('Video id; only for scheduled broadcasts.'),
          name: string(),
          description: string(),
          location: string(),
          thumbnail: nullable(string('Image URL.')),
          start_time: nullable(withOffset('null for a live broadcast.')),
          end_time: nullable(withOffset('null for a live broadcast.')),
          remaining_time: integer('Seconds left.'),
          remaining_time_human: string('MM:SS, HH:MM:SS, or Live.', { pattern: '^(Live|(\\d{2}:)?\\d{2}:\\d{2})$' }),
        },
        { optional: ['id'], description: 'What is playing; null if nothing.' },
      ),
    ),
    estimated_end_at: withOffset('When the answer is expected to change.'),
  }),
  ScheduledBroadcast: object({
    id: integer(),
    start_time: utc('Start.'),
    end_time: utc('End.'),
    status: oneOf(['pending', 'live', 'completed', 'cancelled']),
    video: object({ name: string(), description: string(), thumbnail: nullable(string()) }),
  }),
  Schedule: object({
    channel_name: string(),
    schedule_count: integer(undefined, { minimum: 0 }),
    schedule: array(ref('ScheduledBroadcast')),
  }),
  Catchup: object({
    id: integer(),
    title: string(),
    description: string(),
    start_time: utc('Air start.'),
    end_time: utc('Air end.'),
    duration: integer('Seconds.'),
    video: object({
      id: integer(),
      name: string(),
      thumbnail: nullable(string()),
      hls_url: nullable(string('HLS playback link.')),
      resolution: nullable(string()),
    }),
  }),
  Catchups: object({
    channel_name: string(),
    catchup_count: integer('Total catchups.', { minimum: 0 }),
    current_page: integer(undefined, { minimum: 1 }),
    last_page: integer(undefined, { minimum: 1 }),
    per_page: integer('15.', { minimum: 1 }),
    catchups: array(ref('Catchup'), 'Newest air time first.'),
  }),
  WeeklySlot: object({
    id: integer(),
    day_of_week: integer('0 = Sunday.', { minimum: 0, maximum: 6 }),
    day: string(),
    start_time: string('Local HH:MM in the channel timezone.', HH_MM),
    duration_minutes: integer(undefined, { minimum: 1 }),
  }),
  Program: object(
    {
      id: integer(),
      name: string(),
      slug: string(),
      synopsis: string(),
      banner_url: nullable(string()),
      trailer_url: nullable(string('HLS link.')),
      type: oneOf(['live', 'on_demand']),
      status: oneOf(['active', 'paused']),
      available_on_demand: boolean('Episodes are kept available after airing.'),
      episodes_count: integer('Only in the programs list.', { minimum: 0 }),
      schedule: array(ref('WeeklySlot')),
    },
    { optional: ['episodes_count'] },
  ),
  Programs: object({
    channel_name: string(),
    programs: array(ref('Program'), 'Active and paused programs, by name.'),
    meta: ref('ChannelPageMeta'),
  }),
  ChannelPageMeta: pageMeta,
  OnAir: object(
    {
      channel_name: string(),
      program: nullable(object({ id: integer(), name: string(), type: oneOf(['live', 'on_demand']), status: oneOf(['active', 'paused']) })),
      episode: nullable(
        object({ id: integer(), episode_number: integer(), name: string(), type: oneOf(EPISODE_TYPE), status: oneOf(EPISODE_STATUS) }),
      ),
      status: oneOf(['on_air', 'off_air']),
      started_at: nullable(withOffset('Slot start.')),
      ends_at: nullable(withOffset('Slot end.')),
      playback_source: nullable(oneOf(['livestream', 'pre_recorded', 'trailer', 'standby', 'fallback'])),
      banner_url: nullable(string('Present when on air.')),
    },
    { optional: ['banner_url'] },
  ),
  Airing: object({
    id: integer(),
    program: object({ id: integer(), name: string() }),
    episode: object({ id: integer(), episode_number: integer(), name: string() }),
    starts_at: withOffset('Start.'),
    ends_at: withOffset('End.'),
    start_time: string('Local HH:MM.', HH_MM),
    duration_minutes: integer(),
    episode_type: oneOf(EPISODE_TYPE),
    state: oneOf(
      ['upcoming', 'pre_show', 'on_air', 'ended', 'missed', 'cancelled'],
      'pre_show: starts within 15 minutes; missed: a live episode that never received a feed.',
    ),
    went_live_at: nullable(withOffset('When a live feed first arrived.')),
    banner_url: nullable(string("The episode's banner, else the program's, else the channel's show banner.")),
  }),
  NextAiring: object({ channel_name: string(), next: nullable(ref('Airing')) }),
  Upcoming: object({
    channel_name: string(),
    upcoming: array(ref('Airing'), 'Soonest first; an airing on air now is at the top.'),
    count: integer(undefined, { minimum: 0 }),
  }),
  Episode: object({
    id: integer(),
    episode_number: integer(),
    name: string(),
    synopsis: nullable(string()),
    banner_url: nullable(string()),
    trailer_url: nullable(string("The episode's own; no fallback to the program's.")),
    type: oneOf(EPISODE_TYPE),
    status: oneOf(EPISODE_STATUS),
    available_on_demand: boolean(),
    on_demand: nullable(
      object({ id: integer(), duration: nullable(integer('Seconds.')), hls_url: nullable(string()), thumbnail_url: nullable(string()) }),
    ),
    broadcasts: array(ref('Airing')),
  }),
  Episodes: object({
    program: object({ id: integer(), name: string() }),
    episodes: array(ref('Episode'), 'Highest episode number first.'),
    meta: ref('ChannelPageMeta'),
  }),
}
