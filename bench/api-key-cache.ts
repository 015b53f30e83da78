// The per-request cost of the API key cache on SQLite, with and without the revocation probe
// (PRAGMA data_version, then the revoked-key count when it moved; src/db/sqlite-statement-cache.ts),
// against an uncached lookup through Prisma. In process: authenticate() only, no HTTP.
import { loadavg } from 'node:os'
import { startBench } from './harness.js'
import { createAccount } from '../src/accounts/create-account.js'
import { authenticateApiKey } from '../src/auth/api-keys.js'
import { createApiKeyCache } from '../src/auth/api-key-cache.js'

const CALLS = 200_000
const bench = await startBench()
const { deps } = bench
const { apiKey } = await createAccount(deps, { name: 'Bench' })
const database = deps.db
// The probe the shipped cache uses on SQLite (none on PostgreSQL, where NOTIFY tells every instance).
const withProbe = createApiKeyCache({ db: database, events: deps.events, ttlMs: 30_000, revocations: bench.database.revocationProbe })
const without = createApiKeyCache({ db: database, events: deps.events, ttlMs: 30_000 })

async function microsPerCall(run: () => Promise<unknown>, calls: number) {
  for (let i = 0; i < 1000; i++) await run()
  const started = performance.now()
  for (let i = 0; i < calls; i++) await run()
  return ((performance.now() - started) / calls) * 1000
}

const before = loadavg()[0]!.toFixed(2)
const rows: string[][] = []
for (let round = 1; round <= 3; round++) {
  const plain = await microsPerCall(() => without.authenticate(apiKey), CALLS)
  const probed = await microsPerCall(() => withProbe.authenticate(apiKey), CALLS)
  rows.push([String(round), plain.toFixed(2), probed.toFixed(2), (probed / plain).toFixed(2)])
}
const lookup = await microsPerCall(() => authenticateApiKey(database, apiKey), 2000)
console.log(`API key cache on ${deps.dbKind}, ${CALLS} cached calls a round; load average ${before} -> ${loadavg()[0]!.toFixed(2)}`)
console.log('| round | cached, no probe (µs) | cached, with probe (µs) | ratio |')
console.log('|---|---:|---:|---:|')
for (const row of rows) console.log(`| ${row.join(' | ')} |`)
console.log(`uncached lookup through Prisma: ${lookup.toFixed(0)} µs`)
await bench.close()
