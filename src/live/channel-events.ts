import type { Deps } from '../deps.js'
import { publishQuietly, TOPIC, type ChannelChangedEvent } from './topics.js'

/** After an operator's change to a channel: every instance recomputes its now playing schedule. */
export async function publishChannelChanged(deps: Pick<Deps, 'events' | 'logger'>, channelId: string): Promise<void> {
  const event: ChannelChangedEvent = { channelId }
  await publishQuietly(deps, TOPIC.channelChanged, event)
}

/** The same, for a change to one airing (its channel is looked up). */
export async function publishAiringChanged(deps: Pick<Deps, 'db' | 'events' | 'logger'>, airingId: number): Promise<void> {
  const airing = await deps.db.airing.findUnique({
    where: { id: airingId },
    select: { episode: { select: { program: { select: { channelId: true } } } } },
  })
  if (airing) await publishChannelChanged(deps, airing.episode.program.channelId)
}
