// Every rule of the channel API as a pure function of (data, now).
import type { Airing, Episode, Program } from '../generated/sqlite/client.js'
import type { AiringRow, ChannelRow, ChannelSnapshot, ProgramRow } from './types.js'
import { slotOccurrences, type Occurrence } from './zoned-time.js'

export const PRE_SHOW_MS = 15 * 60_000
export const LIVE_CACHE_SECONDS = 60

export type AiringState = 'upcoming' | 'pre_show' | 'on_air' | 'ended' | 'missed' | 'cancelled'
export type EpisodeStatus = 'draft' | 'scheduled' | 'on_air' | 'completed' | 'missed' | 'cancelled'
export type BroadcastStatus = 'pending' | 'live' | 'completed' | 'cancelled'
export type PlaybackSource = 'livestream' | 'pre_recorded' | 'trailer' | 'standby' | 'fallback'

export const airingEnd = (a: Pick<Airing, 'startsAt' | 'durationMinutes'>) => new Date(a.startsAt.getTime() + a.durationMinutes * 60_000)

/** A live feed is on air from when it arrived until it ended. */
export const feedOn = (a: Pick<Airing, 'wentLiveAt' | 'liveEndedAt'>, now: Date) =>
  !!a.wentLiveAt && a.wentLiveAt <= now && (!a.liveEndedAt || a.liveEndedAt > now)

export function airingState(a: Airing, episode: Pick<Episode, 'type' | 'status'>, now: Date): AiringState {
  if (a.cancelled || episode.status === 'cancelled') return 'cancelled'
  const start = a.startsAt.getTime()
  const t = now.getTime()
  if (t < start - PRE_SHOW_MS) return 'upcoming'
  if (t < start) return 'pre_show'
  if (t < airingEnd(a).getTime()) return 'on_air'
  // A live episode that never received a feed was missed.
  return episode.type === 'live' && !a.wentLiveAt ? 'missed' : 'ended'
}

/**
 * draft and cancelled are set by operators; otherwise the airings decide: on air while one is,
 * scheduled while one is to come, then missed when every live airing was missed, else completed.
 * An episode with no airings keeps its set status.
 */
export function episodeStatus(episode: Episode, airings: Airing[], now: Date): EpisodeStatus {
  if (episode.status === 'draft' || episode.status === 'cancelled') return episode.status
  const states = airings.map((a) => airingState(a, episode, now)).filter((s) => s !== 'cancelled')
  if (!states.length) return airings.length ? 'cancelled' : (episode.status as EpisodeStatus)
  if (states.includes('on_air')) return 'on_air'
  if (states.some((s) => s === 'upcoming' || s === 'pre_show')) return 'scheduled'
  return states.every((s) => s === 'missed') ? 'missed' : 'completed'
}

/** An episode's on-demand asset shows when the episode is offered, has an asset, and its availability time has come (null: at once). */
export const onDemandShown = (e: Pick<Episode, 'availableOnDemand' | 'onDemandHlsUrl' | 'onDemandAvailableAt'>, now: Date) =>
  e.availableOnDemand && !!e.onDemandHlsUrl && (e.onDemandAvailableAt === null || e.onDemandAvailableAt <= now)

export function broadcastStatus(b: { startsAt: Date; endsAt: Date; cancelled: boolean }, now: Date): BroadcastStatus {
  if (b.cancelled) return 'cancelled'
  if (now < b.startsAt) return 'pending'
  return now < b.endsAt ? 'live' : 'completed'
}

/** Episode banner, else the program's, else the channel's show banner. */
export const bannerOf = (episode: Pick<Episode, 'bannerUrl'> | null, program: Pick<Program, 'bannerUrl'>, channel: ChannelRow) =>
  episode?.bannerUrl ?? program.bannerUrl ?? channel.showBannerUrl ?? null

/** The weekly slot open at `now`: the earliest-starting one, ties by program id. */
export function openSlot(programs: ProgramRow[], timeZone: string, now: Date): { program: ProgramRow; occurrence: Occurrence } | null {
  let best: { program: ProgramRow; occurrence: Occurrence } | null = null
  const just = new Date(now.getTime() + 1)
  for (const program of programs) {
    if (program.status !== 'active') continue
    for (const slot of program.slots) {
      for (const occurrence of slotOccurrences(slot, timeZone, now, just)) {
        if (occurrence.start > now) continue
        if (
          !best ||
          occurrence.start < best.occurrence.start ||
          (+occurrence.start === +best.occurrence.start && program.id < best.program.id)
        ) {
          best = { program, occurrence }
        }
      }
    }
  }
  return best
}

/** The next time any active program's slot opens after `now` (within eight days). */
export function nextSlotStart(programs: ProgramRow[], timeZone: string, now: Date): Date | null {
  let next: Date | null = null
  const horizon = new Date(now.getTime() + 8 * 86_400_000)
  for (const program of programs) {
    if (program.status !== 'active') continue
    for (const slot of program.slots) {
      for (const o of slotOccurrences(slot, timeZone, now, horizon)) if (o.start > now && (!next || o.start < next)) next = o.start
    }
  }
  return next
}

export interface OnAir {
  status: 'on_air' | 'off_air'
  program: ProgramRow | null
  airing: AiringRow | null
  startedAt: Date | null
  endsAt: Date | null
  playbackSource: PlaybackSource | null
  bannerUrl: string | null
}

/** programs/current: the open slot, the episode airing in it, and what is played. */
export function onAirNow(s: ChannelSnapshot, now: Date): OnAir {
  const open = openSlot(s.programs, s.channel.timezone, now)
  if (!open) return { status: 'off_air', program: null, airing: null, startedAt: null, endsAt: null, playbackSource: null, bannerUrl: null }
  const airing =
    s.airings.find(
      (a) =>
        a.episode.programId === open.program.id &&
        !a.cancelled &&
        a.episode.status !== 'cancelled' &&
        a.episode.status !== 'draft' &&
        a.startsAt <= now &&
        now < airingEnd(a),
    ) ?? null
  return {
    status: 'on_air',
    program: open.program,
    airing,
    startedAt: open.occurrence.start,
    endsAt: open.occurrence.end,
    playbackSource: playbackSource(airing, now),
    bannerUrl: bannerOf(airing?.episode ?? null, open.program, s.channel),
  }
}

export function playbackSource(airing: AiringRow | null, now: Date): PlaybackSource {
  if (!airing) return 'fallback'
  if (airing.episode.type !== 'live') return 'pre_recorded'
  if (feedOn(airing, now)) return 'livestream'
  return (airing.episode.trailerUrl ?? airing.episode.program.trailerUrl) ? 'trailer' : 'standby'
}

export interface CurrentVideo {
  /** Video id: scheduled broadcasts only. */
  videoId?: number
  name: string
  description: string
  location: string
  thumbnail: string | null
  startTime: Date | null
  endTime: Date | null
  remainingTime: number
  remainingTimeHuman: string
}

export interface NowPlaying {
  channelName: string
  isLive: boolean
  currentVideo: CurrentVideo | null
  estimatedEndAt: Date
  /** Cache-Control max-age: until estimatedEndAt (at least 1 s); 60 for live or an unknown end. */
  cacheSeconds: number
}

export function humanRemaining(seconds: number): string {
  const s = Math.max(0, seconds)
  const hh = Math.floor(s / 3600)
  const mm = Math.floor((s % 3600) / 60)
  const ss = s % 60
  const p = (n: number) => String(n).padStart(2, '0')
  return hh > 0 ? `${p(hh)}:${p(mm)}:${p(ss)}` : `${p(mm)}:${p(ss)}`
}

function timed(
  now: Date,
  fields: Omit<CurrentVideo, 'remainingTime' | 'remainingTimeHuman' | 'startTime' | 'endTime'>,
  start: Date,
  end: Date,
): CurrentVideo {
  const remainingTime = Math.max(0, Math.ceil((end.getTime() - now.getTime()) / 1000))
  return { ...fields, startTime: start, endTime: end, remainingTime, remainingTimeHuman: humanRemaining(remainingTime) }
}

/**
 * Now playing: the first that applies of (a) a program episode in its slot, (b) a scheduled
 * broadcast, (c) a live broadcast, (d) the playlist (its time belt, the playing video, or the logo
 * sting between two). A live feed does not displace (a) or (b); `isLive` says it is on.
 */
export function nowPlaying(s: ChannelSnapshot, now: Date): NowPlaying {
  const tz = s.channel.timezone
  const live = s.liveBroadcasts.find((l) => l.startedAt <= now && (!l.endedAt || l.endedAt > now)) ?? null
  const onAir = onAirNow(s, now)
  const broadcast = s.broadcasts.find((b) => !b.cancelled && b.startsAt <= now && now < b.endsAt) ?? null

  let current: CurrentVideo | null = null
  let ends: Date | null = null
  if (onAir.status === 'on_air') {
    const episode = onAir.airing?.episode ?? null
    current = timed(
      now,
      {
        name: episode?.name ?? onAir.program!.name,
        description: episode?.synopsis ?? onAir.program!.synopsis,
        location: '',
        thumbnail: onAir.bannerUrl,
      },
      onAir.startedAt!,
      onAir.endsAt!,
    )
    ends = onAir.endsAt
  } else if (broadcast) {
    const v = broadcast.video
    current = timed(
      now,
      { videoId: v.id, name: v.name, description: v.description, location: '', thumbnail: v.thumbnail },
      broadcast.startsAt,
      broadcast.endsAt,
    )
    ends = broadcast.endsAt
  } else if (live) {
    current = {
      name: live.title,
      description: live.description,
      location: live.location,
      thumbnail: s.channel.showBannerUrl ?? null,
      startTime: null,
      endTime: null,
      remainingTime: 0,
      remainingTimeHuman: 'Live',
    }
  } else if (s.playlist) {
    const playing = playlistAt(s.playlist, s.channel, now)
    if (playing) {
      current = timed(now, playing.fields, playing.start, playing.end)
      ends = playing.end
    }
  }

  // The answer also changes when something of higher priority starts.
  const changes = [
    ends,
    nextSlotStart(s.programs, tz, now),
    ...s.broadcasts.filter((b) => !b.cancelled && b.startsAt > now).map((b) => b.startsAt),
    ...(s.playlist?.belts.filter((b) => b.startsAt > now).map((b) => b.startsAt) ?? []),
  ].filter((d): d is Date => d !== null)
  const isLive = !!live || onAir.playbackSource === 'livestream'
  const estimated = changes.length
    ? new Date(Math.min(...changes.map((d) => d.getTime())))
    : new Date(now.getTime() + LIVE_CACHE_SECONDS * 1000)
  return {
    channelName: s.channel.name,
    isLive,
    currentVideo: current,
    estimatedEndAt: estimated,
    cacheSeconds: cacheSecondsUntil(estimated, now, isLive || !changes.length),
  }
}

/**
 * Cache-Control max-age of now playing: until `estimatedEndAt` (at least 1 s) whenever that time is
 * known, also when nothing plays but something is booked; 60 s only while a live feed is on or when
 * nothing ends and nothing is coming (`unknown`).
 */
export function cacheSecondsUntil(estimatedEndAt: Date, now: Date, unknown: boolean): number {
  if (unknown) return LIVE_CACHE_SECONDS
  return Math.max(1, Math.ceil((estimatedEndAt.getTime() - now.getTime()) / 1000))
}

/** Where the playlist loop stands: a time belt, a video, or the logo sting after a video. */
export function playlistAt(p: NonNullable<ChannelSnapshot['playlist']>, channel: ChannelRow, now: Date) {
  const belt = p.belts.find((b) => b.startsAt <= now && now < b.endsAt)
  if (belt)
    return { fields: { name: p.name, description: p.description, location: '', thumbnail: null }, start: belt.startsAt, end: belt.endsAt }
  const items = [...p.items].sort((a, b) => a.position - b.position)
  const cycle = items.reduce((t, i) => t + i.video.durationSeconds + p.stingSeconds, 0) * 1000
  if (!cycle || now < p.startedAt) return null
  const cycleStart = now.getTime() - ((now.getTime() - p.startedAt.getTime()) % cycle)
  let t = cycleStart
  for (const item of items) {
    const videoEnd = t + item.video.durationSeconds * 1000
    if (now.getTime() < videoEnd) {
      const v = item.video
      return {
        fields: { name: v.name, description: v.description, location: '', thumbnail: v.thumbnail },
        start: new Date(t),
        end: new Date(videoEnd),
      }
    }
    const stingEnd = videoEnd + p.stingSeconds * 1000
    if (now.getTime() < stingEnd) {
      return {
        fields: { name: channel.name, description: 'Loading video...', location: '', thumbnail: null },
        start: new Date(videoEnd),
        end: new Date(stingEnd),
      }
    }
    t = stingEnd
  }
  return null
}
