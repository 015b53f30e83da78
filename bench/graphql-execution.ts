// npm run bench -- graphql-execution
// CPU per /graphql request of a contacts page (25 rows selecting `id`, as bench/peers.ts and the
// external side-by-side harness ask it), answered by two apps over one database in one process: queries compiled
// on reuse (the default) and GRAPHQL_COMPILED_EXECUTION=false (graphql-js). Requests go through
// app.fetch one at a time (no HTTP layer: only what the setting changes), in rounds A B … B A of
// GRAPHQL_EXECUTION_REQUESTS each; prints each round's CPU µs per request, the medians, their
// ratio and the load average. SQLite always, PostgreSQL at BENCH_DATABASE_URL when reachable.
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { applyMigrations } from '../src/db/migrate.js'
import { openDatabase } from '../src/db/client.js'
import { parseEnv } from '../src/core/env.js'
import { createDeps } from '../src/deps.js'
import { createApp, type App } from '../src/app.js'
import { createAccount } from '../src/accounts/create-account.js'
import { seedContacts } from './peers/seed.js'
import { median, postgresSchema } from './harness.js'

const REQUESTS = Number(process.env.GRAPHQL_EXECUTION_REQUESTS ?? 1000)
const ROUNDS = 8
const QUERY = `query { contacts(page: 7, perPage: 25) { nodes { id uuid firstName familyName otherNames mobile email organization gender } pageInfo { search total skipped perPage page pageCount } } }`
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ')

async function cpuPerRequest(app: App, key: string, n: number) {
  const body = JSON.stringify({ query: QUERY })
  const before = process.cpuUsage()
  for (let i = 0; i < n; i++) {
    const res = await app.fetch(
      new Request('http://bench/graphql', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body,
      }),
    )
    const text = await res.text()
    if (res.status !== 200 || !text.startsWith('{"data":{"contacts":{"nodes":[{'))
      throw new Error(`unexpected answer ${res.status}: ${text.slice(0, 200)}`)
  }
  const used = process.cpuUsage(before)
  return (used.user + used.system) / n
}

async function run(name: string, url: string) {
  await applyMigrations(url)
  const database = await openDatabase(url)
  const env = { DATABASE_URL: url, LOG_LEVEL: 'silent', RATE_LIMIT_PER_SECOND: '0' }
  const deps = createDeps(database, parseEnv(env))
  const { account, apiKey } = await createAccount(deps, { name: 'GraphQL execution' })
  await seedContacts(url, account.id, 10_000_000, 10_000)
  const apps = {
    compiled: createApp({ deps, ready: database.ready }),
    'graphql-js': createApp({ deps: { ...deps, env: parseEnv({ ...env, GRAPHQL_COMPILED_EXECUTION: 'false' }) }, ready: database.ready }),
  }
  const cpu: Record<keyof typeof apps, number[]> = { compiled: [], 'graphql-js': [] }
  const loadBefore = load()
  // Warm-up: both apps' first uses (the compiled one compiles), then the JIT of V8.
  for (let i = 0; i < 2; i++) for (const app of Object.values(apps)) await cpuPerRequest(app, apiKey, REQUESTS)
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (['compiled', 'graphql-js'] as const) : (['graphql-js', 'compiled'] as const)
    for (const which of order) cpu[which].push(await cpuPerRequest(apps[which], apiKey, REQUESTS))
  }
  console.log(`\n## ${name}: CPU per request, a 25-row contacts page of 10,000 (load ${loadBefore} → ${load()})`)
  for (const which of ['compiled', 'graphql-js'] as const)
    console.log(
      `  ${which.padEnd(10)} rounds ${cpu[which].map((x) => Math.round(x)).join(' ')} µs; median ${Math.round(median(cpu[which]))} µs`,
    )
  console.log(`  compiled / graphql-js: ${(median(cpu.compiled) / median(cpu['graphql-js'])).toFixed(2)}x`)
  await database.close()
}

const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-'))
await run('SQLite', `file:${join(dir, 'bench.db')}`)
rmSync(dir, { recursive: true, force: true })

const schema = await postgresSchema()
if (schema) {
  try {
    await run('PostgreSQL', schema.url)
  } finally {
    await schema.drop()
  }
}
