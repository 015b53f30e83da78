import type { Deps } from '../deps.js'
import type { ChannelRow } from '../channel/types.js'
import { findChannel, loadSnapshot } from '../channel/queries.js'
import { humanRemaining, nowPlaying, type NowPlaying } from '../channel/rules.js'
import { RESYNC } from '../events/event-bus.js'
import { TOPIC, type ChannelChangedEvent } from './topics.js'

type Listener = (answer: NowPlaying) => void

interface Entry {
  channelId: string
  listeners: Set<Listener>
  timer?: NodeJS.Timeout
  current?: NowPlaying
  /** The answer without its countdown fields: a change of this is a change of the answer. */
  shape?: string
  running: boolean
  again: boolean
}

/** setTimeout's longest delay (about 24.8 days); later ends are rescheduled from there. */
const MAX_DELAY_MS = 2 ** 31 - 1
/** After the computed end, so the new answer is the next one (and not the last instant of the old). */
const BOUNDARY_MARGIN_MS = 20
const RETRY_MS = 5000

const hubs = new WeakMap<Deps['events'], ReturnType<typeof createHub>>()

/**
 * One schedule per channel and instance, shared by all its `nowPlaying` subscribers: the answer is
 * computed once, pushed to every subscriber, and computed again by a timer at its estimatedEndAt
 * or when a `channel.changed` event (from any instance) names the channel. No per-subscriber polling.
 */
export function nowPlayingHub(deps: Pick<Deps, 'db' | 'clock' | 'logger' | 'events'>) {
  let hub = hubs.get(deps.events)
  if (!hub) {
    hub = createHub(deps)
    hubs.set(deps.events, hub)
  }
  return hub
}

function createHub(deps: Pick<Deps, 'db' | 'clock' | 'logger' | 'events'>) {
  const entries = new Map<string, Entry>()
  let listening = false

  function listen() {
    if (listening) return
    listening = true
    deps.events.subscribe(TOPIC.channelChanged, (payload) => {
      const entry = entries.get((payload as ChannelChangedEvent).channelId)
      if (entry) void recompute(entry)
    })
    // Events from other instances may have been missed: recompute everything watched.
    deps.events.subscribe(RESYNC, () => {
      for (const entry of entries.values()) void recompute(entry)
    })
  }

  async function recompute(entry: Entry): Promise<void> {
    if (entry.running) {
      entry.again = true
      return
    }
    entry.running = true
    try {
      do {
        entry.again = false
        clearTimeout(entry.timer)
        try {
          // Straight from the database, not deps.channelCache: a change event must show at once.
          const channel: ChannelRow = await findChannel(deps.db, entry.channelId, false)
          const now = deps.clock.now()
          const answer = nowPlaying(await loadSnapshot(deps.db, channel, now), now)
          if (!entries.has(entry.channelId)) return
          const shape = shapeOf(answer)
          entry.current = answer
          if (shape !== entry.shape) {
            entry.shape = shape
            for (const listener of entry.listeners) {
              // One listener's failure must not keep the answer from the others.
              try {
                listener(answer)
              } catch (error) {
                deps.logger.warn({ err: error, channelId: entry.channelId }, 'now playing listener failed')
              }
            }
          }
          schedule(entry, Math.max(0, answer.estimatedEndAt.getTime() - Date.now()) + BOUNDARY_MARGIN_MS)
        } catch (error) {
          deps.logger.warn({ err: error, channelId: entry.channelId }, 'now playing not computed; retrying')
          schedule(entry, RETRY_MS)
        }
      } while (entry.again)
    } finally {
      entry.running = false
    }
  }

  function schedule(entry: Entry, delay: number) {
    clearTimeout(entry.timer)
    entry.timer = setTimeout(() => void recompute(entry), Math.min(delay, MAX_DELAY_MS))
    entry.timer.unref()
  }

  return {
    /**
     * Calls `listener` with the current answer at once, then on every change; returns the
     * unsubscribe function. The channel's schedule stops with its last subscriber.
     */
    watch(channelId: string, listener: Listener): () => void {
      listen()
      let entry = entries.get(channelId)
      if (!entry) {
        entry = { channelId, listeners: new Set(), running: false, again: false }
        entries.set(channelId, entry)
        entry.listeners.add(listener)
        void recompute(entry)
      } else {
        entry.listeners.add(listener)
        if (entry.current) listener(countdownAt(entry.current, deps.clock.now()))
      }
      const watched = entry
      return () => {
        watched.listeners.delete(listener)
        if (watched.listeners.size === 0 && entries.get(channelId) === watched) {
          clearTimeout(watched.timer)
          entries.delete(channelId)
        }
      }
    },
    /** Channels with a schedule on this instance (tests, metrics). */
    get channels() {
      return entries.size
    },
  }
}

function shapeOf(answer: NowPlaying): string {
  const { cacheSeconds: _c, currentVideo, ...rest } = answer
  const video = currentVideo
    ? { ...currentVideo, remainingTime: undefined, remainingTimeHuman: currentVideo.endTime ? undefined : currentVideo.remainingTimeHuman }
    : null
  return JSON.stringify({ ...rest, video })
}

/** The kept answer with its countdown brought to `now`, for a subscriber that joins later. */
function countdownAt(answer: NowPlaying, now: Date): NowPlaying {
  const video = answer.currentVideo
  if (!video?.endTime) return answer
  const remainingTime = Math.max(0, Math.ceil((video.endTime.getTime() - now.getTime()) / 1000))
  const cacheSeconds = answer.isLive
    ? answer.cacheSeconds
    : Math.max(1, Math.ceil((answer.estimatedEndAt.getTime() - now.getTime()) / 1000))
  return { ...answer, cacheSeconds, currentVideo: { ...video, remainingTime, remainingTimeHuman: humanRemaining(remainingTime) } }
}
