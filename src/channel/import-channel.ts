import type { Deps } from '../deps.js'
import { planRowChecksOnce } from '../db/row-checks.js'
import { AppError, MAX_ERROR_DETAILS, isUniqueViolation, validationError, type ErrorDetail } from '../core/errors.js'
import { textProblem } from '../messaging/input-rules.js'
import { IMPORT_LIMITS, channelImportSchema, type ChannelImport } from './import-schema.js'

/** Parses and checks an import document (JSON text or a parsed object); 422 with every problem. */
export function parseChannelImport(input: unknown): ChannelImport {
  let value = input
  if (typeof input === 'string') {
    // Bounded before it is parsed: the size is the first of the import's bounds (IMPORT_LIMITS).
    const bytes = Buffer.byteLength(input)
    if (bytes > IMPORT_LIMITS.documentBytes) {
      throw validationError([
        { field: '(document)', message: `the document is ${bytes} bytes; at most ${IMPORT_LIMITS.documentBytes} bytes are allowed` },
      ])
    }
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
export async function importChannel(deps: Pick<Deps, 'db' | 'dbKind'>, input: unknown, operatorAccountId?: string) {
  const doc = parseChannelImport(input)
  try {
    return await writeChannel(deps, doc, operatorAccountId)
  } catch (error) {
    // A concurrent import took the channel or a program slug after the checks.
    if (isUniqueViolation(error))
      throw new AppError('CONFLICT', 'A channel or program slug of the document is already used by another channel')
    throw error
  }
}

/** Rows or ids per statement: far under both databases' parameter limits, whatever the bounds. */
const CHUNK = 500
const chunksOf = <T>(list: T[]): T[][] =>
  Array.from({ length: Math.ceil(list.length / CHUNK) }, (_, i) => list.slice(i * CHUNK, (i + 1) * CHUNK))
const sameFields = (row: Record<string, unknown>, fields: Record<string, unknown>) =>
  Object.entries(fields).every(([k, v]) => {
    const have = row[k]
    return have instanceof Date && v instanceof Date ? have.getTime() === v.getTime() : have === v
  })

/**
 * One transaction whose statement count grows with the chunks of new rows, not with the rows:
 * new programs, episodes, videos and airings are inserted 500 a statement, rows the file leaves
 * as they are cost nothing, and only changed programs, episodes and videos are updated one by one
 * (their counts are bounded by IMPORT_LIMITS). A changed airing is deleted and inserted again
 * with its id, since nothing refers to airings. Deletions go by id lists, 500 a statement.
 */
async function writeChannel({ db, dbKind }: Pick<Deps, 'db' | 'dbKind'>, doc: ChannelImport, operatorAccountId?: string) {
  const c = doc.channel
  return db.$transaction(
    async (tx) => {
      // Thousands of episodes and airings, each checked against its program or episode: planned once.
      await planRowChecksOnce(tx, dbKind)
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
      const deleteIds = async (ids: number[], remove: (ids: number[]) => Promise<unknown>) => {
        for (const part of chunksOf(ids)) await remove(part)
      }

      // Videos, by ref.
      const oldVideos = new Map((await tx.video.findMany({ where: { channelId: channel.id } })).map((v) => [v.ref, v]))
      const newVideos = []
      for (const v of doc.videos) {
        const fields = {
          name: v.name,
          description: v.description,
          thumbnail: v.thumbnail ?? null,
          hlsUrl: v.hls_url ?? null,
          resolution: v.resolution ?? null,
          durationSeconds: v.duration_seconds,
        }
        const old = oldVideos.get(v.ref)
        if (!old) newVideos.push({ channelId: channel.id, ref: v.ref, ...fields })
        else if (!sameFields(old, fields)) await tx.video.update({ where: { id: old.id }, data: fields })
      }
      for (const part of chunksOf(newVideos)) await tx.video.createMany({ data: part })
      const videoIds = new Map(
        newVideos.length
          ? (await tx.video.findMany({ where: { channelId: channel.id }, select: { id: true, ref: true } })).map((v) => [v.ref, v.id])
          : [...oldVideos].map(([ref, v]) => [ref, v.id]),
      )

      // Programs, by slug (unique across channels).
      const slugs = doc.programs.map((p) => p.slug)
      const taken = slugs.length
        ? await tx.program.findFirst({ where: { slug: { in: slugs }, channelId: { not: channel.id } }, select: { slug: true } })
        : null
      if (taken) throw new AppError('CONFLICT', `program slug ${taken.slug} belongs to another channel`)
      const oldPrograms = await tx.program.findMany({ where: { channelId: channel.id } })
      const programBySlug = new Map(oldPrograms.map((p) => [p.slug, p]))
      const newPrograms = []
      for (const p of doc.programs) {
        const fields = {
          name: p.name,
          synopsis: p.synopsis,
          bannerUrl: p.banner_url ?? null,
          trailerUrl: p.trailer_url ?? null,
          type: p.type,
          status: p.status,
          availableOnDemand: p.available_on_demand,
        }
        const old = programBySlug.get(p.slug)
        if (!old) newPrograms.push({ channelId: channel.id, slug: p.slug, ...fields })
        else if (!sameFields(old, fields)) await tx.program.update({ where: { id: old.id }, data: fields })
      }
      if (newPrograms.length) await tx.program.createMany({ data: newPrograms })
      const programIds = new Map(
        (newPrograms.length
          ? await tx.program.findMany({ where: { channelId: channel.id }, select: { id: true, slug: true } })
          : oldPrograms
        ).map((p) => [p.slug, p.id]),
      )
      const keptPrograms = new Set(slugs.map((slug) => programIds.get(slug)!))
      await deleteIds(
        oldPrograms.filter((p) => !keptPrograms.has(p.id)).map((p) => p.id),
        (ids) => tx.program.deleteMany({ where: { id: { in: ids } } }),
      )
      const docProgramIds = [...keptPrograms]
      await deleteIds(docProgramIds, (ids) => tx.weeklySlot.deleteMany({ where: { programId: { in: ids } } }))
      const slots = doc.programs.flatMap((p) =>
        p.slots.map((s) => ({
          programId: programIds.get(p.slug)!,
          dayOfWeek: s.day_of_week,
          startTime: s.start_time,
          durationMinutes: s.duration_minutes,
        })),
      )
      for (const part of chunksOf(slots)) await tx.weeklySlot.createMany({ data: part })

      // Episodes, by program and number.
      const episodeKey = (programId: number, n: number) => `${programId}|${n}`
      const oldEpisodes = []
      for (const ids of chunksOf(docProgramIds)) oldEpisodes.push(...(await tx.episode.findMany({ where: { programId: { in: ids } } })))
      const episodeByKey = new Map(oldEpisodes.map((e) => [episodeKey(e.programId, e.episodeNumber), e]))
      const newEpisodes = []
      for (const p of doc.programs) {
        const programId = programIds.get(p.slug)!
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
          const old = episodeByKey.get(episodeKey(programId, e.episode_number))
          if (!old) newEpisodes.push({ programId, episodeNumber: e.episode_number, ...fields })
          else if (!sameFields(old, fields)) await tx.episode.update({ where: { id: old.id }, data: fields })
        }
      }
      for (const part of chunksOf(newEpisodes)) await tx.episode.createMany({ data: part })
      const episodeIds = new Map<string, number>(oldEpisodes.map((e) => [episodeKey(e.programId, e.episodeNumber), e.id]))
      if (newEpisodes.length) {
        for (const ids of chunksOf(docProgramIds)) {
          for (const e of await tx.episode.findMany({
            where: { programId: { in: ids } },
            select: { id: true, programId: true, episodeNumber: true },
          })) {
            episodeIds.set(episodeKey(e.programId, e.episodeNumber), e.id)
          }
        }
      }
      const keptEpisodes = new Set(
        doc.programs.flatMap((p) => p.episodes.map((e) => episodeIds.get(episodeKey(programIds.get(p.slug)!, e.episode_number))!)),
      )
      await deleteIds(
        oldEpisodes.filter((e) => !keptEpisodes.has(e.id)).map((e) => e.id),
        (ids) => tx.episode.deleteMany({ where: { id: { in: ids } } }),
      )

      // Airings, by episode and start: an unchanged one stays, a changed one is written again with its id.
      const oldAirings = new Map<
        string,
        { id: number; durationMinutes: number; cancelled: boolean; wentLiveAt: Date | null; liveEndedAt: Date | null }[]
      >()
      const oldAiringIds: number[] = []
      for (const ids of chunksOf([...keptEpisodes])) {
        for (const a of await tx.airing.findMany({ where: { episodeId: { in: ids } }, orderBy: { id: 'asc' } })) {
          const key = `${a.episodeId}|${a.startsAt.getTime()}`
          oldAirings.set(key, [...(oldAirings.get(key) ?? []), a])
          oldAiringIds.push(a.id)
        }
      }
      const keptAirings = new Set<number>()
      const rewritten: number[] = []
      const airingRows: {
        id?: number
        episodeId: number
        startsAt: Date
        durationMinutes: number
        cancelled: boolean
        wentLiveAt: Date | null
        liveEndedAt: Date | null
      }[] = []
      for (const p of doc.programs) {
        for (const e of p.episodes) {
          const episodeId = episodeIds.get(episodeKey(programIds.get(p.slug)!, e.episode_number))!
          for (const a of e.airings) {
            const fields = {
              durationMinutes: a.duration_minutes,
              cancelled: a.cancelled,
              wentLiveAt: a.went_live_at ?? null,
              liveEndedAt: a.live_ended_at ?? null,
            }
            const match = oldAirings.get(`${episodeId}|${a.starts_at.getTime()}`)?.shift()
            if (match) keptAirings.add(match.id)
            if (match && sameFields(match, fields)) continue
            if (match) rewritten.push(match.id)
            airingRows.push({ ...(match ? { id: match.id } : {}), episodeId, startsAt: a.starts_at, ...fields })
          }
        }
      }
      await deleteIds([...oldAiringIds.filter((id) => !keptAirings.has(id)), ...rewritten], (ids) =>
        tx.airing.deleteMany({ where: { id: { in: ids } } }),
      )
      for (const part of chunksOf(airingRows)) await tx.airing.createMany({ data: part })

      await tx.scheduledBroadcast.deleteMany({ where: { channelId: channel.id } })
      for (const part of chunksOf(doc.scheduled_broadcasts)) {
        await tx.scheduledBroadcast.createMany({
          data: part.map((b) => ({
            channelId: channel.id,
            videoId: videoIds.get(b.video)!,
            startsAt: b.starts_at,
            endsAt: b.ends_at,
            cancelled: b.cancelled,
          })),
        })
      }
      await tx.liveBroadcast.deleteMany({ where: { channelId: channel.id } })
      if (doc.live_broadcasts.length) {
        await tx.liveBroadcast.createMany({
          data: doc.live_broadcasts.map((l) => ({
            channelId: channel.id,
            title: l.title,
            description: l.description,
            location: l.location,
            startedAt: l.started_at,
            endedAt: l.ended_at ?? null,
          })),
        })
      }
      await tx.playlist.deleteMany({ where: { channelId: channel.id } })
      if (doc.playlist) {
        const pl = doc.playlist
        const playlist = await tx.playlist.create({
          data: {
            channelId: channel.id,
            name: pl.name,
            description: pl.description,
            startedAt: pl.started_at,
            stingSeconds: pl.sting_seconds,
          },
        })
        for (const part of chunksOf(
          pl.videos.map((ref, position) => ({ playlistId: playlist.id, position, videoId: videoIds.get(ref)! })),
        )) {
          await tx.playlistItem.createMany({ data: part })
        }
        for (const part of chunksOf(pl.time_belts.map((b) => ({ playlistId: playlist.id, startsAt: b.starts_at, endsAt: b.ends_at })))) {
          await tx.timeBelt.createMany({ data: part })
        }
      }
      await tx.catchup.deleteMany({ where: { channelId: channel.id } })
      for (const part of chunksOf(doc.catchups)) {
        await tx.catchup.createMany({
          data: part.map((k) => ({
            channelId: channel.id,
            videoId: videoIds.get(k.video)!,
            title: k.title,
            description: k.description,
            startsAt: k.starts_at,
            endsAt: k.ends_at,
          })),
        })
      }
      const refs = new Set(doc.videos.map((v) => v.ref))
      await deleteIds(
        [...oldVideos.values()].filter((v) => !refs.has(v.ref)).map((v) => v.id),
        (ids) => tx.video.deleteMany({ where: { id: { in: ids } } }),
      )
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
