// The per-request cost of the API key cache on SQLite, with and without the revocation probe
// (PRAGMA data_version, then the revoked-key count when it moved; src/db/sqlite-statement-cache.ts).
// Then what the cache saves and what a miss costs, on SQLite and on PostgreSQL (a fresh schema on
// BENCH_DATABASE_URL, skipped when unreachable): an uncached lookup and a key's lastUsedAt write,
// directly (Database.directRead, the service's path) against through Prisma's runtime, in rounds
// A B B A, wall and CPU time a call. In process: authenticate() only, no HTTP.
import { loadavg } from 'node:os'
import { postgresSchema, startBench, type Bench } from './harness.js'
import { createAccount } from '../src/accounts/create-account.js'
import { authenticateApiKey } from '../src/auth/api-keys.js'
import { createApiKeyCache, LAST_USED_EVERY_MS } from '../src/auth/api-key-cache.js'

const CALLS = 200_000
const MISSES = 2000
const load = () => loadavg()[0]!.toFixed(2)

/** Wall and CPU (this process's user + system) µs a call, after `warm` calls (a tenth by default). */
async function timed(run: () => Promise<unknown>, calls: number, warm = calls / 10) {
  for (let i = 0; i < warm; i++) await run()
  const cpu = process.cpuUsage()
  const started = performance.now()
  for (let i = 0; i < calls; i++) await run()
  const wall = ((performance.now() - started) / calls) * 1000
  const used = process.cpuUsage(cpu)
  return { wall, cpu: (used.user + used.system) / calls }
}

async function cached(bench: Bench) {
  const { deps } = bench
  const { apiKey } = await createAccount(deps, { name: 'Bench' })
  // The probe the shipped cache uses on SQLite (none on PostgreSQL, where NOTIFY tells every instance).
  const withProbe = createApiKeyCache({ db: deps.db, events: deps.events, ttlMs: 30_000, revocations: bench.database.revocationProbe })
  const without = createApiKeyCache({ db: deps.db, events: deps.events, ttlMs: 30_000 })
  const before = load()
  const rows: string[][] = []
  for (let round = 1; round <= 3; round++) {
    const plain = (await timed(() => without.authenticate(apiKey), CALLS, 1000)).wall
    const probed = (await timed(() => withProbe.authenticate(apiKey), CALLS, 1000)).wall
    rows.push([String(round), plain.toFixed(2), probed.toFixed(2), (probed / plain).toFixed(2)])
  }
  console.log(`API key cache on ${deps.dbKind}, ${CALLS} cached calls a round; load average ${before} -> ${load()}`)
  console.log('| round | cached, no probe (µs) | cached, with probe (µs) | ratio |')
  console.log('|---|---:|---:|---:|')
  for (const row of rows) console.log(`| ${row.join(' | ')} |`)
}

async function misses(bench: Bench) {
  const { deps, database } = bench
  const { apiKey } = await createAccount(deps, { name: 'Bench' })
  const direct = { read: database.directRead!, kind: database.kind }
  // A cache that never keeps a key and a clock that moves a minute a call: every call is a lookup
  // and a lastUsedAt write, the write waited for (idle) so that it is counted in the call.
  let now = 0
  const clock = () => (now += LAST_USED_EVERY_MS)
  const lookupDirect = () => authenticateApiKey(deps.db, apiKey, direct.read)
  const lookupPrisma = () => authenticateApiKey(deps.db, apiKey)
  const writing = (cache: ReturnType<typeof createApiKeyCache>) => async () => {
    await cache.authenticate(apiKey)
    await cache.idle()
  }
  const useDirect = writing(createApiKeyCache({ db: deps.db, direct, events: deps.events, ttlMs: 0, now: clock }))
  const usePrisma = writing(createApiKeyCache({ db: deps.db, events: deps.events, ttlMs: 0, now: clock }))
  const before = load()
  const cells = {
    lookup: { direct: [] as number[][], prisma: [] as number[][] },
    use: { direct: [] as number[][], prisma: [] as number[][] },
  }
  for (const order of [
    ['direct', 'prisma'],
    ['prisma', 'direct'],
  ] as const)
    for (const how of order) {
      const lookup = await timed(how === 'direct' ? lookupDirect : lookupPrisma, MISSES)
      const use = await timed(how === 'direct' ? useDirect : usePrisma, MISSES)
      cells.lookup[how].push([lookup.wall, lookup.cpu])
      cells.use[how].push([use.wall, use.cpu])
    }
  const mean = (xs: number[][], i: number) => xs.reduce((sum, x) => sum + x[i]!, 0) / xs.length
  console.log(`\nA cache miss on ${deps.dbKind}, ${MISSES} calls a cell, rounds A B B A; load average ${before} -> ${load()}`)
  console.log('| call | directly: wall / CPU (µs) | through Prisma: wall / CPU (µs) | Prisma / directly, CPU |')
  console.log('|---|---:|---:|---:|')
  for (const [name, cell] of [
    ['key lookup (authenticateApiKey)', cells.lookup],
    ['lookup and lastUsedAt write (a miss a minute after the last write)', cells.use],
  ] as const)
    console.log(
      `| ${name} | ${mean(cell.direct, 0).toFixed(0)} / ${mean(cell.direct, 1).toFixed(0)} | ${mean(cell.prisma, 0).toFixed(0)} / ${mean(cell.prisma, 1).toFixed(0)} | ${(mean(cell.prisma, 1) / mean(cell.direct, 1)).toFixed(2)}x |`,
    )
}

const sqlite = await startBench({}, {}, null)
await cached(sqlite)
await misses(sqlite)
await sqlite.close()

const schema = await postgresSchema()
if (schema) {
  const postgres = await startBench({}, {}, schema.url)
  try {
    await misses(postgres)
  } finally {
    await postgres.close()
    await schema.drop()
  }
}
