// Test data for the peers benchmark, written with plain SQL into the service's tables (its
// migrations created them), with the service's own sort keys and search text (contactKeys).
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import Database from 'better-sqlite3'
import pg from 'pg'
import { parseDatabaseUrl } from '../../src/db/connection-url.js'
import { timeOrderedId } from '../../src/db/time-ordered-id.js'
import { contactKeys } from '../../src/messaging/contacts.js'

const FIRST = [
  'Amina',
  'Brian',
  'Chebet',
  'David',
  'Esther',
  'Faith',
  'George',
  'Halima',
  'Ian',
  'Joy',
  'Kevin',
  'Lilian',
  'Moses',
  'Njeri',
  'Otieno',
  'Purity',
  'Rose',
  'Samuel',
  'Tabitha',
  'Wanjiru',
]
const FAMILY = ['Achieng', 'Barasa', 'Cheruiyot', 'Dube', 'Kamau', 'Kariuki', 'Mwangi', 'Njoroge', 'Odhiambo', 'Wafula', 'Wekesa', 'Zuma']
/** The search term of the 100k test: in the family name of 1 contact in 100, nowhere else. */
export const RARE = 'qzxv'

/** Contact n of a series: Kenyan mobiles +2547<base + n>; names repeat, so the id breaks ties. */
export function fakeContact(base: number, n: number) {
  return {
    mobile: `+2547${String(base + n).padStart(8, '0')}`,
    firstName: FIRST[(n * 7) % FIRST.length]!,
    familyName: n % 100 === 42 ? `Qzxvanga${n % 7}` : FAMILY[(n * 13) % FAMILY.length]!,
  }
}

export async function seedContacts(url: string, accountId: string, base: number, count: number) {
  const target = parseDatabaseUrl(url)
  const row = (n: number, now: string) => {
    const c = fakeContact(base, n)
    const keys = contactKeys(c)
    return [
      timeOrderedId(),
      accountId,
      c.mobile,
      c.firstName,
      c.familyName,
      keys.firstNameKey,
      keys.familyNameKey,
      keys.searchText,
      now,
      now,
    ]
  }
  const columns = `"id", "accountId", "mobile", "firstName", "familyName", "firstNameKey", "familyNameKey", "searchText", "createdAt", "updatedAt"`
  if (target.kind === 'sqlite') {
    const db = new Database(target.file!, { timeout: 10_000 })
    const insert = db.prepare(`INSERT INTO "Contact" (${columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    const now = new Date().toISOString().replace('Z', '+00:00')
    db.transaction(() => {
      for (let n = 0; n < count; n++) insert.run(...row(n, now))
    })()
    db.close()
    return
  }
  const client = new pg.Client({ connectionString: target.connectionString, options: `-c search_path="${target.schema}"` })
  await client.connect()
  const now = new Date().toISOString().slice(0, 23)
  for (let from = 0; from < count; from += 1000) {
    const rows = Array.from({ length: Math.min(1000, count - from) }, (_, i) => row(from + i, now))
    const values = rows.map((_, r) => `(${Array.from({ length: 10 }, (_, c) => `$${r * 10 + c + 1}`).join(', ')})`)
    await client.query(`INSERT INTO "Contact" (${columns}) VALUES ${values.join(', ')}`, rows.flat())
  }
  await client.query('ANALYZE "Contact"')
  await client.end()
}

/**
 * A channel whose now playing is never empty during the run: the sample channel's metadata with a
 * playlist of one six-hour video that started an hour ago (no programs or broadcasts to displace it).
 */
export function nowPlayingChannel(now: Date) {
  const sample = JSON.parse(readFileSync(new URL('../../docs/channel-sample.json', import.meta.url), 'utf8'))
  const video = { ...sample.videos[0], ref: 'marathon', name: 'Harbour marathon', duration_seconds: 6 * 3600 }
  return {
    channel: { ...sample.channel, uuid: randomUUID(), slug: `peers-${Date.now()}` },
    videos: [video],
    programs: [],
    playlist: {
      name: 'Peers rotation',
      description: 'One long video around now',
      started_at: new Date(now.getTime() - 3600_000).toISOString(),
      sting_seconds: 10,
      videos: ['marathon'],
    },
  }
}

/** Rows of one table matching a column, read directly (sanity checks after add-contacts). */
export async function countRows(
  url: string,
  table: 'Contact' | 'Membership',
  column: 'accountId' | 'groupId',
  value: string,
): Promise<number> {
  const target = parseDatabaseUrl(url)
  const sql = `SELECT count(*) AS n FROM "${table}" WHERE "${column}" = `
  if (target.kind === 'sqlite') {
    const db = new Database(target.file!, { readonly: true, timeout: 10_000 })
    const { n } = db.prepare(`${sql}?`).get(value) as { n: number }
    db.close()
    return n
  }
  const client = new pg.Client({ connectionString: target.connectionString, options: `-c search_path="${target.schema}"` })
  await client.connect()
  const { rows } = await client.query(`${sql}$1`, [value])
  await client.end()
  return Number(rows[0].n)
}
