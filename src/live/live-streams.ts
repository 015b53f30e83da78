/**
 * The open subscription streams (SSE answers of /graphql) of one instance: limits per API key and
 * per client address, a keep-alive comment on idle streams, and `closeAll()` for shutdown, which
 * ends every stream so the HTTP drain does not wait its whole grace period for them.
 */
import { clientKey } from '../http/rate-limit.js'

export interface LiveStreamOptions {
  perKey: number
  perAddress: number
  keepAliveMs: number
}

export type Admission = { ok: true; release: () => void } | { ok: false; code: 'RATE_LIMITED' | 'SERVICE_UNAVAILABLE'; message: string }

const encoder = new TextEncoder()
const PING = encoder.encode(':\n\n')
const COMPLETE = encoder.encode('event: complete\ndata:\n\n')

export function createLiveStreams({ perKey, perAddress, keepAliveMs }: LiveStreamOptions) {
  const counts = new Map<string, number>()
  const open = new Set<() => void>()
  let closing = false

  /** `address`: the client's address, counted as the rate limiter counts it (clientKey: IPv6 per /64). */
  function admit(key: string | null, address: string | null): Admission {
    if (closing)
      return {
        ok: false,
        code: 'SERVICE_UNAVAILABLE',
        message: 'This instance is shutting down; subscribe again (another instance answers)',
      }
    const slots = [
      key !== null ? { id: `k|${key}`, max: perKey, who: 'API key' } : null,
      address ? { id: `a|${clientKey(address) ?? address}`, max: perAddress, who: 'address' } : null,
    ]
    for (const slot of slots) {
      if (slot && (counts.get(slot.id) ?? 0) >= slot.max) {
        return {
          ok: false,
          code: 'RATE_LIMITED',
          message: `At most ${slot.max} live subscriptions per ${slot.who} at once; close one first`,
        }
      }
    }
    for (const slot of slots) if (slot) counts.set(slot.id, (counts.get(slot.id) ?? 0) + 1)
    let released = false
    return {
      ok: true,
      release() {
        if (released) return
        released = true
        for (const slot of slots) {
          if (!slot) continue
          const left = (counts.get(slot.id) ?? 1) - 1
          if (left > 0) counts.set(slot.id, left)
          else counts.delete(slot.id)
        }
      },
    }
  }

  /**
   * Passes the SSE body through, adding a keep-alive comment whenever nothing was sent for
   * keepAliveMs (only between events: Yoga writes `event:` and `data:` as separate chunks).
   * The slot is released when the stream ends, is cancelled by the client, or is closed here.
   * `watch` is handed the stream's close (its credential ended: src/auth/credential-watch.ts) and
   * returns what stops watching when the stream ends otherwise.
   */
  function track(response: Response, release: () => void, watch?: (close: () => void) => () => void): Response {
    const source = response.body
    if (!source) {
      release()
      return response
    }
    const reader = source.getReader()
    let timer: NodeJS.Timeout | undefined
    let atBoundary = true
    let finished = false
    let controllerRef: ReadableStreamDefaultController<Uint8Array>
    let unwatch: (() => void) | undefined
    const finish = () => {
      if (finished) return
      finished = true
      clearInterval(timer)
      open.delete(closeNow)
      unwatch?.()
      release()
    }
    const closeNow = () => {
      if (finished) return
      finish()
      try {
        // The protocol's own end (graphql-sse): the client knows the stream was ended, not cut.
        if (atBoundary) controllerRef.enqueue(COMPLETE)
        controllerRef.close()
      } catch {
        // already closed or errored
      }
      reader.cancel().catch(() => undefined)
    }
    let lastSent = performance.now()
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controllerRef = controller
        open.add(closeNow)
        unwatch = watch?.(closeNow)
        timer = setInterval(() => {
          if (finished || !atBoundary || performance.now() - lastSent < keepAliveMs * 0.9) return
          lastSent = performance.now()
          controller.enqueue(PING)
        }, keepAliveMs)
      },
      async pull(controller) {
        try {
          const { value, done } = await reader.read()
          if (finished) return
          if (done) {
            finish()
            controller.close()
            return
          }
          controller.enqueue(value)
          lastSent = performance.now()
          atBoundary = value.length >= 2 && value[value.length - 1] === 10 && value[value.length - 2] === 10
        } catch (error) {
          if (finished) return
          finish()
          controller.error(error)
        }
      },
      cancel(reason) {
        finish()
        return reader.cancel(reason)
      },
    })
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
  }

  return {
    admit,
    track,
    /** Streams open now. */
    get size() {
      return open.size
    },
    /** Ends every open stream (shutdown): clients see the response end and may reconnect elsewhere. */
    closeAll() {
      closing = true
      // Each close removes itself from the set, which a Set's iteration allows.
      for (const close of open) close()
    },
  }
}
