import type { Db } from '../db/client.js'
import { AppError, notFound } from '../core/errors.js'
import { isStorableText } from '../messaging/input-rules.js'
import type { AiringRow, ChannelRow, ChannelSnapshot } from './types.js'
import { airingEnd } from './rules.js'
import { zonedToInstant } from './zoned-time.js'

const LISTED_PROGRAM = { in: ['active', 'paused'] }
export const channelSelect = {
  id: true,
  slug: true,
  name: true,
  timezone: true,
  showBannerUrl: true,
  streamUrl: true,
  fallbackName: true,
  fallbackDescription: true,
  fallbackHlsUrl: true,
  fallbackThumbnail: true,
} as const
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** By uuid, or (when `bySlug`) by slug too. */
export async function findChannel(db: Db, key: string, bySlug: boolean): Promise<ChannelRow> {
  // A key no database could hold (NUL, lone surrogate) names nothing; querying it would be an error.
  if (!isStorableText(key)) throw notFound('Channel')
  const channel = UUID.test(key)
    ? await db.channel.findUnique({ where: { id: key.toLowerCase() }, select: channelSelect })
    : bySlug
      ? await db.channel.findUnique({ where: { slug: key }, select: channelSelect })
      : null
  if (!channel) throw notFound('Channel')
  return channel
}

/** A listed (active or paused) program by id or slug. */
export async function findProgram(db: Db, key: string) {
  // Ids are 32-bit integers; a longer number or unstorable text names no program.
  const byId = /^\d+$/.test(key)
  if ((byId && Number(key) > 2_147_483_647) || !isStorableText(key)) throw notFound('Program')
  const program = await db.program.findFirst({
    where: { ...(byId ? { id: Number(key) } : { slug: key }), status: LISTED_PROGRAM },
    include: { channel: { select: channelSelect } },
  })
  if (!program) throw notFound('Program')
  return program
}

const airingInclude = { episode: { include: { program: true } } } as const

export async function loadSnapshot(db: Db, channel: ChannelRow, now: Date): Promise<ChannelSnapshot> {
  const day = 86_400_000
  const [programs, airings, broadcasts, liveBroadcasts, playlist] = await Promise.all([
    db.program.findMany({ where: { channelId: channel.id, status: 'active' }, include: { slots: true }, orderBy: { id: 'asc' } }),
    db.airing.findMany({
      where: {
        startsAt: { gte: new Date(now.getTime() - day), lte: new Date(now.getTime() + 8 * day) },
        episode: { program: { channelId: channel.id, status: LISTED_PROGRAM } },
      },
      include: airingInclude,
      orderBy: { startsAt: 'asc' },
    }),
    db.scheduledBroadcast.findMany({
      where: { channelId: channel.id, endsAt: { gt: new Date(now.getTime() - day) }, startsAt: { lt: new Date(now.getTime() + 8 * day) } },
      include: { video: true },
      orderBy: { startsAt: 'asc' },
    }),
    db.liveBroadcast.findMany({
      where: { channelId: channel.id, OR: [{ endedAt: null }, { endedAt: { gt: now } }] },
      orderBy: { startedAt: 'asc' },
    }),
    db.playlist.findFirst({
      where: { channelId: channel.id },
      include: {
        items: { include: { video: true }, orderBy: { position: 'asc' } },
        belts: { where: { endsAt: { gt: now } }, orderBy: { startsAt: 'asc' } },
      },
      orderBy: { id: 'asc' },
    }),
  ])
  return { channel, programs, airings, broadcasts, liveBroadcasts, playlist }
}

/**
 * Channel lookups and snapshots are shared for `ttlMs` by every request of this process: polling
 * clients then cost no database work, and an operator's change shows within the TTL (the answers
 * carry Cache-Control anyway). 0 turns sharing off.
 */
export function createChannelCache(ttlMs: number) {
  const snapshots = new Map<string, { at: number; minute: number; value: Promise<ChannelSnapshot> }>()
  const channels = new Map<string, { at: number; value: Promise<ChannelRow> }>()
  const fresh = (at: number) => ttlMs > 0 && Date.now() - at < ttlMs
  const bound = (map: Map<string, unknown>) => map.size > 10_000 && map.clear()
  return {
    channel(db: Db, key: string, bySlug: boolean): Promise<ChannelRow> {
      const k = `${bySlug ? 's' : 'u'}|${key}`
      const hit = channels.get(k)
      if (hit && fresh(hit.at)) return hit.value
      const value = findChannel(db, key, bySlug)
      bound(channels)
      channels.set(k, { at: Date.now(), value })
      value.catch(() => channels.delete(k))
      return value
    },
    snapshot(db: Db, channel: ChannelRow, now: Date): Promise<ChannelSnapshot> {
      // The snapshot's window moves with `now`: it is reloaded at least every minute of `now`.
      const minute = Math.floor(now.getTime() / 60_000)
      const hit = snapshots.get(channel.id)
      if (hit && fresh(hit.at) && hit.minute === minute) return hit.value
      const value = loadSnapshot(db, channel, now)
      bound(snapshots)
      snapshots.set(channel.id, { at: Date.now(), minute, value })
      value.catch(() => snapshots.delete(channel.id))
      return value
    },
  }
}

/** Airings overlapping [from, to], soonest first: one on air at `from` comes first. */
export async function upcomingAirings(db: Db, channelId: string, { from, to, limit }: { from: Date; to: Date | null; limit: number }) {
  const rows: AiringRow[] = await db.airing.findMany({
    where: {
      // Nothing airs longer than a day: earlier starts cannot reach `from`.
      startsAt: { gte: new Date(from.getTime() - 86_400_000), ...(to ? { lte: to } : {}) },
      episode: { status: { not: 'draft' }, program: { channelId, status: LISTED_PROGRAM } },
    },
    include: airingInclude,
    orderBy: [{ startsAt: 'asc' }, { id: 'asc' }],
    take: limit + 500,
  })
  return rows.filter((a) => airingEnd(a) > from).slice(0, limit)
}

export const GUIDE_PAST_MS = 86_400_000
export const GUIDE_AHEAD_MS = 14 * 86_400_000
/**
 * One airing every 11 minutes over the guide's 15 days, more than real channels book: the guide
 * stops there, so one guide costs a bounded query and a bounded document whatever the data.
 */
export const GUIDE_MAX_AIRINGS = 2000

/**
 * The program guide (XMLTV, iCalendar): airings that end after a day ago and start before 14 days
 * ahead, soonest first, cancelled ones included (the feeds decide what to do with them); draft
 * episodes and unlisted programs never appear, as in upcoming.
 */
export async function guideAirings(db: Db, channelId: string, now: Date): Promise<AiringRow[]> {
  const from = new Date(now.getTime() - GUIDE_PAST_MS)
  const rows: AiringRow[] = await db.airing.findMany({
    where: {
      startsAt: { gte: new Date(from.getTime() - 86_400_000), lt: new Date(now.getTime() + GUIDE_AHEAD_MS) },
      episode: { status: { not: 'draft' }, program: { channelId, status: LISTED_PROGRAM } },
    },
    include: airingInclude,
    orderBy: [{ startsAt: 'asc' }, { id: 'asc' }],
    take: GUIDE_MAX_AIRINGS,
  })
  return rows.filter((a) => airingEnd(a) > from)
}

/** Channels with a live stream URL (the M3U playlist), by name. */
export function streamChannels(db: Db): Promise<ChannelRow[]> {
  return db.channel.findMany({
    where: { streamUrl: { not: null } },
    select: channelSelect,
    orderBy: [{ name: 'asc' }, { id: 'asc' }],
    take: GUIDE_MAX_AIRINGS,
  })
}

export async function nextAiring(db: Db, channelId: string, now: Date) {
  return db.airing.findFirst({
    where: {
      startsAt: { gt: now },
      cancelled: false,
      episode: { status: { notIn: ['draft', 'cancelled'] }, program: { channelId, status: LISTED_PROGRAM } },
    },
    include: airingInclude,
    orderBy: [{ startsAt: 'asc' }, { id: 'asc' }],
  })
}

/** `from`/`to`: ISO 8601 with offset or Z, a date (midnight in the channel's zone), or Unix seconds. */
export function parseTimeParam(name: string, value: string, timeZone: string): Date {
  const text = value.trim()
  let at: Date | null = null
  if (/^\d{1,12}$/.test(text)) at = new Date(Number(text) * 1000)
  else if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    const [y, m, d] = text.split('-').map(Number) as [number, number, number]
    const check = new Date(Date.UTC(y, m - 1, d))
    // Date.UTC reads years 0-99 as 1900-1999: such a date is out of range, not that year.
    if (y < 1900) at = new Date(TIME_PARAM_MIN - 1)
    else if (check.getUTCMonth() === m - 1 && check.getUTCDate() === d) at = zonedToInstant(y, m, d, 0, 0, timeZone)
  } else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(text)) at = new Date(text)
  if (!at || Number.isNaN(at.getTime())) {
    throw new AppError('BAD_REQUEST', `${name} must be an ISO 8601 date-time with offset, a date YYYY-MM-DD or Unix seconds`)
  }
  // Both databases and the date formatting need a four-digit year, and the queries move `from` by days.
  if (at.getTime() < TIME_PARAM_MIN || at.getTime() > TIME_PARAM_MAX) {
    throw new AppError('BAD_REQUEST', `${name} must be between 1900-01-01 and 9999-12-01 (UTC)`)
  }
  return at
}

/** The instants `from`/`to` may name: a four-digit year with a month to spare at the end. */
export const TIME_PARAM_MIN = Date.UTC(1900, 0, 1)
export const TIME_PARAM_MAX = Date.UTC(9999, 11, 1)
