// npm run bench -- contacts-deep-page
// Deep pages of one account's 100,000 contacts (DEEP_PAGE_CONTACTS: 1000000 for the million of issue
// 19, on demand: seeding takes minutes) through the real server (src/process/server.ts in a child
// process, as the peers benchmark runs it), one client, sequential requests: median and p90 of
// DEEP_PAGE_SAMPLES (21) after 3 warm-ups (and DEEP_PAGE_WARM rounds, 30, over every case that
// writes nothing, before the first), for page 1, the middle page, the last page, a rare and
// a common search (the same page again: remembered), the common one after a change of one contact
// before each request, of one that does not match it and of one that does (followed), the GraphQL
// Relay connection's first 25 of the common search with its totalCount (remembered, and after a
// change), the first, middle and last page of a group of a tenth of the contacts and its search
// (remembered, and after a change: in full), and under each order of ContactOrderBy the GraphQL
// numbered pages (first, middle, last) and the Relay connection's first 25 with its totalCount; then
// add-contacts of 10,000 new contacts into this account and into one of 10,000, alternated
// (DEEP_PAGE_WRITES pairs, default 2), and their ratio (issue 19: at most 1.5x). The rows are the
// peers benchmark's (bench/peers/seed.ts, plain INSERTs and ANALYZE). PostgreSQL is measured twice:
// as seeded (no VACUUM yet, so index-only scans still check every row's visibility in the table)
// and after VACUUM, the state autovacuum brings a table to after a bulk load (it runs once 20% of a
// table's rows are new inserts). BENCH_DATABASE_URL: the PostgreSQL server (default
// postgresql://postgres@127.0.0.1:5432/test); the run uses a fresh schema and drops it.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { applyMigrations } from '../src/db/migrate.js'
import { openDatabase } from '../src/db/client.js'
import { parseEnv } from '../src/core/env.js'
import { createDeps } from '../src/deps.js'
import { createAccount } from '../src/accounts/create-account.js'
import { createGroup } from '../src/messaging/groups.js'
import { contactKeys } from '../src/messaging/contacts.js'
import { startMeasuredService } from './peers/processes.js'
import { median } from './harness.js'
import { fakeContact, RARE, seedContacts } from './peers/seed.js'
import { CONTACT_ORDERS } from '../src/messaging/contact-orders.js'

const COUNT = Number(process.env.DEEP_PAGE_CONTACTS ?? 100_000)
if (!Number.isInteger(COUNT) || COUNT < 10_000 || COUNT % 250 !== 0)
  throw new Error('DEEP_PAGE_CONTACTS: a multiple of 250, at least 10,000')
const WRITES = Number(process.env.DEEP_PAGE_WRITES ?? 2)
/** A first name of 1 contact in 20 (Wanjiru): the shared harness's search term. */
const COMMON = 'wanj'
const GROUP_TERM = 'kama'
/** The connection's first page of the common search, with its exact total. */
const CONNECTION = `query { contactsConnection(search: "${COMMON}", first: 25) { totalCount edges { node { id firstName } } } }`
const SAMPLES = Number(process.env.DEEP_PAGE_SAMPLES ?? 21)
/** Rounds over the cases that write nothing before the first measured request (DEEP_PAGE_WARM). */
const WARM_ROUNDS = Number(process.env.DEEP_PAGE_WARM ?? 30)
const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test'
/** Which databases to measure (DEEP_PAGE_TARGETS, default both): `sqlite`, `postgresql`. */
const TARGETS = (process.env.DEEP_PAGE_TARGETS ?? 'sqlite,postgresql').split(',').map((t) => t.trim())
/** PostgreSQL measured as seeded too, before its VACUUM (DEEP_PAGE_PG_AS_SEEDED=0: only after). */
const PG_AS_SEEDED = process.env.DEEP_PAGE_PG_AS_SEEDED !== '0'
const root = fileURLToPath(new URL('..', import.meta.url))
const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim()

interface Row {
  db: string
  request: string
  median: number
  p90: number
  total: number
  load: string
}
const rows: Row[] = []

async function seed(url: string) {
  await applyMigrations(url)
  // Seeding statements over a million rows may outlast the service's 10-second statement timeout.
  const database = await openDatabase(url, { timeouts: { statementMs: 600_000 } })
  const deps = createDeps(database, parseEnv({ DATABASE_URL: url, LOG_LEVEL: 'silent' }))
  const { account, apiKey } = await createAccount(deps, { name: 'Deep pages' })
  const { group } = await createGroup(deps, account.id, { name: 'Every tenth' })
  const small = await createAccount(deps, { name: 'Ten thousand' })
  const smallGroup = await createGroup(deps, small.account.id, { name: 'Adds' })
  const bigGroup = await createGroup(deps, account.id, { name: 'Adds' })
  await seedContacts(url, account.id, 20_000_000, COUNT)
  await seedContacts(url, small.account.id, 10_000_000, 10_000)
  // Every tenth contact (by mobile) in the group: 10,000 members spread over the whole order.
  await database.prisma
    .$executeRaw`INSERT INTO "Membership" ("groupId", "contactId") SELECT ${group.id}, "id" FROM "Contact" WHERE "accountId" = ${account.id} AND "mobile" LIKE '%0'`
  if (database.kind === 'postgresql') await database.prisma.$executeRawUnsafe('ANALYZE "Membership"')
  await database.close()
  return {
    apiKey,
    groupId: group.id,
    adds: { big: { apiKey, groupId: bigGroup.group.id }, small: { apiKey: small.apiKey, groupId: smallGroup.group.id } },
  }
}

type Seeded = Awaited<ReturnType<typeof seed>>
/** A GraphQL answer's contactsConnection, the account's or a group's. */
type Connection = { contactsConnection: { totalCount: number; edges: unknown[] } }

async function measure(db: string, url: string, { apiKey, groupId, adds }: Seeded, writes = 0) {
  const service = await startMeasuredService(db, url, root)
  try {
    const n = (x: number) => x.toLocaleString('en')
    // One contact's other names change before each request: a contact that does not match the
    // common search, or one that does (its edit is inside the remembered page's window).
    const changeOf = (changed: ReturnType<typeof fakeContact>) => async (i: number) => {
      const res = await fetch(`${service.baseUrl}/api/contact/save`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          mobile: changed.mobile,
          first_name: changed.firstName,
          family_name: changed.familyName,
          other_names: `Changed ${i}`,
        }),
      })
      await res.text()
      if (res.status !== 200) throw new Error(`contact/save: ${res.status}`)
    }
    const changeOne = changeOf(fakeContact(20_000_000, 1))
    const matchAt = Array.from({ length: 100 }, (_, n) => n).find((n) =>
      fakeContact(20_000_000, n).firstName.toLowerCase().includes(COMMON),
    )!
    const changeMatch = changeOf(fakeContact(20_000_000, matchAt))
    const pages = COUNT / 25
    const groupPages = COUNT / 250
    // The group's members (every tenth contact by mobile) that match a family name's search, "kama"
    // (a sixth of them; a twelfth of the account).
    let groupMatches = 0
    for (let i = 0; i < COUNT; i += 10) if (contactKeys(fakeContact(20_000_000, i)).searchText.includes(GROUP_TERM)) groupMatches++
    const cases = [
      { request: 'page 1', path: '/api/contacts?page=1', total: COUNT },
      { request: `page ${n(pages / 2)} (the middle)`, path: `/api/contacts?page=${pages / 2}`, total: COUNT },
      { request: `page ${n(pages)} (the last)`, path: `/api/contacts?page=${pages}`, total: COUNT },
      { request: `search "${RARE}" (1%), page 1`, path: `/api/contacts?search=${RARE}`, total: COUNT / 100 },
      { request: `search "${COMMON}" (5%), page 1`, path: `/api/contacts?search=${COMMON}`, total: COUNT / 20 },
      // A search is remembered, and follows the changes to the account's contacts
      // (remembered-searches.ts): here one contact's other names change before each request.
      {
        request: `search "${COMMON}" (5%), page 1, after a change`,
        path: `/api/contacts?search=${COMMON}`,
        total: COUNT / 20,
        before: changeOne,
      },
      {
        request: `search "${COMMON}" (5%), page 1, after a change of a match`,
        path: `/api/contacts?search=${COMMON}`,
        total: COUNT / 20,
        before: changeMatch,
      },
      // The Relay connection's search: a bounded page, and its totalCount, remembered as the pages' totals are.
      {
        request: `GraphQL contactsConnection "${COMMON}", first 25 and totalCount`,
        path: '/graphql',
        total: COUNT / 20,
        query: CONNECTION,
      },
      {
        request: `GraphQL contactsConnection "${COMMON}", first 25 and totalCount, after a change`,
        path: '/graphql',
        total: COUNT / 20,
        query: CONNECTION,
        before: changeOne,
      },
      { request: `group of ${n(COUNT / 10)}, page 1`, path: `/api/contact/group/${groupId}/contacts?page=1`, total: COUNT / 10 },
      {
        request: `group of ${n(COUNT / 10)}, page ${n(groupPages / 2)} (the middle)`,
        path: `/api/contact/group/${groupId}/contacts?page=${groupPages / 2}`,
        total: COUNT / 10,
      },
      {
        request: `group of ${n(COUNT / 10)}, page ${n(groupPages)} (the last)`,
        path: `/api/contact/group/${groupId}/contacts?page=${groupPages}`,
        total: COUNT / 10,
      },
      // A group's search is remembered too, but not followed: after any change of the account's
      // contacts or the group's members it runs in full.
      {
        request: `group of ${n(COUNT / 10)}, search "${GROUP_TERM}" (${n(groupMatches)}), page 1`,
        path: `/api/contact/group/${groupId}/contacts?search=${GROUP_TERM}`,
        total: groupMatches,
      },
      {
        request: `group of ${n(COUNT / 10)}, search "${GROUP_TERM}" (${n(groupMatches)}), page 1, after a change (in full)`,
        path: `/api/contact/group/${groupId}/contacts?search=${GROUP_TERM}`,
        total: groupMatches,
        before: changeOne,
      },
      // The same search in the group's Relay connection: its two bounded tries (contact-search-page.ts).
      {
        request: `group of ${n(COUNT / 10)}, GraphQL contactsConnection "${GROUP_TERM}", first 25 and totalCount, after a change (in full)`,
        path: '/graphql',
        total: groupMatches,
        query: `query { group(id: "${groupId}") { contactsConnection(search: "${GROUP_TERM}", first: 25) { totalCount edges { node { id firstName } } } } }`,
        before: changeOne,
      },
      // Every order of the GraphQL lists (contact-orders.ts; NAME_ASC is the default's own path).
      ...CONTACT_ORDERS.flatMap((orderBy) => [
        ...[1, pages / 2, pages].map((page) => ({
          request: `GraphQL contacts ${orderBy}, page ${n(page)}`,
          path: '/graphql',
          total: COUNT,
          query: `query { contacts(page: ${page}, perPage: 25, orderBy: ${orderBy}) { pageInfo { total } nodes { id firstName mobile } } }`,
        })),
        {
          request: `GraphQL contactsConnection ${orderBy}, first 25 and totalCount`,
          path: '/graphql',
          total: COUNT,
          query: `query { contactsConnection(first: 25, orderBy: ${orderBy}) { totalCount edges { node { id firstName mobile } } } }`,
        },
      ]),
    ]
    const send = (c: { path: string; query?: string }) =>
      fetch(`${service.baseUrl}${c.path}`, {
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        ...(c.query ? { method: 'POST', body: JSON.stringify({ query: c.query }) } : {}),
      })
    // The service warm before the first case, as the shared harness measures it (two requests of
    // each cell, then rounds over every cell for up to 90 s): otherwise page 1, the first case, is
    // measured while V8 still compiles the request path (on a slow machine 6.9 ms against 4.5 warm,
    // the first 20 requests of a process against its 300th to 400th, at 10,000 contacts as at a
    // million). Only the cases that write nothing, round after round.
    const warm = cases.filter((c) => !c.before)
    const warmStarted = performance.now()
    for (let round = 0; round < WARM_ROUNDS; round++)
      for (const c of warm) {
        const res = await send(c)
        const text = await res.text()
        if (res.status !== 200)
          throw new Error(`${c.path}: ${res.status} while warming: ${text.slice(0, 500)}\nthe service's log:\n${service.warnings()}`)
      }
    console.log(
      `${db}: ${WARM_ROUNDS} rounds of ${warm.length} requests to warm the service, ${((performance.now() - warmStarted) / 1000).toFixed(1)} s`,
    )
    for (const c of cases) {
      const times: number[] = []
      for (let i = 0; i < SAMPLES + 3; i++) {
        await c.before?.(i)
        const started = performance.now()
        const res = await send(c)
        const json = (await res.json()) as {
          meta?: { total: number }
          data?: unknown[] | (Partial<Connection> & { group?: Connection; contacts?: { pageInfo: { total: number }; nodes: unknown[] } })
        }
        if (i >= 3) times.push(performance.now() - started)
        const connection = Array.isArray(json.data) ? undefined : (json.data?.contactsConnection ?? json.data?.group?.contactsConnection)
        const pageOf = Array.isArray(json.data) ? undefined : json.data?.contacts
        const [total, rows] = Array.isArray(json.data)
          ? [json.meta?.total, json.data.length]
          : pageOf
            ? [pageOf.pageInfo.total, pageOf.nodes.length]
            : [connection?.totalCount, connection?.edges.length]
        if (res.status !== 200 || total !== c.total || rows !== 25) {
          throw new Error(
            `${c.path}: ${res.status}, total ${total} (expected ${c.total}), ${rows} rows: ${JSON.stringify(json).slice(0, 500)}\nthe service's log:\n${service.warnings()}`,
          )
        }
      }
      times.sort((a, b) => a - b)
      const row = {
        db,
        request: c.request,
        median: times[times.length >> 1]!,
        p90: times[Math.floor(times.length * 0.9)]!,
        total: c.total,
        load: os.loadavg()[0]!.toFixed(2),
      }
      rows.push(row)
      // Each figure as it is measured too: a run cut short (a loaded machine) keeps what it measured.
      console.log(`${db} | ${row.request} | ${row.median.toFixed(1)} | ${row.p90.toFixed(1)} | load ${row.load}`)
    }
    // add-contacts of 10,000 new contacts: into this account, and into one of 10,000, alternated.
    const times = { big: [] as number[], small: [] as number[] }
    for (let i = 0; i < writes; i++) {
      for (const which of i % 2 ? (['small', 'big'] as const) : (['big', 'small'] as const)) {
        const { apiKey: key, groupId: group } = adds[which]
        const contacts = Array.from({ length: 10_000 }, (_, k) => ({
          mobile: `+2547${60_000_000 + i * 10_000 + k}`,
          first_name: `Added ${k}`,
        }))
        const started = performance.now()
        const res = await fetch(`${service.baseUrl}/api/contact/group/${group}/add-contacts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ contacts }),
        })
        await res.text()
        if (res.status !== 200) throw new Error(`add-contacts (${which}): ${res.status}`)
        times[which].push(performance.now() - started)
      }
    }
    if (writes) {
      const [big, small] = [median(times.big), median(times.small)]
      addRows.push({ db, big, small, load: os.loadavg()[0]!.toFixed(2) })
    }
  } finally {
    await service.stop()
  }
}
const addRows: { db: string; big: number; small: number; load: string }[] = []

console.log(`contacts-deep-page: ${COUNT.toLocaleString('en')} contacts, median of ${SAMPLES}, ${os.cpus().length} CPUs; ${uptime()}`)
const dir = mkdtempSync(join(os.tmpdir(), 'gateway-deep-page-'))
const schema = `deep_page_${process.pid}_${Date.now()}`
const pgUrl = new URL(PG_URL)
pgUrl.searchParams.set('schema', schema)
let pgUsed = false
try {
  if (TARGETS.includes('sqlite')) {
    const sqliteUrl = `file:${join(dir, 'deep.db')}`
    const lite = await seed(sqliteUrl)
    console.log(`SQLite seeded; ${uptime()}`)
    await measure('SQLite', sqliteUrl, lite, WRITES)
  }
  if (TARGETS.includes('postgresql'))
    try {
      const probe = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 })
      await probe.connect()
      await probe.end()
      pgUsed = true
    } catch (error) {
      console.log(`PostgreSQL at ${PG_URL} is unreachable (${(error as Error).message}): PostgreSQL skipped`)
    }
  if (pgUsed) {
    const pgSeed = await seed(pgUrl.toString())
    console.log(`PostgreSQL seeded; ${uptime()}`)
    if (PG_AS_SEEDED) await measure('PostgreSQL, no VACUUM yet', pgUrl.toString(), pgSeed)
    const client = new pg.Client({ connectionString: PG_URL })
    await client.connect()
    await client.query(`VACUUM ANALYZE "${schema}"."Contact", "${schema}"."Membership"`)
    await client.end()
    await measure('PostgreSQL, after VACUUM', pgUrl.toString(), pgSeed, WRITES)
  }
} finally {
  if (pgUsed) {
    const client = new pg.Client({ connectionString: PG_URL })
    await client.connect()
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await client.end()
  }
  rmSync(dir, { recursive: true, force: true })
}

console.log('\n| database | request | median ms | p90 ms | total | load (1 min) |')
console.log('|---|---|---:|---:|---:|---:|')
for (const r of rows) console.log(`| ${r.db} | ${r.request} | ${r.median.toFixed(1)} | ${r.p90.toFixed(1)} | ${r.total} | ${r.load} |`)
console.log(`\n${uptime()}`)
console.log('targets (issue 8): page 1 <= 8 ms, search <= 25 ms, the last page on PostgreSQL <= 30 ms')
if (addRows.length) {
  console.log(`\nadd-contacts of 10,000 new contacts, median of ${WRITES} (issue 19: the big account at most 1.5x the small)`)
  console.log(`| database | into ${COUNT.toLocaleString('en')} ms | into 10,000 ms | ratio | load (1 min) |`)
  console.log('|---|---:|---:|---:|---:|')
  for (const a of addRows)
    console.log(`| ${a.db} | ${a.big.toFixed(0)} | ${a.small.toFixed(0)} | ${(a.big / a.small).toFixed(2)}x | ${a.load} |`)
}
