// A cheap picture of everything stored: row counts of every table and the latest updatedAt of the
// tables that keep one. Equal before and after a refused request means the request wrote nothing.
// IdempotencyRecord is left out on purpose: a refused request that carried an Idempotency-Key keeps
// its answer there so a repeat gets the same refusal (README, "Idempotency"); that is bookkeeping
// of the answer, not a change of data.
import type { TestKit } from './kit.js'

const TABLES = [
  'Account',
  'ApiKey',
  'Group',
  'SimCode',
  'Contact',
  'Membership',
  'SubscriptionEvent',
  'Message',
  'SmsSubmission',
  'MessageStatusUpdate',
  'ScheduledCarrierEvent',
  'WebhookEndpoint',
  'WebhookDelivery',
  'WebhookAttempt',
  'Channel',
  'Program',
  'WeeklySlot',
  'Episode',
  'Airing',
  'Video',
  'ScheduledBroadcast',
  'LiveBroadcast',
  'Playlist',
  'PlaylistItem',
  'TimeBelt',
  'Catchup',
]
const UPDATED = ['Group', 'Contact', 'Message', 'WebhookEndpoint', 'Channel']

// One statement, one round trip: both databases accept the same quoted identifiers.
const SQL = `SELECT ${[
  ...TABLES.map((t) => `(SELECT COUNT(*) FROM "${t}") AS "n_${t}"`),
  ...UPDATED.map((t) => `(SELECT MAX("updatedAt") FROM "${t}") AS "u_${t}"`),
].join(', ')}`

export async function fingerprint(kit: TestKit): Promise<Record<string, string>> {
  const [row] = await kit.db.$queryRawUnsafe<Record<string, unknown>[]>(SQL)
  return Object.fromEntries(Object.entries(row!).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : String(v)]))
}
