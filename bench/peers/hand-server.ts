// The hand-written peer of issue 8: fastify + better-sqlite3 / fastify + pg, hand-written SQL over
// the service's own tables (created by its migrations), what an integrator would write instead of
// the service. It answers the same JSON as the service for
//   GET  /api/contacts?page=&perPage=&search=
//   POST /api/contact/group/:id/add-contacts
// with the same key check (look the key up by its prefix, compare SHA-256 in constant time).
// Usage: node --import tsx bench/peers/hand-server.ts <port> <DATABASE_URL>
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import Database from 'better-sqlite3'
import Fastify, { type FastifyReply } from 'fastify'
import pg from 'pg'
import { parseDatabaseUrl } from '../../src/db/connection-url.js'
import { normalizeMobile } from '../../src/messaging/mobile.js'
import { contactKeys } from '../../src/messaging/contacts.js'
import { searchKey } from '../../src/messaging/search-text.js'

const KEY_PATTERN = /^(gk_[0-9a-f]{12})_([A-Za-z0-9_-]{43})$/
const PAGE_COLUMNS = `"id", "firstName", "familyName", "otherNames", "mobile", "email", "organization", "gender"`
const ORDER = `ORDER BY "firstNameKey", "familyNameKey", "id"`
const CHUNK = 500
/** Legacy body field -> column; the same optional text fields the service reads. */
const TEXT_FIELDS: Record<string, string> = {
  family_name: 'familyName',
  other_names: 'otherNames',
  email: 'email',
  gender: 'gender',
  organization: 'organization',
  whatsapp_number: 'whatsappNumber',
  viber_number: 'viberNumber',
  skype_id: 'skypeId',
  facebook: 'facebook',
  twitter: 'twitter',
  linkedin: 'linkedin',
  groupme: 'groupme',
  wechat: 'wechat',
  youtube: 'youtube',
}
const CONTACT_COLUMNS = [
  'id',
  'accountId',
  'mobile',
  'firstName',
  ...Object.values(TEXT_FIELDS),
  'firstNameKey',
  'familyNameKey',
  'searchText',
  'createdAt',
  'updatedAt',
]
const UPDATE_COLUMNS = CONTACT_COLUMNS.filter((c) => !['id', 'accountId', 'mobile', 'createdAt'].includes(c))

type Row = Record<string, unknown> & { id: string; mobile: string }
interface PageRow {
  id: string
  firstName: string
  familyName: string
  otherNames: string | null
  mobile: string
  email: string | null
  organization: string | null
  gender: string
}

/** One upsert batch: rows to write, then the group memberships of the written contacts. */
interface Store {
  keyOf(prefix: string): Promise<{ hash: string; revokedAt: unknown; accountId: string } | undefined>
  page(accountId: string, search: string, limit: number, offset: number): Promise<{ total: number; rows: PageRow[] }>
  /** Returns false when the group is not the account's. */
  addContacts(accountId: string, groupId: string, contacts: Map<string, Record<string, string | null>>): Promise<boolean>
}

const q = (c: string) => `"${c}"`
const upsertSql = (rows: number, param: (i: number) => string) => {
  const values = Array.from(
    { length: rows },
    (_, r) => `(${CONTACT_COLUMNS.map((_, c) => param(r * CONTACT_COLUMNS.length + c + 1)).join(', ')})`,
  )
  return (
    `INSERT INTO "Contact" (${CONTACT_COLUMNS.map(q).join(', ')}) VALUES ${values.join(', ')} ` +
    `ON CONFLICT ("accountId", "mobile") DO UPDATE SET ${UPDATE_COLUMNS.map((c) => `${q(c)} = excluded.${q(c)}`).join(', ')} RETURNING "id", "mobile"`
  )
}
/** PostgreSQL: every row in one statement, one array a column. */
const UNNEST_UPSERT =
  `INSERT INTO "Contact" (${CONTACT_COLUMNS.map(q).join(', ')}) ` +
  `SELECT * FROM unnest(${CONTACT_COLUMNS.map((c, i) => `$${i + 1}::${c === 'createdAt' || c === 'updatedAt' ? 'timestamp(3)' : 'text'}[]`).join(', ')}) ` +
  `ON CONFLICT ("accountId", "mobile") DO UPDATE SET ${UPDATE_COLUMNS.map((c) => `${q(c)} = excluded.${q(c)}`).join(', ')}`
const membershipSql = (rows: number, param: (i: number) => string) =>
  `INSERT INTO "Membership" ("groupId", "contactId", "createdAt") VALUES ${Array.from({ length: rows }, (_, r) => `(${param(r * 3 + 1)}, ${param(r * 3 + 2)}, ${param(r * 3 + 3)})`).join(', ')} ON CONFLICT DO NOTHING`

/** Merges the sent fields over the stored row (sent fields win), as the service's upsert does. */
function mergedRow(
  accountId: string,
  mobile: string,
  sent: Record<string, string | null>,
  existing: Row | undefined,
  now: string,
): unknown[] {
  const row: Record<string, unknown> = existing
    ? { ...existing, ...sent, updatedAt: now }
    : { id: randomUUID(), accountId, mobile, familyName: '', gender: '', ...sent, createdAt: now, updatedAt: now }
  Object.assign(row, contactKeys(row as { firstName: string; familyName: string; mobile: string }))
  return CONTACT_COLUMNS.map((c) => row[c] ?? null)
}

function sqliteStore(file: string): Store {
  const db = new Database(file, { timeout: 10_000 })
  db.pragma('synchronous = NORMAL')
  const key = db.prepare(`SELECT "hash", "revokedAt", "accountId" FROM "ApiKey" WHERE "prefix" = ?`)
  const list = db.prepare(`SELECT ${PAGE_COLUMNS} FROM "Contact" WHERE "accountId" = ? ${ORDER} LIMIT ? OFFSET ?`)
  const count = db.prepare(`SELECT count(*) AS n FROM "Contact" WHERE "accountId" = ?`)
  const searchList = db.prepare(
    `SELECT ${PAGE_COLUMNS} FROM "Contact" WHERE "accountId" = ? AND "searchText" LIKE ? ${ORDER} LIMIT ? OFFSET ?`,
  )
  const searchCount = db.prepare(`SELECT count(*) AS n FROM "Contact" WHERE "accountId" = ? AND "searchText" LIKE ?`)
  const group = db.prepare(`SELECT 1 FROM "Group" WHERE "id" = ? AND "accountId" = ?`)
  const prepared = new Map<string, Database.Statement>()
  const statement = (sql: string) => prepared.get(sql) ?? prepared.set(sql, db.prepare(sql)).get(sql)!
  // SQLite timestamps as Prisma writes them: ISO with +00:00.
  const add = db.transaction((accountId: string, groupId: string, contacts: Map<string, Record<string, string | null>>) => {
    if (!group.get(groupId, accountId)) return false
    const now = new Date().toISOString().replace('Z', '+00:00')
    const mobiles = [...contacts.keys()]
    for (let i = 0; i < mobiles.length; i += CHUNK) {
      const chunk = mobiles.slice(i, i + CHUNK)
      const existing = statement(`SELECT * FROM "Contact" WHERE "accountId" = ? AND "mobile" IN (${chunk.map(() => '?').join(', ')})`).all(
        accountId,
        ...chunk,
      ) as Row[]
      const byMobile = new Map(existing.map((r) => [r.mobile, r]))
      const values = chunk.flatMap((m) => mergedRow(accountId, m, contacts.get(m)!, byMobile.get(m), now))
      const written = statement(upsertSql(chunk.length, () => '?')).all(...values) as { id: string }[]
      statement(membershipSql(written.length, () => '?')).run(...written.flatMap((w) => [groupId, w.id, now]))
    }
    return true
  })
  return {
    keyOf: async (prefix) => key.get(prefix) as { hash: string; revokedAt: unknown; accountId: string } | undefined,
    async page(accountId, search, limit, offset) {
      if (!search) return { total: (count.get(accountId) as { n: number }).n, rows: list.all(accountId, limit, offset) as PageRow[] }
      const like = `%${search}%`
      return {
        total: (searchCount.get(accountId, like) as { n: number }).n,
        rows: searchList.all(accountId, like, limit, offset) as PageRow[],
      }
    },
    addContacts: async (accountId, groupId, contacts) => add.immediate(accountId, groupId, contacts),
  }
}

function postgresStore(connectionString: string, schema: string): Store {
  // The service's pool size (src/db/client.ts).
  const pool = new pg.Pool({ connectionString, max: 10, options: `-c search_path="${schema.replace(/"/g, '""')}"` })
  return {
    async keyOf(prefix) {
      const { rows } = await pool.query({
        name: 'key',
        text: `SELECT "hash", "revokedAt", "accountId" FROM "ApiKey" WHERE "prefix" = $1`,
        values: [prefix],
      })
      return rows[0]
    },
    async page(accountId, search, limit, offset) {
      const where = search ? `"accountId" = $1 AND "searchText" LIKE $2` : `"accountId" = $1`
      const args = search ? [accountId, `%${search}%`] : [accountId]
      const n = args.length
      const [total, list] = await Promise.all([
        pool.query({ name: `count${n}`, text: `SELECT count(*)::int AS n FROM "Contact" WHERE ${where}`, values: args }),
        pool.query({
          name: `list${n}`,
          text: `SELECT ${PAGE_COLUMNS} FROM "Contact" WHERE ${where} ${ORDER} LIMIT $${n + 1} OFFSET $${n + 2}`,
          values: [...args, limit, offset],
        }),
      ])
      return { total: total.rows[0].n, rows: list.rows }
    },
    async addContacts(accountId, groupId, contacts) {
      const client = await pool.connect()
      try {
        await client.query('BEGIN')
        const found = await client.query(`SELECT 1 FROM "Group" WHERE "id" = $1 AND "accountId" = $2`, [groupId, accountId])
        if (!found.rowCount) {
          await client.query('ROLLBACK')
          return false
        }
        // timestamp(3) without time zone holds UTC, as Prisma writes it.
        const now = new Date().toISOString().slice(0, 23)
        // As the shared harness's fastify + pg peer writes them (../shared/bench-peers,
        // baseline-server.mjs): one read, then one statement for all the contacts and one for all
        // the memberships, whatever the count, the rows as one array a column (unnest).
        const mobiles = [...contacts.keys()]
        const existing = await client.query<Row>(`SELECT * FROM "Contact" WHERE "accountId" = $1 AND "mobile" = ANY($2::text[])`, [
          accountId,
          mobiles,
        ])
        const byMobile = new Map(existing.rows.map((r) => [r.mobile, r]))
        const rows = mobiles.map((m) => mergedRow(accountId, m, contacts.get(m)!, byMobile.get(m), now))
        await client.query({
          name: 'upsert',
          text: UNNEST_UPSERT,
          values: CONTACT_COLUMNS.map((_, c) => rows.map((row) => row[c])),
        })
        await client.query({
          name: 'enlist',
          text: `INSERT INTO "Membership" ("groupId", "contactId", "createdAt") SELECT $1, unnest($2::text[]), $3 ON CONFLICT DO NOTHING`,
          values: [groupId, rows.map((row) => row[0]), now],
        })
        await client.query('COMMIT')
        return true
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        throw error
      } finally {
        client.release()
      }
    },
  }
}

const sha256 = (value: string) => createHash('sha256').update(value).digest()

async function authenticate(store: Store, header: string | undefined): Promise<string | null> {
  const token = header?.match(/^Bearer\s+(\S+)\s*$/i)?.[1]
  const match = token?.match(KEY_PATTERN)
  if (!token || !match) return null
  const row = await store.keyOf(match[1]!)
  const stored = row ? Buffer.from(row.hash, 'hex') : randomBytes(32)
  if (!timingSafeEqual(sha256(token), stored) || !row || row.revokedAt) return null
  return row.accountId
}

/** A JSON answer: fastify serializes the object (JSON.stringify) with `application/json; charset=utf-8`. */
const send = (reply: FastifyReply, status: number, body: unknown) => reply.code(status).send(body)

const invalid = (reply: FastifyReply, field: string, message: string) =>
  send(reply, 422, { error: 'The request is not valid', code: 'VALIDATION_FAILED', details: [{ field, message }] })

/** A query parameter as URLSearchParams.get reads it: the first of repeated ones, null when absent. */
type Query = Record<string, string | string[] | undefined>
const param = (query: Query, name: string): string | null => {
  const value = query[name]
  return (Array.isArray(value) ? value[0] : value) ?? null
}

async function contactsPage(store: Store, accountId: string, query: Query, reply: FastifyReply) {
  const int = (name: string, fallback: number) => {
    const raw = param(query, name)
    if (raw === null || raw === '') return fallback
    return /^\d+$/.test(raw.trim()) && Number(raw) >= 1 ? Number(raw) : NaN
  }
  const page = int('page', 1)
  const perPage = Math.min(int('perPage', 25), 100)
  if (Number.isNaN(page)) return invalid(reply, 'page', 'page must be a whole number from 1')
  if (Number.isNaN(perPage)) return invalid(reply, 'perPage', 'perPage must be a whole number from 1')
  const search = param(query, 'search') ?? ''
  const skipped = (page - 1) * perPage
  const { total, rows } = await store.page(accountId, searchKey(search.trim()), perPage, skipped)
  return send(reply, 200, {
    data: rows.map((c) => ({
      uuid: c.id,
      first_name: c.firstName,
      family_name: c.familyName,
      other_names: c.otherNames,
      mobile: c.mobile,
      email: c.email,
      organization: c.organization,
      gender: c.gender,
    })),
    meta: { search, total, skipped, perPage, page, pageCount: Math.ceil(total / perPage) },
  })
}

async function addContacts(store: Store, accountId: string, groupId: string, body: unknown, reply: FastifyReply) {
  const sent = body as { contacts?: unknown } | null
  if (!Array.isArray(sent?.contacts) || sent.contacts.length === 0 || sent.contacts.length > 10_000) {
    return invalid(reply, 'contacts', 'contacts must be an array of 1 to 10000 contacts')
  }
  // Several items with one mobile are one contact, later fields winning (as the service does).
  const contacts = new Map<string, Record<string, string | null>>()
  for (const [i, item] of (sent.contacts as Record<string, unknown>[]).entries()) {
    const mobile = typeof item?.mobile === 'string' || typeof item?.mobile === 'number' ? normalizeMobile(String(item.mobile), 'KE') : null
    if (!mobile) return invalid(reply, `contacts[${i}].mobile`, 'mobile is not a valid mobile number')
    if (typeof item.first_name !== 'string' || !item.first_name.trim())
      return invalid(reply, `contacts[${i}].first_name`, 'first_name is required')
    const fields: Record<string, string | null> = { firstName: item.first_name.trim() }
    for (const [legacy, column] of Object.entries(TEXT_FIELDS)) {
      const value = item[legacy]
      if (value === undefined) continue
      if (value !== null && typeof value !== 'string') return invalid(reply, `contacts[${i}].${legacy}`, `${legacy} must be a string`)
      fields[column] = value === null ? (column === 'familyName' || column === 'gender' ? '' : null) : value.trim()
    }
    contacts.set(mobile, { ...contacts.get(mobile), ...fields })
  }
  if (!(await store.addContacts(accountId, groupId, contacts))) return send(reply, 404, { error: 'Group not found', code: 'NOT_FOUND' })
  return send(reply, 200, { status: 'successful' })
}

const [portArg, databaseUrl] = process.argv.slice(2)
if (!portArg || !databaseUrl) throw new Error('usage: hand-server.ts <port> <DATABASE_URL>')
const target = parseDatabaseUrl(databaseUrl)
const store = target.kind === 'sqlite' ? sqliteStore(target.file!) : postgresStore(target.connectionString!, target.schema!)

// 10,000 contacts of add-contacts are about a megabyte of JSON, fastify's default limit.
const app = Fastify({ logger: false, bodyLimit: 8 * 1024 * 1024 })
app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) => {
  console.error(error)
  const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 500
  return send(reply, status, { error: error.message, code: status === 500 ? 'INTERNAL' : 'BAD_REQUEST' })
})
app.setNotFoundHandler((request, reply) => send(reply, 404, { error: `No route for ${request.url.split('?')[0]}`, code: 'NOT_FOUND' }))
app.get('/healthz', (_request, reply) => send(reply, 200, { status: 'ok' }))
app.get('/api/contacts', async (request, reply) => {
  const accountId = await authenticate(store, request.headers.authorization)
  if (!accountId) return send(reply, 401, { error: 'A valid API key is required', code: 'UNAUTHENTICATED' })
  return contactsPage(store, accountId, request.query as Query, reply)
})
app.post<{ Params: { id: string } }>('/api/contact/group/:id/add-contacts', async (request, reply) => {
  const accountId = await authenticate(store, request.headers.authorization)
  if (!accountId) return send(reply, 401, { error: 'A valid API key is required', code: 'UNAUTHENTICATED' })
  return addContacts(store, accountId, request.params.id, request.body, reply)
})
await app.listen({ port: Number(portArg), host: '127.0.0.1' })
