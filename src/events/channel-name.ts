import { createHash } from 'node:crypto'

/**
 * NOTIFY reaches every session of the database, and several schemas (test files, tenants) may
 * share one database: the channel is named after the schema so each schema hears only its own.
 * Hashed because a schema name may be long (identifiers stop at 63 bytes) or need quoting.
 */
export function channelNameFor(schema: string): string {
  return `gateway_events_${createHash('sha256').update(schema).digest('hex').slice(0, 16)}`
}
