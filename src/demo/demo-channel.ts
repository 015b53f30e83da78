import type { z } from 'zod'
import type { channelImportSchema } from '../channel/import-schema.js'

type ChannelImportInput = z.input<typeof channelImportSchema>

export const DEMO_CHANNEL_SLUG = 'demo-tv'
/** Nairobi keeps UTC+3 all year, so the generated local times need no DST arithmetic. */
const ZONE = 'Africa/Nairobi'
const OFFSET_MS = 3 * 3600_000
const HOUR = 3600_000
const CDN = 'https://cdn.example.com/demo-tv'

/** An instant as ISO 8601 in the channel's offset, as the import format asks. */
const local = (t: number) => new Date(t + OFFSET_MS).toISOString().replace(/\.\d{3}Z$/, '+03:00')

/**
 * A channel whose schedule is laid around `now`: two programs alternate hourly every day (a live
 * newsroom on even hours, a pre-recorded documentary on odd hours), with airings from yesterday to
 * the day after tomorrow, so that now playing, on air now, next, upcoming, episodes, the schedule
 * of scheduled broadcasts and catchups all show data the moment it is imported.
 */
export function demoChannel(now: Date): ChannelImportInput {
  const localMidnight = Math.floor((now.getTime() + OFFSET_MS) / (24 * HOUR)) * 24 * HOUR - OFFSET_MS
  const days = [-1, 0, 1, 2]
  const hours = (parity: 0 | 1) => Array.from({ length: 12 }, (_, i) => i * 2 + parity)
  const allDays = [0, 1, 2, 3, 4, 5, 6]
  const slots = (parity: 0 | 1) =>
    allDays.flatMap((day) =>
      hours(parity).map((h) => ({ day_of_week: day, start_time: `${String(h).padStart(2, '0')}:00`, duration_minutes: 60 })),
    )
  const feedFor = (start: number) => {
    const end = start + HOUR
    if (start > now.getTime()) return {}
    // A past or current airing of the live program received its feed 20 s after the start.
    return { went_live_at: local(start + 20_000), ...(end <= now.getTime() ? { live_ended_at: local(end) } : {}) }
  }

  return {
    channel: { slug: DEMO_CHANNEL_SLUG, name: 'Demo TV', timezone: ZONE, show_banner_url: `${CDN}/banner.jpg` },
    videos: [
      {
        ref: 'news',
        name: 'Evening Bulletin',
        description: 'The day in thirty minutes',
        thumbnail: `${CDN}/news.jpg`,
        hls_url: `${CDN}/news.m3u8`,
        resolution: '1080p',
        duration_seconds: 1800,
      },
      {
        ref: 'doc',
        name: 'Rift Valley',
        description: 'A documentary',
        thumbnail: `${CDN}/doc.jpg`,
        hls_url: `${CDN}/doc.m3u8`,
        resolution: '1080p',
        duration_seconds: 3600,
      },
      {
        ref: 'music',
        name: 'Nairobi Sounds',
        description: 'Music videos',
        thumbnail: `${CDN}/music.jpg`,
        hls_url: `${CDN}/music.m3u8`,
        resolution: '720p',
        duration_seconds: 240,
      },
      { ref: 'promo', name: 'Coming up on Demo TV', hls_url: `${CDN}/promo.m3u8`, resolution: '720p', duration_seconds: 60 },
    ],
    programs: [
      {
        slug: 'demo-newsroom',
        name: 'Newsroom Live',
        synopsis: 'Live from the studio, every even hour.',
        banner_url: `${CDN}/newsroom.jpg`,
        trailer_url: `${CDN}/newsroom-trailer.m3u8`,
        type: 'live',
        status: 'active',
        available_on_demand: false,
        slots: slots(0),
        episodes: days.map((d, i) => ({
          episode_number: i + 1,
          name: `Newsroom, day ${d >= 0 ? '+' : ''}${d}`,
          synopsis: 'Headlines, weather and guests.',
          type: 'live' as const,
          airings: hours(0).map((h) => {
            const start = localMidnight + d * 24 * HOUR + h * HOUR
            return { starts_at: local(start), duration_minutes: 60, ...feedFor(start) }
          }),
        })),
      },
      {
        slug: 'demo-stories',
        name: 'Harbour Stories',
        synopsis: 'Documentaries on the odd hours.',
        banner_url: `${CDN}/stories.jpg`,
        type: 'on_demand',
        status: 'active',
        available_on_demand: true,
        slots: slots(1),
        episodes: days.map((d, i) => ({
          episode_number: i + 1,
          name: `Story ${i + 1}`,
          synopsis: 'One place, one hour.',
          type: 'pre_recorded' as const,
          available_on_demand: true,
          on_demand: {
            id: 5000 + i,
            duration: 3540,
            hls_url: `${CDN}/stories-${i + 1}.m3u8`,
            thumbnail_url: `${CDN}/stories-${i + 1}.jpg`,
          },
          airings: hours(1).map((h) => ({ starts_at: local(localMidnight + d * 24 * HOUR + h * HOUR), duration_minutes: 60 })),
        })),
      },
      {
        slug: 'demo-late-talk',
        name: 'Late Talk',
        synopsis: 'Back next season.',
        type: 'live',
        status: 'paused',
        slots: [{ day_of_week: 5, start_time: '23:00', duration_minutes: 60 }],
      },
    ],
    scheduled_broadcasts: [1, 3, 5].map((h) => ({
      video: 'news',
      starts_at: local(now.getTime() + h * HOUR),
      ends_at: local(now.getTime() + h * HOUR + 30 * 60_000),
    })),
    live_broadcasts: [
      {
        title: 'City Marathon',
        description: 'Live from the finish line',
        location: 'Uhuru Park',
        started_at: local(localMidnight - 20 * HOUR),
        ended_at: local(localMidnight - 18 * HOUR),
      },
    ],
    playlist: {
      name: 'Demo TV Rotation',
      description: 'Music and trailers around the clock',
      started_at: local(localMidnight - 7 * 24 * HOUR),
      sting_seconds: 5,
      videos: ['music', 'promo'],
    },
    catchups: [1, 2, 3, 4].map((n) => ({
      video: n % 2 ? 'news' : 'doc',
      title: `Catch up ${n}`,
      description: n % 2 ? 'Evening Bulletin' : 'Rift Valley',
      starts_at: local(localMidnight - n * 6 * HOUR),
      ends_at: local(localMidnight - n * 6 * HOUR + (n % 2 ? 30 : 60) * 60_000),
    })),
  }
}
