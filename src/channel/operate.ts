import type { Deps } from '../deps.js'
import { AppError, notFound, validationError } from '../core/errors.js'
import { InputRules, isStorableText } from '../messaging/input-rules.js'

/** The channel, if the account operates it; another's answers like a missing one. */
export async function operatedChannel({ db }: Pick<Deps, 'db'>, accountId: string, key: string) {
  // A key no database could hold (NUL) names nothing; asking PostgreSQL would be an error.
  if (!isStorableText(key)) throw notFound('Channel')
  const channel = await db.channel.findFirst({ where: { OR: [{ id: key }, { slug: key }], operatorAccountId: accountId } })
  if (!channel) throw notFound('Channel')
  return channel
}

async function operatedAiring({ db }: Pick<Deps, 'db'>, accountId: string, airingId: number) {
  const airing = await db.airing.findFirst({
    where: { id: airingId, episode: { program: { channel: { operatorAccountId: accountId } } } },
    include: { episode: true },
  })
  if (!airing) throw notFound('Airing')
  return airing
}

export async function startLiveBroadcast(
  deps: Pick<Deps, 'db' | 'clock'>,
  accountId: string,
  channelKey: string,
  input: { title: string; description?: string | null; location?: string | null },
) {
  const channel = await operatedChannel(deps, accountId, channelKey)
  const rules = new InputRules()
  const title = rules.required('title', input.title, 200)
  const description = rules.optional('description', input.description, 2000)
  const location = rules.optional('location', input.location, 200)
  rules.check()
  const running = await deps.db.liveBroadcast.findFirst({ where: { channelId: channel.id, endedAt: null } })
  if (running) throw new AppError('CONFLICT', 'A live broadcast is already on air on this channel')
  return deps.db.liveBroadcast.create({
    data: { channelId: channel.id, title: title!, description: description ?? '', location: location ?? '', startedAt: deps.clock.now() },
  })
}

export async function endLiveBroadcast(deps: Pick<Deps, 'db' | 'clock'>, accountId: string, id: number) {
  const live = await deps.db.liveBroadcast.findFirst({ where: { id, channel: { operatorAccountId: accountId } } })
  if (!live) throw notFound('Live broadcast')
  if (live.endedAt) throw new AppError('CONFLICT', 'The live broadcast has already ended')
  return deps.db.liveBroadcast.update({ where: { id }, data: { endedAt: deps.clock.now() } })
}

/** A live episode's feed arrived: `went_live_at` is its first arrival. */
export async function startEpisodeFeed(deps: Pick<Deps, 'db' | 'clock'>, accountId: string, airingId: number) {
  const airing = await operatedAiring(deps, accountId, airingId)
  if (airing.episode.type !== 'live') throw validationError([{ field: 'airingId', message: 'only live episodes take a live feed' }])
  if (airing.cancelled) throw new AppError('CONFLICT', 'The airing is cancelled')
  return deps.db.airing.update({ where: { id: airingId }, data: { wentLiveAt: airing.wentLiveAt ?? deps.clock.now(), liveEndedAt: null } })
}

export async function endEpisodeFeed(deps: Pick<Deps, 'db' | 'clock'>, accountId: string, airingId: number) {
  const airing = await operatedAiring(deps, accountId, airingId)
  if (!airing.wentLiveAt) throw new AppError('CONFLICT', 'The airing has no live feed')
  return deps.db.airing.update({ where: { id: airingId }, data: { liveEndedAt: deps.clock.now() } })
}

export async function cancelAiring(deps: Pick<Deps, 'db'>, accountId: string, airingId: number) {
  await operatedAiring(deps, accountId, airingId)
  return deps.db.airing.update({ where: { id: airingId }, data: { cancelled: true } })
}
