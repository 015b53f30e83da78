// Table-driven tests of the channel rules: pure functions of (data, now).
import { describe, expect, it } from 'vitest'
import {
  airingState,
  broadcastStatus,
  cacheSecondsUntil,
  episodeStatus,
  humanRemaining,
  nowPlaying,
  onAirNow,
} from '../src/channel/rules.js'
import type { AiringRow, ChannelSnapshot, ProgramRow } from '../src/channel/types.js'

const at = (iso: string) => new Date(iso)
const NO_FALLBACK = { fallbackName: null, fallbackDescription: null, fallbackHlsUrl: null, fallbackThumbnail: null }
let ids = 1

function program(over: Partial<ProgramRow> = {}): ProgramRow {
  return {
    id: ids++,
    channelId: 'c',
    slug: `p${ids}`,
    name: 'Program',
    synopsis: 'Program synopsis',
    bannerUrl: null,
    trailerUrl: null,
    type: 'live',
    status: 'active',
    availableOnDemand: false,
    slots: [],
    ...over,
  }
}

function airing(
  p: ProgramRow,
  startsAt: string,
  over: {
    minutes?: number
    type?: string
    status?: string
    cancelled?: boolean
    wentLiveAt?: string
    liveEndedAt?: string
    name?: string
    synopsis?: string | null
    bannerUrl?: string | null
    trailerUrl?: string | null
  } = {},
): AiringRow {
  const episode = {
    id: ids++,
    programId: p.id,
    episodeNumber: ids,
    name: over.name ?? 'Episode',
    synopsis: over.synopsis === undefined ? 'Episode synopsis' : over.synopsis,
    bannerUrl: over.bannerUrl ?? null,
    trailerUrl: over.trailerUrl ?? null,
    type: over.type ?? 'pre_recorded',
    status: over.status ?? 'scheduled',
    availableOnDemand: false,
    onDemandId: null,
    onDemandDuration: null,
    onDemandHlsUrl: null,
    onDemandThumbnailUrl: null,
    onDemandAvailableAt: null,
    program: p,
  }
  return {
    id: ids++,
    episodeId: episode.id,
    startsAt: at(startsAt),
    durationMinutes: over.minutes ?? 60,
    cancelled: over.cancelled ?? false,
    wentLiveAt: over.wentLiveAt ? at(over.wentLiveAt) : null,
    liveEndedAt: over.liveEndedAt ? at(over.liveEndedAt) : null,
    episode,
  }
}

function snapshot(over: Partial<ChannelSnapshot> = {}, timezone = 'America/New_York'): ChannelSnapshot {
  return {
    channel: { id: 'c', slug: 'c', name: 'Channel One', timezone, showBannerUrl: 'https://cdn/show.jpg', streamUrl: null, ...NO_FALLBACK },
    programs: [],
    airings: [],
    broadcasts: [],
    liveBroadcasts: [],
    playlist: null,
    ...over,
  }
}

const video = (id: number, name: string, seconds: number) => ({
  id,
  channelId: 'c',
  ref: name,
  name,
  description: `${name} description`,
  thumbnail: `https://cdn/${name}.jpg`,
  hlsUrl: null,
  resolution: null,
  durationSeconds: seconds,
})

describe('airing state', () => {
  const p = program()
  const live = airing(p, '2026-03-03T12:00:00Z', { type: 'live' })
  const fed = airing(p, '2026-03-03T12:00:00Z', { type: 'live', wentLiveAt: '2026-03-03T12:02:00Z' })
  const recorded = airing(p, '2026-03-03T12:00:00Z')
  const cancelled = airing(p, '2026-03-03T12:00:00Z', { cancelled: true })
  const episodeCancelled = airing(p, '2026-03-03T12:00:00Z', { status: 'cancelled' })
  it.each([
    [recorded, '2026-03-03T11:44:59Z', 'upcoming'],
    [recorded, '2026-03-03T11:45:00Z', 'pre_show'],
    [recorded, '2026-03-03T11:59:59Z', 'pre_show'],
    [recorded, '2026-03-03T12:00:00Z', 'on_air'],
    [recorded, '2026-03-03T12:59:59Z', 'on_air'],
    [recorded, '2026-03-03T13:00:00Z', 'ended'],
    [live, '2026-03-03T12:30:00Z', 'on_air'],
    [live, '2026-03-03T13:00:00Z', 'missed'],
    [fed, '2026-03-03T13:00:00Z', 'ended'],
    [cancelled, '2026-03-03T11:00:00Z', 'cancelled'],
    [episodeCancelled, '2026-03-03T12:30:00Z', 'cancelled'],
  ] as const)('%#: at %s -> %s', (a, now, expected) => {
    expect(airingState(a, a.episode, at(now))).toBe(expected)
  })
})

describe('episode status', () => {
  const p = program()
  const mk = (status: string, type: string, airings: { start: string; fed?: boolean; cancelled?: boolean }[]) => {
    const rows = airings.map((x) => airing(p, x.start, { type, status, wentLiveAt: x.fed ? x.start : undefined, cancelled: x.cancelled }))
    return { episode: rows[0]?.episode ?? airing(p, '2026-01-01T00:00:00Z', { type, status }).episode, rows }
  }
  it.each([
    ['draft stays draft', mk('draft', 'live', [{ start: '2026-03-03T12:00:00Z' }]), 'draft'],
    ['cancelled stays cancelled', mk('cancelled', 'live', [{ start: '2026-03-03T12:00:00Z' }]), 'cancelled'],
    ['no airings keeps its status', mk('scheduled', 'live', []), 'scheduled'],
    ['to come', mk('scheduled', 'live', [{ start: '2026-03-04T12:00:00Z' }]), 'scheduled'],
    ['on air', mk('scheduled', 'pre_recorded', [{ start: '2026-03-03T11:30:00Z' }]), 'on_air'],
    ['aired', mk('scheduled', 'pre_recorded', [{ start: '2026-03-02T12:00:00Z' }]), 'completed'],
    ['live with a feed', mk('scheduled', 'live', [{ start: '2026-03-02T12:00:00Z', fed: true }]), 'completed'],
    ['live never fed', mk('scheduled', 'live', [{ start: '2026-03-02T12:00:00Z' }]), 'missed'],
    ['every airing cancelled', mk('scheduled', 'live', [{ start: '2026-03-04T12:00:00Z', cancelled: true }]), 'cancelled'],
  ] as const)('%s', (_name, { episode, rows }, expected) => {
    expect(episodeStatus(episode, rows, at('2026-03-03T12:00:00Z'))).toBe(expected)
  })
})

describe('scheduled broadcast status', () => {
  const b = { startsAt: at('2026-03-03T12:00:00Z'), endsAt: at('2026-03-03T13:00:00Z'), cancelled: false }
  it.each([
    ['2026-03-03T11:59:59Z', 'pending'],
    ['2026-03-03T12:00:00Z', 'live'],
    ['2026-03-03T13:00:00Z', 'completed'],
  ])('at %s -> %s', (now, expected) => expect(broadcastStatus(b, at(now))).toBe(expected))
  it('cancelled wins', () => expect(broadcastStatus({ ...b, cancelled: true }, at('2026-03-03T12:30:00Z'))).toBe('cancelled'))
})

describe('remaining time', () => {
  it.each([
    [0, '00:00'],
    [59, '00:59'],
    [3599, '59:59'],
    [3600, '01:00:00'],
    [7325, '02:02:05'],
  ])('%i s -> %s', (s, text) => expect(humanRemaining(s)).toBe(text))
})

// Tuesday 3 March 2026, New York (UTC-5): a weekday slot 07:00-09:00 local = 12:00-14:00Z.
const weekday = { dayOfWeek: 2, startTime: '07:00', durationMinutes: 120 }

describe('programs/current: playback source and banners', () => {
  const NOW = at('2026-03-03T12:30:00Z')
  it.each([
    ['pre-recorded episode', { type: 'pre_recorded' }, {}, 'pre_recorded'],
    ['live episode with its feed', { type: 'live', wentLiveAt: '2026-03-03T12:01:00Z' }, {}, 'livestream'],
    [
      'live episode after its feed ended',
      { type: 'live', wentLiveAt: '2026-03-03T12:01:00Z', liveEndedAt: '2026-03-03T12:20:00Z' },
      { trailerUrl: 'https://cdn/t.m3u8' },
      'trailer',
    ],
    ['live episode waiting, program trailer', { type: 'live' }, { trailerUrl: 'https://cdn/t.m3u8' }, 'trailer'],
    ['live episode waiting, episode trailer', { type: 'live', trailerUrl: 'https://cdn/e.m3u8' }, {}, 'trailer'],
    ['live episode waiting, no trailer', { type: 'live' }, {}, 'standby'],
  ] as const)('%s -> %s', (_n, ep, prog, expected) => {
    const p = program({ slots: [{ id: 1, programId: 0, ...weekday }], ...prog })
    const s = snapshot({ programs: [p], airings: [airing(p, '2026-03-03T12:00:00Z', { minutes: 120, ...ep })] })
    const o = onAirNow(s, NOW)
    expect(o.status).toBe('on_air')
    expect(o.playbackSource).toBe(expected)
  })

  it('falls back to the usual content when no episode airs in the open slot', () => {
    const p = program({ slots: [{ id: 1, programId: 0, ...weekday }] })
    expect(onAirNow(snapshot({ programs: [p] }), NOW)).toMatchObject({ status: 'on_air', playbackSource: 'fallback', airing: null })
  })

  it('is off air outside every slot, and for paused programs', () => {
    const p = program({ slots: [{ id: 1, programId: 0, ...weekday }] })
    expect(onAirNow(snapshot({ programs: [p] }), at('2026-03-03T14:00:00Z'))).toEqual({
      status: 'off_air',
      program: null,
      airing: null,
      startedAt: null,
      endsAt: null,
      playbackSource: null,
      bannerUrl: null,
    })
    const paused = program({ status: 'paused', slots: [{ id: 1, programId: 0, ...weekday }] })
    expect(onAirNow(snapshot({ programs: [paused] }), NOW).status).toBe('off_air')
  })

  it.each([
    ['episode banner first', 'https://cdn/ep.jpg', 'https://cdn/prog.jpg', 'https://cdn/ep.jpg'],
    ['then the program banner', null, 'https://cdn/prog.jpg', 'https://cdn/prog.jpg'],
    ['then the channel show banner', null, null, 'https://cdn/show.jpg'],
  ])('%s', (_n, episodeBanner, programBanner, expected) => {
    const p = program({ bannerUrl: programBanner, slots: [{ id: 1, programId: 0, ...weekday }] })
    const s = snapshot({ programs: [p], airings: [airing(p, '2026-03-03T12:00:00Z', { minutes: 120, bannerUrl: episodeBanner })] })
    expect(onAirNow(s, NOW).bannerUrl).toBe(expected)
  })
})

describe('weekly slots across DST and midnight', () => {
  it.each([
    // Sunday 8 March 2026, New York springs forward at 02:00: a 02:30 slot opens at 03:30 EDT (07:30Z).
    ['America/New_York', { dayOfWeek: 0, startTime: '02:30', durationMinutes: 60 }, '2026-03-08T07:29:00Z', 'off_air'],
    ['America/New_York', { dayOfWeek: 0, startTime: '02:30', durationMinutes: 60 }, '2026-03-08T07:30:00Z', 'on_air'],
    // The week before, the same slot is 02:30 EST (07:30Z) too; the week after, 02:30 EDT (06:30Z).
    ['America/New_York', { dayOfWeek: 0, startTime: '02:30', durationMinutes: 60 }, '2026-03-15T06:30:00Z', 'on_air'],
    // Sunday 1 November 2026, New York falls back: 01:30 is the first one (EDT, 05:30Z).
    ['America/New_York', { dayOfWeek: 0, startTime: '01:30', durationMinutes: 30 }, '2026-11-01T05:30:00Z', 'on_air'],
    ['America/New_York', { dayOfWeek: 0, startTime: '01:30', durationMinutes: 30 }, '2026-11-01T06:30:00Z', 'off_air'],
    // Berlin: spring forward 29 March 2026 (02:00 -> 03:00), fall back 25 October 2026.
    ['Europe/Berlin', { dayOfWeek: 0, startTime: '09:00', durationMinutes: 60 }, '2026-03-22T08:00:00Z', 'on_air'],
    ['Europe/Berlin', { dayOfWeek: 0, startTime: '09:00', durationMinutes: 60 }, '2026-03-29T07:00:00Z', 'on_air'],
    ['Europe/Berlin', { dayOfWeek: 0, startTime: '09:00', durationMinutes: 60 }, '2026-03-29T08:00:00Z', 'off_air'],
    ['Europe/Berlin', { dayOfWeek: 0, startTime: '02:30', durationMinutes: 60 }, '2026-10-25T00:30:00Z', 'on_air'],
    ['Europe/Berlin', { dayOfWeek: 0, startTime: '02:30', durationMinutes: 60 }, '2026-10-25T01:30:00Z', 'off_air'],
    ['Europe/Berlin', { dayOfWeek: 0, startTime: '09:00', durationMinutes: 60 }, '2026-10-25T08:00:00Z', 'on_air'],
    // Saturday 23:30 for 150 minutes runs into Sunday.
    ['America/New_York', { dayOfWeek: 6, startTime: '23:30', durationMinutes: 150 }, '2026-06-07T05:30:00Z', 'on_air'],
    ['America/New_York', { dayOfWeek: 6, startTime: '23:30', durationMinutes: 150 }, '2026-06-07T06:00:00Z', 'off_air'],
  ] as const)('%s %j at %s -> %s', (zone, slot, now, expected) => {
    const p = program({ slots: [{ id: 1, programId: 0, ...slot }] })
    expect(onAirNow(snapshot({ programs: [p] }, zone), at(now)).status).toBe(expected)
  })
})

describe('now playing', () => {
  const NOW = at('2026-03-03T12:30:00Z')
  const slotProgram = () =>
    program({
      name: 'Morning',
      synopsis: 'Morning synopsis',
      bannerUrl: 'https://cdn/morning.jpg',
      slots: [{ id: 1, programId: 0, ...weekday }],
    })
  const broadcast = {
    id: 7,
    channelId: 'c',
    videoId: 3,
    startsAt: at('2026-03-03T12:00:00Z'),
    endsAt: at('2026-03-03T13:00:00Z'),
    cancelled: false,
    video: video(3, 'Doc', 3600),
  }
  const live = {
    id: 1,
    channelId: 'c',
    title: 'Marathon',
    description: 'Finish line',
    location: 'Park',
    startedAt: at('2026-03-03T12:10:00Z'),
    endedAt: null,
  }
  const playlist = {
    id: 1,
    channelId: 'c',
    name: 'Rotation',
    description: 'Round the clock',
    startedAt: at('2026-03-03T00:00:00Z'),
    stingSeconds: 10,
    items: [
      { id: 1, playlistId: 1, position: 0, videoId: 1, video: video(1, 'Music', 240) },
      { id: 2, playlistId: 1, position: 1, videoId: 2, video: video(2, 'Promo', 60) },
    ],
    belts: [{ id: 1, playlistId: 1, startsAt: at('2026-03-03T20:00:00Z'), endsAt: at('2026-03-03T21:00:00Z') }],
  }

  it('(a) a program episode in its slot: episode name and synopsis, banner, the slot times', () => {
    const p = slotProgram()
    const n = nowPlaying(
      snapshot({ programs: [p], airings: [airing(p, '2026-03-03T12:00:00Z', { minutes: 120, name: 'Tuesday' })], broadcasts: [broadcast] }),
      NOW,
    )
    expect(n).toEqual({
      channelName: 'Channel One',
      isLive: false,
      currentVideo: {
        name: 'Tuesday',
        description: 'Episode synopsis',
        location: '',
        thumbnail: 'https://cdn/morning.jpg',
        startTime: at('2026-03-03T12:00:00Z'),
        endTime: at('2026-03-03T14:00:00Z'),
        remainingTime: 5400,
        remainingTimeHuman: '01:30:00',
      },
      estimatedEndAt: at('2026-03-03T14:00:00Z'),
      cacheSeconds: 5400,
    })
  })

  it("(a) without an episode: the program's name and synopsis", () => {
    const n = nowPlaying(snapshot({ programs: [slotProgram()] }), NOW)
    expect(n.currentVideo).toMatchObject({ name: 'Morning', description: 'Morning synopsis' })
  })

  it('(b) a scheduled broadcast: the video and the broadcast times, with the video id', () => {
    const n = nowPlaying(snapshot({ broadcasts: [broadcast], playlist }), NOW)
    expect(n.currentVideo).toEqual({
      videoId: 3,
      name: 'Doc',
      description: 'Doc description',
      location: '',
      thumbnail: 'https://cdn/Doc.jpg',
      startTime: at('2026-03-03T12:00:00Z'),
      endTime: at('2026-03-03T13:00:00Z'),
      remainingTime: 1800,
      remainingTimeHuman: '30:00',
    })
    expect(n.cacheSeconds).toBe(1800)
  })

  it('(c) a live broadcast: title, description, location, show banner, no times, "Live", 60 s cache', () => {
    const n = nowPlaying(snapshot({ liveBroadcasts: [live], playlist }), NOW)
    expect(n).toMatchObject({
      isLive: true,
      currentVideo: {
        name: 'Marathon',
        description: 'Finish line',
        location: 'Park',
        thumbnail: 'https://cdn/show.jpg',
        startTime: null,
        endTime: null,
        remainingTime: 0,
        remainingTimeHuman: 'Live',
      },
      cacheSeconds: 60,
    })
  })

  it('rule 2: a live feed does not displace (a) or (b); is_live says it is on', () => {
    const withSlot = nowPlaying(snapshot({ programs: [slotProgram()], liveBroadcasts: [live] }), NOW)
    expect(withSlot).toMatchObject({ isLive: true, currentVideo: { name: 'Morning' }, cacheSeconds: 60 })
    const withBroadcast = nowPlaying(snapshot({ broadcasts: [broadcast], liveBroadcasts: [live] }), NOW)
    expect(withBroadcast).toMatchObject({ isLive: true, currentVideo: { videoId: 3 } })
  })

  it('(d) the playlist: the playing video, the logo sting, the time belt', () => {
    // Cycle: Music 240 s, sting 10 s, Promo 60 s, sting 10 s = 320 s, from 00:00Z.
    const video1 = nowPlaying(snapshot({ playlist }), at('2026-03-03T00:01:00Z'))
    expect(video1.currentVideo).toMatchObject({
      name: 'Music',
      startTime: at('2026-03-03T00:00:00Z'),
      endTime: at('2026-03-03T00:04:00Z'),
      remainingTime: 180,
    })
    const sting = nowPlaying(snapshot({ playlist }), at('2026-03-03T00:04:05Z'))
    expect(sting.currentVideo).toMatchObject({
      name: 'Channel One',
      description: 'Loading video...',
      startTime: at('2026-03-03T00:04:00Z'),
      endTime: at('2026-03-03T00:04:10Z'),
    })
    const video2 = nowPlaying(snapshot({ playlist }), at('2026-03-03T00:04:20Z'))
    expect(video2.currentVideo).toMatchObject({ name: 'Promo', remainingTime: 50 })
    const nextCycle = nowPlaying(snapshot({ playlist }), at('2026-03-03T00:06:00Z'))
    expect(nextCycle.currentVideo).toMatchObject({ name: 'Music', startTime: at('2026-03-03T00:05:20Z') })
    const belt = nowPlaying(snapshot({ playlist }), at('2026-03-03T20:30:00Z'))
    expect(belt.currentVideo).toMatchObject({
      name: 'Rotation',
      description: 'Round the clock',
      startTime: at('2026-03-03T20:00:00Z'),
      endTime: at('2026-03-03T21:00:00Z'),
    })
  })

  it('expects a change when something of higher priority starts, and says nothing plays when nothing does', () => {
    const later = { ...broadcast, startsAt: at('2026-03-03T00:02:00Z'), endsAt: at('2026-03-03T00:30:00Z') }
    const n = nowPlaying(snapshot({ playlist, broadcasts: [later] }), at('2026-03-03T00:01:00Z'))
    expect(n.estimatedEndAt).toEqual(at('2026-03-03T00:02:00Z'))
    expect(n.cacheSeconds).toBe(60)
    const nothing = nowPlaying(snapshot(), NOW)
    expect(nothing).toEqual({
      channelName: 'Channel One',
      isLive: false,
      currentVideo: null,
      estimatedEndAt: at('2026-03-03T12:31:00Z'),
      cacheSeconds: 60,
    })
    const ending = nowPlaying(snapshot({ broadcasts: [broadcast] }), at('2026-03-03T12:59:59.500Z'))
    expect(ending.cacheSeconds).toBe(1)
  })

  it('caches until estimated_end_at when nothing plays but something is booked; 60 s only for live or nothing coming', () => {
    // Nothing plays at 12:51:38; a broadcast starts at 13:00: 502 s, not 60.
    const booked = { ...broadcast, startsAt: at('2026-03-03T13:00:00Z'), endsAt: at('2026-03-03T14:00:00Z') }
    const idle = nowPlaying(snapshot({ broadcasts: [booked] }), at('2026-03-03T12:51:38Z'))
    expect(idle).toMatchObject({ currentVideo: null, estimatedEndAt: at('2026-03-03T13:00:00Z'), cacheSeconds: 502 })
    // A weekly slot opening later is a known end as well (Tuesday 07:00 New York = 12:00Z).
    const slotLater = nowPlaying(snapshot({ programs: [slotProgram()] }), at('2026-03-03T11:00:00Z'))
    expect(slotLater).toMatchObject({ currentVideo: null, estimatedEndAt: at('2026-03-03T12:00:00Z'), cacheSeconds: 3600 })
    // The same idle channel with a live broadcast on: 60.
    const liveIdle = nowPlaying(snapshot({ broadcasts: [booked], liveBroadcasts: [live] }), at('2026-03-03T12:51:38Z'))
    expect(liveIdle.cacheSeconds).toBe(60)
    // Fractions round up and never reach 0.
    expect(nowPlaying(snapshot({ broadcasts: [booked] }), at('2026-03-03T12:59:59.900Z')).cacheSeconds).toBe(1)
    expect(cacheSecondsUntil(at('2026-03-03T13:00:00Z'), at('2026-03-03T12:51:38Z'), false)).toBe(502)
    expect(cacheSecondsUntil(at('2026-03-03T13:00:00Z'), at('2026-03-03T12:51:38Z'), true)).toBe(60)
  })
})
