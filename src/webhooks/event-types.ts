import { validationError, type ErrorDetail } from '../core/errors.js'

/**
 * The event types an endpoint can subscribe to. Adding one (the SMPP work's `sms.received`) is a
 * line here: validation, the GraphQL enum and the CLI all read this list.
 */
export const WEBHOOK_EVENT_TYPES = ['message.status', 'test'] as const
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

/** The body an endpoint receives. */
export const PAYLOAD_FORMATS = ['legacy', 'standard'] as const
export type PayloadFormat = (typeof PAYLOAD_FORMATS)[number]

export const isEventType = (value: string): value is WebhookEventType => (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value)

/** The stored form: space-separated, in the list's order, each once. */
export const storedEventTypes = (types: readonly WebhookEventType[]) => WEBHOOK_EVENT_TYPES.filter((t) => types.includes(t)).join(' ')

/** The stored form read back; unknown words (a type since withdrawn) are left out. */
export const eventTypesOf = (stored: string): WebhookEventType[] => stored.split(' ').filter(isEventType)

export const subscribes = (stored: string, type: WebhookEventType) => stored.split(' ').includes(type)

/** Checks a subscription list: at least one type, each one known. `field` names it in the error. */
export function parseEventTypes(values: readonly string[], field = 'eventTypes'): WebhookEventType[] {
  const details: ErrorDetail[] = values.flatMap((value, i) =>
    isEventType(value) ? [] : [{ field: `${field}[${i}]`, message: `unknown event type; one of ${WEBHOOK_EVENT_TYPES.join(', ')}` }],
  )
  if (!values.length) details.push({ field, message: 'at least one event type' })
  if (details.length) throw validationError(details)
  return values as WebhookEventType[]
}

export function parsePayloadFormat(value: string, field = 'payloadFormat'): PayloadFormat {
  if (!(PAYLOAD_FORMATS as readonly string[]).includes(value))
    throw validationError([{ field, message: `one of ${PAYLOAD_FORMATS.join(', ')}` }])
  return value as PayloadFormat
}

/**
 * The body an endpoint receives for an event: the legacy body as it is (the delivery report, or
 * the test event), or the Standard Webhooks envelope around it, `{type, timestamp, data}`.
 */
export function bodyFor(format: string, type: WebhookEventType, at: Date, data: object): string {
  return format === 'standard' ? JSON.stringify({ type, timestamp: at.toISOString(), data }) : JSON.stringify(data)
}
