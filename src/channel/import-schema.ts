import { z } from 'zod'
import { isTimeZone } from '../accounts/create-account.js'
import { isWebUrl } from './guide-types.js'

/**
 * The most one import document may hold, checked before anything is written: a channel at these
 * bounds loads in one short transaction (src/channel/import-channel.ts), and anything larger is a
 * 422 naming the bound. Channels that need more split their history over time, not over imports.
 */
export const IMPORT_LIMITS = {
  /** The document as JSON text, in bytes (UTF-8). */
  documentBytes: 1_048_576,
  programs: 100,
  /** Every half hour of the week. */
  slotsPerProgram: 336,
  /** Slots of all programs together. */
  slots: 2_000,
  /** Episodes of all programs together. */
  episodes: 1_000,
  /** Airings of all episodes together. */
  airings: 3_000,
  videos: 500,
  scheduledBroadcasts: 2_000,
  liveBroadcasts: 100,
  catchups: 2_000,
  playlistVideos: 1_000,
  timeBelts: 500,
} as const
const L = IMPORT_LIMITS
/**
 * 12,000 for 12000. Not `toLocaleString('en-US')`: called as this module loads, at start-up, it
 * made ICU map its number-formatting data, 4 to 7 MiB of resident memory for the life of a
 * process that formats nothing else (docs/operations.md, "Memory").
 */
const grouped = (n: number) => String(n).replace(/\B(?=(\d{3})+$)/g, ',')
const most = (n: number, what: string) => ({ message: `at most ${grouped(n)} ${what} are allowed` })

// Absolute times only: an offset or Z is required; years 1900 to 9999, which both databases store.
const instant = z.iso
  .datetime({ offset: true, message: 'must be an ISO 8601 date-time with an offset or Z' })
  .transform((s) => new Date(s))
  .refine((d) => d.getUTCFullYear() >= 1900 && d.getUTCFullYear() <= 9999, 'must be between the years 1900 and 9999')
// Players and browsers open these: http(s) only, never javascript:, data: or a line break.
const url = z.string().max(2000).refine(isWebUrl, 'must be an http or https URL without spaces or line breaks').meta({
  description: 'An absolute http or https URL, without spaces or line breaks.',
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s\\u0085]+$',
})
const text = (max: number) => z.string().max(max)

const onDemand = z.object({
  id: z.number().int().positive().optional(),
  duration: z.number().int().min(0).optional(),
  hls_url: url,
  thumbnail_url: url.nullable().optional(),
  /**
   * From when the asset is shown. Absent: the end of the episode's first non-cancelled airing, or
   * at once when it has none. null: at once.
   */
  available_at: instant.nullable().optional(),
})

const airing = z.object({
  starts_at: instant,
  duration_minutes: z.number().int().min(1).max(1440),
  cancelled: z.boolean().default(false),
  went_live_at: instant.nullable().optional(),
  live_ended_at: instant.nullable().optional(),
})

const episode = z.object({
  episode_number: z.number().int().min(0),
  name: text(200),
  synopsis: text(2000).nullable().optional(),
  banner_url: url.nullable().optional(),
  trailer_url: url.nullable().optional(),
  type: z.enum(['pre_recorded', 'live']),
  status: z.enum(['draft', 'scheduled', 'cancelled']).default('scheduled'),
  available_on_demand: z.boolean().default(false),
  on_demand: onDemand.nullable().optional(),
  airings: z.array(airing).max(L.airings, most(L.airings, 'airings')).default([]),
})

const slot = z.object({
  day_of_week: z.number().int().min(0).max(6),
  start_time: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be HH:MM'),
  duration_minutes: z.number().int().min(1).max(1440),
})

const program = z.object({
  slug: z
    .string()
    .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be lower-case words joined by -')
    .max(100),
  name: text(200),
  synopsis: text(2000).default(''),
  banner_url: url.nullable().optional(),
  trailer_url: url.nullable().optional(),
  type: z.enum(['live', 'on_demand']),
  status: z.enum(['draft', 'active', 'paused', 'archived']),
  available_on_demand: z.boolean().default(false),
  slots: z.array(slot).max(L.slotsPerProgram, most(L.slotsPerProgram, 'slots per program')).default([]),
  episodes: z.array(episode).max(L.episodes, most(L.episodes, 'episodes')).default([]),
})

const video = z.object({
  ref: z.string().min(1).max(100),
  name: text(200),
  description: text(2000).default(''),
  thumbnail: url.nullable().optional(),
  hls_url: url.nullable().optional(),
  resolution: z.string().max(20).nullable().optional(),
  duration_seconds: z.number().int().min(1),
})

export const channelImportSchema = z
  .object({
    channel: z.object({
      uuid: z.uuid().optional(),
      slug: z
        .string()
        .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be lower-case words joined by -')
        .max(100),
      name: text(200),
      timezone: z.string().refine(isTimeZone, 'must be an IANA time zone such as Africa/Nairobi'),
      show_banner_url: url.nullable().optional(),
      /** The live stream (HLS) players tune to; channels with one are listed in /api/channels.m3u. */
      stream_url: url.nullable().optional(),
      /** What plays when no episode airs in the open slot (playback_source fallback). */
      fallback: z
        .object({
          name: text(200),
          description: text(2000).default(''),
          hls_url: url.nullable().optional(),
          thumbnail: url.nullable().optional(),
        })
        .nullable()
        .optional(),
      operator_account: z.uuid().nullable().optional(),
    }),
    videos: z.array(video).max(L.videos, most(L.videos, 'videos')).default([]),
    programs: z
      .array(program)
      .max(L.programs, most(L.programs, 'programs'))
      .describe(
        `At most ${L.programs} programs, ${grouped(L.slots)} slots, ${grouped(L.episodes)} episodes and ${grouped(L.airings)} airings in the whole document.`,
      )
      .default([]),
    scheduled_broadcasts: z
      .array(z.object({ video: z.string(), starts_at: instant, ends_at: instant, cancelled: z.boolean().default(false) }))
      .max(L.scheduledBroadcasts, most(L.scheduledBroadcasts, 'scheduled broadcasts'))
      .default([]),
    live_broadcasts: z
      .array(
        z.object({
          title: text(200),
          description: text(2000).default(''),
          location: text(200).default(''),
          started_at: instant,
          ended_at: instant.nullable().optional(),
        }),
      )
      .max(L.liveBroadcasts, most(L.liveBroadcasts, 'live broadcasts'))
      .default([]),
    playlist: z
      .object({
        name: text(200),
        description: text(2000).default(''),
        started_at: instant,
        sting_seconds: z.number().int().min(0).default(0),
        videos: z.array(z.string()).min(1).max(L.playlistVideos, most(L.playlistVideos, 'playlist videos')),
        time_belts: z
          .array(z.object({ starts_at: instant, ends_at: instant }))
          .max(L.timeBelts, most(L.timeBelts, 'time belts'))
          .default([]),
      })
      .nullable()
      .optional(),
    catchups: z
      .array(z.object({ video: z.string(), title: text(200), description: text(2000).default(''), starts_at: instant, ends_at: instant }))
      .max(L.catchups, most(L.catchups, 'catchups'))
      .default([]),
  })
  .describe(`A channel import document: at most ${grouped(L.documentBytes)} bytes of JSON.`)
  .superRefine((doc, ctx) => {
    const episodes = doc.programs.reduce((n, p) => n + p.episodes.length, 0)
    const airings = doc.programs.reduce((n, p) => p.episodes.reduce((m, e) => m + e.airings.length, n), 0)
    const slots = doc.programs.reduce((n, p) => n + p.slots.length, 0)
    if (slots > L.slots)
      ctx.addIssue({ code: 'custom', path: ['programs'], message: `the document has ${slots} slots; ${most(L.slots, 'slots').message}` })
    if (episodes > L.episodes)
      ctx.addIssue({
        code: 'custom',
        path: ['programs'],
        message: `the document has ${episodes} episodes; ${most(L.episodes, 'episodes').message}`,
      })
    if (airings > L.airings)
      ctx.addIssue({
        code: 'custom',
        path: ['programs'],
        message: `the document has ${airings} airings; ${most(L.airings, 'airings').message}`,
      })
    const refs = new Set(doc.videos.map((v) => v.ref))
    const check = (ref: string, path: (string | number)[]) => {
      if (!refs.has(ref)) ctx.addIssue({ code: 'custom', path, message: `no video with ref ${ref}` })
    }
    doc.scheduled_broadcasts.forEach((b, i) => check(b.video, ['scheduled_broadcasts', i, 'video']))
    doc.catchups.forEach((c, i) => check(c.video, ['catchups', i, 'video']))
    doc.playlist?.videos.forEach((v, i) => check(v, ['playlist', 'videos', i]))
    const slugs = new Set<string>()
    doc.programs.forEach((p, i) => {
      if (slugs.has(p.slug)) ctx.addIssue({ code: 'custom', path: ['programs', i, 'slug'], message: `duplicate program slug ${p.slug}` })
      slugs.add(p.slug)
      const numbers = new Set<number>()
      p.episodes.forEach((e, j) => {
        if (numbers.has(e.episode_number))
          ctx.addIssue({ code: 'custom', path: ['programs', i, 'episodes', j, 'episode_number'], message: 'duplicate episode number' })
        numbers.add(e.episode_number)
      })
    })
    for (const [name, list] of [
      ['scheduled_broadcasts', doc.scheduled_broadcasts],
      ['catchups', doc.catchups],
    ] as const) {
      list.forEach((x, i) => {
        if (x.ends_at <= x.starts_at) ctx.addIssue({ code: 'custom', path: [name, i, 'ends_at'], message: 'must be after starts_at' })
      })
    }
  })

export type ChannelImport = z.infer<typeof channelImportSchema>
