// npm run bench -- contacts-handwritten
// GET /api/contacts?page=7 (25 of 10,000) against a hand-written server on the same database: plain
// node:http, the driver directly (better-sqlite3 or pg), prepared statements, no GraphQL and no ORM.
// It does what a careful hand-written endpoint would: the key with its account in one join (SHA-256
// compared in constant time), the page of eight columns, COUNT(*) for the total, the same JSON.
// Target (issue 8): the service does at least 0.5x the hand-written server's req/s on both databases.
import { createHash, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { loadavg } from 'node:os'
import Database from 'better-sqlite3'
import pg from 'pg'
import { createAccount } from '../src/accounts/create-account.js'
import { parseContacts } from '../src/messaging/contacts.js'
import { upsertContacts } from '../src/messaging/upsert-contacts.js'
import { parseDatabaseUrl } from '../src/db/connection-url.js'
import { load, printTable, startBench } from './harness.js'

const bench = await startBench()
const { deps, baseUrl } = bench
const { account, apiKey } = await createAccount(deps, { name: 'Bench' })
const auth = { authorization: `Bearer ${apiKey}` }
for (let batch = 0; batch < 10; batch++) {
  const inputs = Array.from({ length: 1000 }, (_, i) => {
    const n = batch * 1000 + i
    return { mobile: `+2547${String(10_000_000 + n)}`, firstName: `Name${String(n).padStart(5, '0')}`, familyName: 'Bench' }
  })
  await upsertContacts(deps, account.id, parseContacts(inputs, 'KE'))
}
void account

const KEY = /^Bearer (gk_[0-9a-f]{12})_[A-Za-z0-9_-]{43}$/
const KEY_SQL = `SELECT k."hash", k."revokedAt", a."id" FROM "ApiKey" k JOIN "Account" a ON a."id" = k."accountId" WHERE k."prefix" = $1`
const PAGE_SQL = `SELECT "id", "firstName", "familyName", "otherNames", "mobile", "email", "organization", "gender" FROM "Contact"
  WHERE "accountId" = $1 ORDER BY "firstNameKey", "familyNameKey", "id" LIMIT $2 OFFSET $3`
const COUNT_SQL = `SELECT COUNT(*) AS "n" FROM "Contact" WHERE "accountId" = $1`

type Row = Record<string, unknown>
interface Queries {
  key(prefix: string): Promise<Row | undefined>
  page(accountId: string, take: number, skip: number): Promise<Row[]>
  count(accountId: string): Promise<number>
  close(): Promise<void>
}

function sqliteQueries(file: string): Queries {
  const db = new Database(file, { readonly: true })
  const q = (sql: string) => db.prepare(sql.replace(/\$\d/g, '?'))
  const [key, page, count] = [q(KEY_SQL), q(PAGE_SQL), q(COUNT_SQL)]
  return {
    key: async (prefix) => key.get(prefix) as Row | undefined,
    page: async (a, take, skip) => page.all(a, take, skip) as Row[],
    count: async (a) => Number((count.get(a) as { n: number }).n),
    close: async () => void db.close(),
  }
}

function pgQueries(connectionString: string, schema: string): Queries {
  const pool = new pg.Pool({ connectionString, max: 10, options: `-c search_path="${schema}"` })
  const run = async (name: string, text: string, values: unknown[]) => (await pool.query({ name, text, values })).rows as Row[]
  return {
    key: async (prefix) => (await run('key', KEY_SQL, [prefix]))[0],
    page: (a, take, skip) => run('page', PAGE_SQL, [a, take, skip]),
    count: async (a) => Number((await run('count', COUNT_SQL, [a]))[0]!.n),
    close: () => pool.end(),
  }
}

const url = process.env.BENCH_DATABASE_URL ?? (deps.env as { DATABASE_URL: string }).DATABASE_URL
const target = parseDatabaseUrl(url)
const queries = target.kind === 'sqlite' ? sqliteQueries(target.file!) : pgQueries(target.connectionString!, target.schema!)

async function handle(req: IncomingMessage, res: ServerResponse) {
  const send = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  }
  const match = (req.headers.authorization ?? '').match(KEY)
  const key = match ? await queries.key(match[1]!) : undefined
  const given = createHash('sha256').update(req.headers.authorization!.slice(7)).digest()
  if (!key || key.revokedAt || !timingSafeEqual(given, Buffer.from(String(key.hash), 'hex'))) return send(401, { error: 'UNAUTHENTICATED' })
  const params = new URL(req.url!, 'http://x').searchParams
  const page = Number(params.get('page') ?? 1)
  const perPage = 25
  const [rows, total] = await Promise.all([queries.page(String(key.id), perPage, (page - 1) * perPage), queries.count(String(key.id))])
  send(200, {
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
    meta: { search: '', total, skipped: (page - 1) * perPage, perPage, page, pageCount: Math.ceil(total / perPage) },
  })
}
const server = createServer((req, res) => void handle(req, res).catch(() => res.writeHead(500).end()))
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const handUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

// Both answer the same document.
const [ours, theirs] = await Promise.all(
  [baseUrl, handUrl].map((u) => fetch(`${u}/api/contacts?page=7`, { headers: auth }).then((r) => r.json())),
)
if (JSON.stringify(ours) !== JSON.stringify(theirs)) throw new Error(`answers differ:\n${JSON.stringify(ours)}\n${JSON.stringify(theirs)}`)

const rows: Awaited<ReturnType<typeof load>>[] = []
await load('warm-up', { url: `${baseUrl}/api/contacts?page=7`, headers: auth, duration: 3 })
await load('warm-up', { url: `${handUrl}/api/contacts?page=7`, headers: auth, duration: 3 })
for (let round = 1; round <= 2; round++) {
  rows.push(await load(`service GET /api/contacts?page=7 (round ${round})`, { url: `${baseUrl}/api/contacts?page=7`, headers: auth }))
  rows.push(await load(`hand-written GET /api/contacts?page=7 (round ${round})`, { url: `${handUrl}/api/contacts?page=7`, headers: auth }))
}
printTable(rows)
const sum = (prefix: string) => rows.filter((r) => r.name.startsWith(prefix)).reduce((a, r) => a + r.requestsPerSecond, 0)
console.log(
  `${deps.dbKind}: service / hand-written throughput ${(sum('service') / sum('hand-written')).toFixed(2)}x (target: at least 0.5x)`,
)
console.log(
  `load average: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
)
await new Promise((resolve) => server.close(resolve))
await queries.close()
await bench.close()
