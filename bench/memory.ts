// npm run bench -- memory: the service's resident memory, started as `npm start` starts it, at each
// step of the peers benchmark's load: idle after start, after the page-7 load (REST and GraphQL,
// autocannon, 10 connections), after one add-contacts of 10,000 existing contacts, then (peak
// reset) after each of three add-contacts of 10,000 new ones, as in the shared harness. Prints VmRSS and
// VmHWM (peak) from /proc with the load average. MEMORY_SECONDS (5): length of each load run;
// BENCH_DATABASE_URL: PostgreSQL (a fresh schema, dropped after) instead of a fresh SQLite file;
// MEMORY_START=tsx: the service under tsx (`node --import tsx src/process/server.ts`) instead, to compare.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
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
import { benchServiceEnv, serviceCommand, startChild, type Child } from './peers/processes.js'
import { fakeContact, seedContacts } from './peers/seed.js'

const SECONDS = Number(process.env.MEMORY_SECONDS ?? 5)
const root = fileURLToPath(new URL('..', import.meta.url))
const QUERY = `query { contacts(page: 7, perPage: 25) { nodes { id firstName familyName otherNames mobile email organization gender } pageInfo { search total skipped perPage page pageCount } } }`
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

function report(service: Child, step: string, extra = '') {
  const { peakMiB, rssMiB } = service.memory()
  console.log(
    `${step.padEnd(34)} VmRSS ${rssMiB.toFixed(1).padStart(6)} MiB  VmHWM ${peakMiB.toFixed(1).padStart(6)} MiB  load ${loadText()}${extra}`,
  )
}

let service: Child | null = null
try {
  await applyMigrations(url)
  const database = await openDatabase(url)
  const deps = createDeps(database, parseEnv({ DATABASE_URL: url, LOG_LEVEL: 'silent' }))
  const { account, apiKey } = await createAccount(deps, { name: 'Memory 10k' })
  await database.close()
  await seedContacts(url, account.id, 10_000_000, 10_000)

  const tsx = process.env.MEMORY_START === 'tsx'
  console.log(
    `memory: ${pgBase ? 'PostgreSQL' : 'SQLite'}, service ${tsx ? 'under tsx' : 'as npm start runs it'}, ${SECONDS} s runs, ${os.cpus().length} CPUs`,
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
  const runs: [string, autocannon.Options][] = [
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
  ]
  for (const [name, options] of runs) {
    const result = await autocannon({ connections: 10, duration: SECONDS, ...options })
    if (result.errors || result.non2xx) throw new Error(`${name}: ${result.errors} errors, ${result.non2xx} non-2xx`)
    report(service, `after ${name}`, `  ${Math.round(result.requests.average)} req/s`)
  }

  const group = await fetch(`${service.baseUrl}/api/contact/group/create`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Memory' }),
  })
  const { reference } = (await group.json()) as { reference: string }
  /** 10,000 contacts in the legacy body's fields, from fakeContact's numbering at `base`. */
  const legacyContacts = (base: number) =>
    Array.from({ length: 10_000 }, (_, n) => {
      const c = fakeContact(base, n)
      return { mobile: c.mobile, first_name: c.firstName, family_name: c.familyName }
    })
  const add = async (step: string, body: unknown[]) => {
    const started = performance.now()
    const res = await fetch(`${service!.baseUrl}/api/contact/group/${reference}/add-contacts`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ contacts: body }),
    })
    const text = await res.text()
    if (res.status !== 200) throw new Error(`add-contacts: ${res.status} ${text.slice(0, 300)}`)
    report(service!, step, `  ${Math.round(performance.now() - started)} ms`)
  }
  await add('after add-contacts (10,000)', legacyContacts(10_000_000))
  // As the shared harness's add-contacts phase goes on: 10,000 new contacts a request, three times,
  // the peak reset before them (a write of 5 to clear_refs resets VmHWM to the current RSS).
  writeFileSync(`/proc/${service.pid}/clear_refs`, '5')
  for (let i = 1; i <= 3; i++) await add(`after add-contacts (10,000 new, ${i})`, legacyContacts(20_000_000 + i * 10_000))
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
