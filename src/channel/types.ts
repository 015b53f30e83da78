// The shapes the channel rules work on: Prisma rows with the relations the rules read.
import type {
  Airing,
  Channel,
  Episode,
  LiveBroadcast,
  Playlist,
  PlaylistItem,
  Program,
  ScheduledBroadcast,
  TimeBelt,
  Video,
  WeeklySlot,
} from '../generated/sqlite/client.js'

export type ChannelRow = Pick<
  Channel,
  | 'id'
  | 'slug'
  | 'name'
  | 'timezone'
  | 'showBannerUrl'
  | 'streamUrl'
  | 'fallbackName'
  | 'fallbackDescription'
  | 'fallbackHlsUrl'
  | 'fallbackThumbnail'
>
export type ProgramRow = Program & { slots: WeeklySlot[] }
export type EpisodeRow = Episode & { program: Program }
export type AiringRow = Airing & { episode: EpisodeRow }
export type BroadcastRow = ScheduledBroadcast & { video: Video }
export type PlaylistRow = Playlist & { items: (PlaylistItem & { video: Video })[]; belts: TimeBelt[] }

/** Everything that decides what is on now and soon. */
export interface ChannelSnapshot {
  channel: ChannelRow
  /** Active programs with their weekly slots. */
  programs: ProgramRow[]
  /** Airings near now (a day back, eight days ahead) of active and paused programs. */
  airings: AiringRow[]
  broadcasts: BroadcastRow[]
  liveBroadcasts: LiveBroadcast[]
  playlist: PlaylistRow | null
}
