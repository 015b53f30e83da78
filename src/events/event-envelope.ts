import { AppError } from '../core/errors.js'

/**
 * PostgreSQL refuses NOTIFY payloads of 8000 bytes or more; the envelope must fit with room to
 * spare. The same bound applies in-process so that code behaves alike on both databases.
 */
export const MAX_ENVELOPE_BYTES = 7900

export interface Envelope {
  /** The publishing bus, so it can skip its own echo (it delivered locally already). */
  origin: string
  topic: string
  payload: unknown
}

export function encodeEnvelope(envelope: Envelope): string {
  const text = JSON.stringify(envelope)
  const bytes = Buffer.byteLength(text, 'utf8')
  if (bytes > MAX_ENVELOPE_BYTES) {
    throw new AppError(
      'VALIDATION_FAILED',
      `event "${envelope.topic}" is ${bytes} bytes; events are at most ${MAX_ENVELOPE_BYTES} bytes (send an id and read the rest from the database)`,
    )
  }
  return text
}

/** null for anything that is not an envelope (another writer on the channel): ignored. */
export function decodeEnvelope(text: string): Envelope | null {
  try {
    const value = JSON.parse(text) as Partial<Envelope>
    if (typeof value?.origin !== 'string' || typeof value.topic !== 'string' || !('payload' in value)) return null
    return value as Envelope
  } catch {
    return null
  }
}
