import { AppError } from '../core/errors.js'

/** At most this much of a refused body is read and thrown away, within LINGER_MS. */
const LINGER_FACTOR = 2
const LINGER_MS = 5_000

const tooLarge = (limit: number) => new AppError('PAYLOAD_TOO_LARGE', `The body is larger than ${limit} bytes`)

/**
 * The request body as bytes, or PAYLOAD_TOO_LARGE past `limit` (by Content-Length, or while
 * streaming). A refused body is not simply abandoned: closing a socket the client is still writing
 * to makes the kernel reset it, and the reset can destroy the 413 before the client reads it. So,
 * like a lingering close, up to LINGER_FACTOR times the limit (within LINGER_MS) is read and
 * discarded first; nothing of it is kept in memory.
 */
export async function readBodyBytes(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = request.headers.get('content-length')
  const declaredSize = declared === null ? null : Number(declared)
  if (!request.body) return new Uint8Array(0)
  if (declaredSize !== null && declaredSize > limit) {
    await discard(request.body.getReader(), declaredSize <= limit * LINGER_FACTOR ? declaredSize : 0)
    throw tooLarge(limit)
  }
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await discard(reader, limit * LINGER_FACTOR - size)
      throw tooLarge(limit)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks)
}

async function discard(reader: ReadableStreamDefaultReader<Uint8Array>, budget: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<'expired'>((resolve) => (timer = setTimeout(() => resolve('expired'), LINGER_MS)))
  let left = budget
  try {
    while (left > 0) {
      const next = await Promise.race([reader.read(), expired])
      if (next === 'expired' || next.done) break
      left -= next.value.byteLength
    }
  } catch {
    // The client went away: nothing left to drain.
  } finally {
    clearTimeout(timer)
  }
  await reader.cancel().catch(() => undefined)
}
