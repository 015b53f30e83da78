// npm run bench -- memory: the service's resident memory, started as `npm start` starts it, through
// the phases of the shared side-by-side harness: idle after start; the account grown to 10,000
// contacts by add-contacts (1,000 then 9,000 new); the throughput phase (the peak reset before it):
// REST page 7, GraphQL page 7 and now playing (the sample channel's cached status) with autocannon,
// 10 connections, a warm-up of each then rounds forward and backward; the add-contacts phase (the
// peak reset before it): 1,000 and 10,000 existing contacts into new groups, then 10,000 new ones a
// request until the account holds 100,000. Prints VmRSS and VmHWM (peak) from /proc with the load
// average after each step. MEMORY_SECONDS (10): length of each load run; MEMORY_WARMUP (3): of each
// warm-up; MEMORY_ROUNDS (2); BENCH_DATABASE_URL: PostgreSQL (a fresh schema, dropped after) instead
// of a fresh SQLite file; MEMORY_START=tsx: the service under tsx (`node --import tsx
// src/process/server.ts`) instead, to compare.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import pg from 'pg'
import { applyMigrations } from '../src/db/migrate.js'
import { openDatabase } from '../src/db/client.js'
import { parseEnv } from '../src/core/env.js'
import { createDeps } from '../src/deps.js'
import { createAccount } from '../src/accounts/create-account.js'
import { importChannel } from '../src/channel/import-channel.js'
import { benchServiceEnv, serviceCommand, startChild, type Child } from './peers/processes.js'

const SECONDS = Number(process.env.MEMORY_SECONDS ?? 10)
const WARMUP = Number(process.env.MEMORY_WARMUP ?? 3)
const ROUNDS = Number(process.env.MEMORY_ROUNDS ?? 2)
const root = fileURLToPath(new URL('..', import.meta.url))
const QUERY = `query { contacts(page: 7, perPage: 25) { nodes { id uuid firstName familyName otherNames mobile email organization gender } pageInfo { search total skipped perPage page pageCount } } }`
const loadText = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')

const dir = mkdtempSync(join(os.tmpdir(), 'gateway-memory-'))
const pgBase = process.env.BENCH_DATABASE_URL
const pgSchema = `memory_${process.pid}_${Date.now()}`
let url = `file:${join(dir, 'memory.db')}`
if (pgBase) {
  const u = new URL(pgBase)
  u.searchParams.set('schema', pgSchema)
  url = u.toString()
}

// The harness's contacts: Kenyan mobiles from a base, an email on every other one, an organization
// on every third.
const FIRST = ['Amina', 'Brian', 'Chebet', 'David', 'Esther', 'Faith', 'George', 'Halima', 'Ian', 'Joy']
const FAMILY = ['Achieng', 'Barasa', 'Cheruiyot', 'Kamau', 'Mwangi', 'Njoroge', 'Odhiambo', 'Wafula']
const contact = (n: number) => ({
  mobile: `+2547${10_000_000 + n}`,
  first_name: FIRST[n % FIRST.length]!,
  family_name: FAMILY[Math.floor(n / FIRST.length) % FAMILY.length]!,
  ...(n % 2 ? { email: `${FIRST[n % FIRST.length]!.toLowerCase()}.${n}@example.com` } : {}),
  ...(n % 3 === 0 ? { organization: `Org ${n % 97}` } : {}),
})
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => contact(from + i))

function report(service: Child, step: string, extra = '') {
  const { peakMiB, rssMiB } = service.memory()
  console.log(
    `${step.padEnd(44)} VmRSS ${rssMiB.toFixed(1).padStart(6)} MiB  VmHWM ${peakMiB.toFixed(1).padStart(6)} MiB  load ${loadText()}${extra}`,
  )
}
/** A write of 5 to clear_refs resets VmHWM to the current RSS, as the harness does before a phase. */
const resetPeak = (service: Child) => writeFileSync(`/proc/${service.pid}/clear_refs`, '5')

let service: Child | null = null
try {
  await applyMigrations(url)
  const database = await openDatabase(url)
  const deps = createDeps(database, parseEnv({ DATABASE_URL: url, LOG_LEVEL: 'silent' }))
  const { apiKey } = await createAccount(deps, { name: 'Memory' })
  const channel = await importChannel(deps, readFileSync(join(root, 'docs/channel-sample.json'), 'utf8'))
  await database.close()

  const tsx = process.env.MEMORY_START === 'tsx'
  console.log(
    `memory: ${pgBase ? 'PostgreSQL' : 'SQLite'}, service ${tsx ? 'under tsx' : 'as npm start runs it'}, ${ROUNDS} rounds of ${SECONDS} s runs, ${os.cpus().length} CPUs`,
  )
  service = await startChild(
    'service',
    (port, start = tsx ? { args: ['--import', 'tsx', 'src/process/server.ts'], env: {} } : serviceCommand(root)) => ({
      args: start.args,
      env: benchServiceEnv(start, url, port),
    }),
    root,
  )
  await new Promise((r) => setTimeout(r, 1000))
  report(service, 'idle after start')

  const headers = { authorization: `Bearer ${apiKey}` }
  const newGroup = async (name: string) => {
    const res = await fetch(`${service!.baseUrl}/api/contact/group/create`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    })
    return ((await res.json()) as { reference: string }).reference
  }
  const add = async (group: string, step: string, body: unknown[]) => {
    const started = performance.now()
    const res = await fetch(`${service!.baseUrl}/api/contact/group/${group}/add-contacts`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ contacts: body }),
    })
    const text = await res.text()
    if (res.status !== 200) throw new Error(`add-contacts: ${res.status} ${text.slice(0, 300)}`)
    report(service!, step, `  ${Math.round(performance.now() - started)} ms`)
  }

  // The harness grows its account to 10,000 contacts before the throughput phase.
  const seed = await newGroup('Seed')
  await add(seed, 'add 1,000 new contacts', range(0, 1000))
  await add(seed, 'add 9,000 new contacts', range(1000, 10_000))

  const targets: [string, autocannon.Options][] = [
    ['GET /api/contacts?page=7', { url: `${service.baseUrl}/api/contacts?page=7`, headers }],
    [
      'POST /graphql (page 7)',
      {
        url: `${service.baseUrl}/graphql`,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ query: QUERY }),
      },
    ],
    ['GET now playing', { url: `${service.baseUrl}/api/channels/${channel.id}/status` }],
  ]
  const cannon = async (name: string, options: autocannon.Options, duration: number) => {
    const result = await autocannon({ connections: 10, duration, ...options })
    if (result.errors || result.non2xx) throw new Error(`${name}: ${result.errors} errors, ${result.non2xx} non-2xx`)
    return result
  }
  resetPeak(service)
  for (const [name, options] of targets) await cannon(name, options, WARMUP)
  report(service, `throughput phase: after the warm-ups`)
  for (let round = 1; round <= ROUNDS; round++)
    for (const [name, options] of round % 2 ? targets : [...targets].reverse()) {
      const result = await cannon(name, options, SECONDS)
      report(service, `  ${name} (round ${round})`, `  ${Math.round(result.requests.average)} req/s`)
    }
  report(service, 'THROUGHPUT PHASE (peak since reset)')

  resetPeak(service)
  await add(await newGroup('Existing 1000'), 'add 1,000 existing to a new group', range(0, 1000))
  await add(await newGroup('Existing 10000'), 'add 10,000 existing to a new group', range(0, 10_000))
  for (let size = 10_000; size < 100_000; size += 10_000)
    await add(seed, `add 10,000 new (${size / 1000}k -> ${size / 1000 + 10}k)`, range(size, size + 10_000))
  report(service, 'ADD-CONTACTS PHASE (peak since reset)')
} finally {
  await service?.stop()
  if (pgBase) {
    const client = new pg.Client({ connectionString: pgBase })
    await client.connect()
    await client.query(`DROP SCHEMA IF EXISTS "${pgSchema}" CASCADE`)
    await client.end()
  }
  rmSync(dir, { recursive: true, force: true })
}
