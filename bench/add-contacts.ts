// npm run bench -- add-contacts
// POST /api/contact/group/:id/add-contacts through the real app, against a minimal hand-written
// server on the same database (raw better-sqlite3 / pg: chunked INSERT ... ON CONFLICT DO UPDATE and
// membership inserts in one transaction), side by side:
//   1. 10,000 contacts that all exist already (target: at most 3x the hand-written time);
//   2. 1,000 new contacts (target: at most 2x).
// BENCH_DATABASE_URL selects PostgreSQL (postgresql://...?schema=bench_<random>); default: SQLite.
// BENCH_RUNS (default 3) runs per case; the median is compared.
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { randomUUID } from 'node:crypto'
import { loadavg } from 'node:os'
import type { AddressInfo } from 'node:net'
import Sqlite from 'better-sqlite3'
import pg from 'pg'
import { createAccount } from '../src/accounts/create-account.js'
import { createGroup } from '../src/messaging/groups.js'
import { parseDatabaseUrl } from '../src/db/connection-url.js'
import { normalizeMobile } from '../src/messaging/mobile.js'
import { searchKey } from '../src/messaging/search-text.js'
import { median, startBench } from './harness.js'

const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const url = process.env.BENCH_DATABASE_URL
const bench = await startBench()
const { deps, baseUrl } = bench

/** The hand-written side: one function that runs statements in one transaction. */
interface RawDb {
  transaction(work: (run: (sql: string, params: unknown[]) => Promise<{ id: string }[]>) => Promise<void>): Promise<void>
  close(): Promise<void>
}

async function openRaw(): Promise<RawDb> {
  if (url) {
    const conn = parseDatabaseUrl(url)
    const pool = new pg.Pool({ connectionString: conn.connectionString, max: 2, options: `-c search_path="${conn.schema}"` })
    return {
      async transaction(work) {
        const client = await pool.connect()
        try {
          await client.query('BEGIN')
          await work(async (sql, params) => {
            let n = 0
            return (
              await client.query(
                sql.replace(/\?/g, () => `$${++n}`),
                params,
              )
            ).rows
          })
          await client.query('COMMIT')
        } catch (error) {
          await client.query('ROLLBACK')
          throw error
        } finally {
          client.release()
        }
      },
      close: () => pool.end(),
    }
  }
  // The app's SQLite file: the harness keeps it in its own temporary directory.
  const file = (await deps.db.$queryRawUnsafe<{ file: string }[]>('SELECT file FROM pragma_database_list WHERE name = ?', 'main'))[0]!.file
  const db = new Sqlite(file)
  db.pragma('busy_timeout = 5000')
  db.pragma('synchronous = NORMAL')
  return {
    async transaction(work) {
      db.exec('BEGIN IMMEDIATE')
      try {
        await work(async (sql, params) => {
          const statement = db.prepare(sql)
          const values = params.map((p) => (p instanceof Date ? p.toISOString().replace('Z', '+00:00') : p))
          if (statement.reader) return statement.all(...values) as { id: string }[]
          statement.run(...values)
          return []
        })
        db.exec('COMMIT')
      } catch (error) {
        db.exec('ROLLBACK')
        throw error
      }
    },
    async close() {
      db.close()
    },
  }
}

const readJson = async (req: IncomingMessage) => {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return JSON.parse(Buffer.concat(chunks).toString('utf8'))
}

/** The hand-written add-contacts: parse, normalize, upsert 1,000 rows a statement, enlist, commit. */
async function handWrittenServer(raw: RawDb, accountId: string): Promise<{ server: Server; url: string }> {
  const server = createServer(async (req, res) => {
    const groupId = req.url!.split('/')[4]!
    const { contacts } = (await readJson(req)) as { contacts: { mobile: string; first_name: string; family_name?: string }[] }
    const rows = new Map<string, { firstName: string; familyName: string }>()
    for (const c of contacts)
      rows.set(normalizeMobile(c.mobile, 'KE')!, { firstName: c.first_name.trim(), familyName: (c.family_name ?? '').trim() })
    const all = [...rows]
    let created = 0
    await raw.transaction(async (run) => {
      const now = new Date()
      for (let i = 0; i < all.length; i += 1000) {
        const chunk = all.slice(i, i + 1000)
        const params: unknown[] = []
        const values = chunk.map(([mobile, c]) => {
          const id = randomUUID()
          const search = searchKey([c.firstName, c.familyName, mobile].filter(Boolean).join('\n'))
          params.push(
            id,
            accountId,
            mobile,
            c.firstName,
            c.familyName,
            c.firstName.toLowerCase(),
            c.familyName.toLowerCase(),
            search,
            now,
            now,
          )
          return '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'
        })
        const ids = await run(
          `INSERT INTO "Contact" ("id", "accountId", "mobile", "firstName", "familyName", "firstNameKey", "familyNameKey", "searchText", "createdAt", "updatedAt")
           VALUES ${values.join(', ')}
           ON CONFLICT ("accountId", "mobile") DO UPDATE SET "firstName" = excluded."firstName", "familyName" = excluded."familyName",
             "firstNameKey" = excluded."firstNameKey", "familyNameKey" = excluded."familyNameKey", "searchText" = excluded."searchText", "updatedAt" = excluded."updatedAt"
           RETURNING "id"`,
          params,
        )
        const memberships = ids.map(() => '(?, ?, ?)')
        await run(
          `INSERT INTO "Membership" ("groupId", "contactId", "createdAt") VALUES ${memberships.join(', ')} ON CONFLICT DO NOTHING`,
          ids.flatMap(({ id }) => [groupId, id, now]),
        )
        created += ids.length
      }
    })
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'successful', count: created }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

const people = (from: number, n: number, name: string) =>
  Array.from({ length: n }, (_, i) => ({
    mobile: `+2547${String(10_000_000 + from + i)}`,
    first_name: `${name}${i}`,
    family_name: 'Bench',
  }))

/** Wall time, and this process's CPU time (app, hand-written server and SQLite all run in it). */
async function post(base: string, key: string, groupId: string, contacts: unknown[]) {
  const started = performance.now()
  const cpu = process.cpuUsage()
  const res = await fetch(`${base}/api/contact/group/${groupId}/add-contacts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ contacts }),
  })
  const ms = performance.now() - started
  const used = process.cpuUsage(cpu)
  if (res.status !== 200) throw new Error(`add-contacts answered ${res.status}: ${await res.text()}`)
  await res.arrayBuffer()
  return { ms, cpuMs: (used.user + used.system) / 1000 }
}

const app = await createAccount(deps, { name: 'App' })
const hand = await createAccount(deps, { name: 'Hand-written' })
const raw = await openRaw()
const handServer = await handWrittenServer(raw, hand.account.id)
const appGroup = (await createGroup(deps, app.account.id, { name: 'Bulk' })).group.id
const handGroup = (await createGroup(deps, hand.account.id, { name: 'Bulk' })).group.id

// Both accounts start with the same 10,000 contacts on the group.
await post(baseUrl, app.apiKey, appGroup, people(0, 10_000, 'Seed'))
await post(handServer.url, hand.apiKey, handGroup, people(0, 10_000, 'Seed'))

type Timing = Awaited<ReturnType<typeof post>>
const results: { name: string; app: Timing[]; hand: Timing[]; target: number }[] = []
const existing: Timing[][] = [[], []]
const fresh: Timing[][] = [[], []]
let next = 100_000
for (let run = 0; run < RUNS; run++) {
  // Alternate which side goes first so neither always gets the warmer cache.
  const order = run % 2 ? [1, 0] : [0, 1]
  for (const side of order) {
    const [base, key, group] = side === 0 ? [baseUrl, app.apiKey, appGroup] : [handServer.url, hand.apiKey, handGroup]
    existing[side]!.push(await post(base, key, group, people(0, 10_000, `Run${run}-`)))
    fresh[side]!.push(await post(base, key, group, people(next, 1_000, 'New')))
  }
  next += 1_000
}
results.push({ name: '10,000 existing contacts', app: existing[0]!, hand: existing[1]!, target: 3 })
results.push({ name: '1,000 new contacts', app: fresh[0]!, hand: fresh[1]!, target: 2 })

const load = loadavg()
  .map((l) => l.toFixed(2))
  .join(' ')
console.log(`add-contacts on ${deps.dbKind}, median of ${RUNS} runs; load average ${load}`)
// On SQLite the CPU time of this process is all the work, and moves less with the load than wall time.
console.log('| request | app ms | hand-written ms | ratio | target | app CPU ms | hand-written CPU ms | CPU ratio |')
console.log('|---|---:|---:|---:|---:|---:|---:|---:|')
for (const r of results) {
  const [app, hand] = [median(r.app.map((t) => t.ms)), median(r.hand.map((t) => t.ms))]
  const [appCpu, handCpu] = [median(r.app.map((t) => t.cpuMs)), median(r.hand.map((t) => t.cpuMs))]
  const ratio = app / hand
  const verdict = `<= ${r.target}x ${ratio <= r.target ? 'met' : 'MISSED'}`
  console.log(
    `| ${r.name} | ${app.toFixed(0)} | ${hand.toFixed(0)} | ${ratio.toFixed(2)}x | ${verdict} | ${appCpu.toFixed(0)} | ${handCpu.toFixed(0)} | ${(appCpu / handCpu).toFixed(2)}x |`,
  )
}

await new Promise((resolve) => handServer.server.close(resolve))
await raw.close()
if (url) {
  const conn = parseDatabaseUrl(url)
  await deps.db.$executeRawUnsafe(`DROP SCHEMA IF EXISTS "${conn.schema!.replace(/"/g, '""')}" CASCADE`)
}
await bench.close()
