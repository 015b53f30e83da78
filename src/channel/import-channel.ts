import type { Deps } from '../deps.js'
import { AppError, MAX_ERROR_DETAILS, isUniqueViolation, validationError, type ErrorDetail } from '../errors.js'
import { textProblem } from '../messaging/input-rules.js'
import { channelImportSchema, type ChannelImport } from './import-schema.js'

/** Parses and checks an import document (JSON text or a parsed object); 422 with every problem. */
export function parseChannelImport(input: unknown): ChannelImport {
  let value = input
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input)
    } catch {
      throw new AppError('BAD_REQUEST', 'The import document is not valid JSON')
    }
  }
  const unstorable = unstorableStrings(value)
  if (unstorable.length) throw validationError(unstorable)
  const result = channelImportSchema.safeParse(value)
  if (!result.success) {
    throw validationError(result.error.issues.map((i) => ({ field: i.path.join('.') || '(document)', message: i.message })))
  }
  return result.data
}

/**
 * Loads a whole channel in one transaction. Re-importing updates it: the channel is matched by
 * uuid, else slug; programs by slug, episodes by number, airings by start, videos by ref keep
 * their ids. Scheduled and live broadcasts, the playlist and catchups are replaced by the file's.
 * `operatorAccountId`, when given, must operate an existing channel: another's uuid answers 404, as
 * if missing. A slug is a public name: one used by a channel the import does not update (another
 * operator's, or another of one's own) is a 409 CONFLICT and nothing is written.
 */
export async function importChannel(deps: Pick<Deps, 'db'>, input: unknown, operatorAccountId?: string) {
  const doc = parseChannelImport(input)
  try {
    return await writeChannel(deps, doc, operatorAccountId)
  } catch (error) {
    // A concurrent import took the channel or a program slug after the checks.
    if (isUniqueViolation(error)) throw new AppError('CONFLICT', 'A channel or program slug of the document is already used by another channel')
    throw error
  }
}

async function writeChannel({ db }: Pick<Deps, 'db'>, doc: ChannelImport, operatorAccountId?: string) {
  const c = doc.channel
  return db.$transaction(
    async (tx) => {
      const bySlug = await tx.channel.findUnique({ where: { slug: c.slug } })
      const existing = c.uuid ? await tx.channel.findFirst({ where: { id: c.uuid } }) : bySlug
      if (existing && operatorAccountId && existing.operatorAccountId !== operatorAccountId) {
        if (c.uuid) throw new AppError('NOT_FOUND', 'Channel not found')
        throw slugTaken(c.slug)
      }
      if (bySlug && bySlug.id !== existing?.id) throw slugTaken(c.slug)
      const data = {
        slug: c.slug,
        name: c.name,
        timezone: c.timezone,
        showBannerUrl: c.show_banner_url ?? null,
        streamUrl: c.stream_url ?? null,
        fallbackName: c.fallback?.name ?? null,
        fallbackDescription: c.fallback?.description ?? null,
        fallbackHlsUrl: c.fallback?.hls_url ?? null,
        fallbackThumbnail: c.fallback?.thumbnail ?? null,
        operatorAccountId: operatorAccountId ?? c.operator_account ?? existing?.operatorAccountId ?? null,
      }
      const channel = existing
        ? await tx.channel.update({ where: { id: existing.id }, data })
        : await tx.channel.create({ data: { ...data, ...(c.uuid ? { id: c.uuid } : {}) } })

      const videoIds = new Map<string, number>()
      for (const v of doc.videos) {
        const fields = {
          name: v.name,
          description: v.description,
          thumbnail: v.thumbnail ?? null,
          hlsUrl: v.hls_url ?? null,
          resolution: v.resolution ?? null,
          durationSeconds: v.duration_seconds,
        }
        const row = await tx.video.upsert({
          where: { channelId_ref: { channelId: channel.id, ref: v.ref } },
          create: { channelId: channel.id, ref: v.ref, ...fields },
          update: fields,
        })
        videoIds.set(v.ref, row.id)
      }

      const keepPrograms: number[] = []
      for (const p of doc.programs) {
        const taken = await tx.program.findUnique({ where: { slug: p.slug }, select: { channelId: true } })
        if (taken && taken.channelId !== channel.id) {
          throw new AppError('CONFLICT', `program slug ${p.slug} belongs to another channel`)
        }
        const fields = {
          name: p.name,
          synopsis: p.synopsis,
          bannerUrl: p.banner_url ?? null,
          trailerUrl: p.trailer_url ?? null,
          type: p.type,
          status: p.status,
          availableOnDemand: p.available_on_demand,
        }
        const program = await tx.program.upsert({ where: { slug: p.slug }, create: { channelId: channel.id, slug: p.slug, ...fields }, update: fields })
        keepPrograms.push(program.id)
        await tx.weeklySlot.deleteMany({ where: { programId: program.id } })
        if (p.slots.length) {
          await tx.weeklySlot.createMany({
            data: p.slots.map((s) => ({ programId: program.id, dayOfWeek: s.day_of_week, startTime: s.start_time, durationMinutes: s.duration_minutes })),
          })
        }
        const keepEpisodes: number[] = []
        for (const e of p.episodes) {
          const fields = {
            name: e.name,
            synopsis: e.synopsis ?? null,
            bannerUrl: e.banner_url ?? null,
            trailerUrl: e.trailer_url ?? null,
            type: e.type,
            status: e.status,
            availableOnDemand: e.available_on_demand,
            onDemandId: e.on_demand?.id ?? null,
            onDemandDuration: e.on_demand?.duration ?? null,
            onDemandHlsUrl: e.on_demand?.hls_url ?? null,
            onDemandThumbnailUrl: e.on_demand?.thumbnail_url ?? null,
            onDemandAvailableAt: onDemandAvailableAt(e),
          }
          const episode = await tx.episode.upsert({
            where: { programId_episodeNumber: { programId: program.id, episodeNumber: e.episode_number } },
            create: { programId: program.id, episodeNumber: e.episode_number, ...fields },
            update: fields,
          })
          keepEpisodes.push(episode.id)
          const current = await tx.airing.findMany({ where: { episodeId: episode.id } })
          const keepAirings: number[] = []
          for (const a of e.airings) {
            const fields = {
              durationMinutes: a.duration_minutes,
              cancelled: a.cancelled,
              wentLiveAt: a.went_live_at ?? null,
              liveEndedAt: a.live_ended_at ?? null,
            }
            const match = current.find((x) => x.startsAt.getTime() === a.starts_at.getTime() && !keepAirings.includes(x.id))
            const row = match
              ? await tx.airing.update({ where: { id: match.id }, data: fields })
              : await tx.airing.create({ data: { episodeId: episode.id, startsAt: a.starts_at, ...fields } })
            keepAirings.push(row.id)
          }
          await tx.airing.deleteMany({ where: { episodeId: episode.id, id: { notIn: keepAirings } } })
        }
        await tx.episode.deleteMany({ where: { programId: program.id, id: { notIn: keepEpisodes } } })
      }
      await tx.program.deleteMany({ where: { channelId: channel.id, id: { notIn: keepPrograms } } })

      await tx.scheduledBroadcast.deleteMany({ where: { channelId: channel.id } })
      if (doc.scheduled_broadcasts.length) {
        await tx.scheduledBroadcast.createMany({
          data: doc.scheduled_broadcasts.map((b) => ({ channelId: channel.id, videoId: videoIds.get(b.video)!, startsAt: b.starts_at, endsAt: b.ends_at, cancelled: b.cancelled })),
        })
      }
      await tx.liveBroadcast.deleteMany({ where: { channelId: channel.id } })
      if (doc.live_broadcasts.length) {
        await tx.liveBroadcast.createMany({
          data: doc.live_broadcasts.map((l) => ({ channelId: channel.id, title: l.title, description: l.description, location: l.location, startedAt: l.started_at, endedAt: l.ended_at ?? null })),
        })
      }
      await tx.playlist.deleteMany({ where: { channelId: channel.id } })
      if (doc.playlist) {
        const pl = doc.playlist
        await tx.playlist.create({
          data: {
            channelId: channel.id,
            name: pl.name,
            description: pl.description,
            startedAt: pl.started_at,
            stingSeconds: pl.sting_seconds,
            items: { create: pl.videos.map((ref, position) => ({ position, videoId: videoIds.get(ref)! })) },
            belts: { create: pl.time_belts.map((b) => ({ startsAt: b.starts_at, endsAt: b.ends_at })) },
          },
        })
      }
      await tx.catchup.deleteMany({ where: { channelId: channel.id } })
      if (doc.catchups.length) {
        await tx.catchup.createMany({
          data: doc.catchups.map((k) => ({ channelId: channel.id, videoId: videoIds.get(k.video)!, title: k.title, description: k.description, startsAt: k.starts_at, endsAt: k.ends_at })),
        })
      }
      await tx.video.deleteMany({ where: { channelId: channel.id, ref: { notIn: doc.videos.map((v) => v.ref) } } })
      return channel
    },
    { timeout: 120_000, maxWait: 30_000 },
  )
}

/**
 * When an episode's on-demand asset shows: the file's `on_demand.available_at` when it says (null:
 * at once); else the end of its first non-cancelled airing, so a recording does not show before
 * the episode has aired; else (no airing) at once. Fixed at import: cancelling an airing later
 * does not move it.
 */
export function onDemandAvailableAt(e: ChannelImport['programs'][number]['episodes'][number]): Date | null {
  if (!e.on_demand) return null
  if (e.on_demand.available_at !== undefined) return e.on_demand.available_at
  const first = e.airings.filter((a) => !a.cancelled).sort((a, b) => a.starts_at.getTime() - b.starts_at.getTime())[0]
  return first ? new Date(first.starts_at.getTime() + first.duration_minutes * 60_000) : null
}

const slugTaken = (slug: string) => new AppError('CONFLICT', `channel slug ${slug} is already used by another channel`)

/** Far deeper than any import document; deeper nesting is refused before anything recurses over it. */
const MAX_DEPTH = 32

/** Every string of the document that no database can store as given (NUL, lone surrogates), by its path. */
function unstorableStrings(value: unknown, path = '', found: ErrorDetail[] = [], depth = 0): ErrorDetail[] {
  if (found.length > MAX_ERROR_DETAILS) return found
  const field = path || '(document)'
  if (typeof value === 'string') {
    const problem = textProblem(value)
    if (problem) found.push({ field, message: `${field} ${problem}` })
  } else if (typeof value === 'object' && value !== null) {
    if (depth >= MAX_DEPTH) {
      found.push({ field, message: `${field} is nested more than ${MAX_DEPTH} levels deep` })
      return found
    }
    for (const [key, item] of Object.entries(value)) unstorableStrings(item, path ? `${path}.${key}` : key, found, depth + 1)
  }
  return found
}
