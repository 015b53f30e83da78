// npm run bench -- revocation: how soon a revoked key is refused by another instance that has it
// cached (API_KEY_CACHE_MS=30000, so only the pushed revocation can refuse it that soon). Two
// instances (two apps, each with its own pool and LISTEN connection) on one fresh PostgreSQL schema
// on BENCH_DATABASE_URL's server: a key is cached on B, revoked through A (revokeApiKey: the commit,
// then the event), and B is asked over HTTP every millisecond until it answers 401. The tests prove
// the push (a refusal long before the entry could expire); the figure, 1 s or less, is measured here.
//   REVOCATION_BENCH_KEYS=50 npm run bench -- revocation
import { loadavg } from 'node:os'
import { postgresSchema, startBench, type Bench } from './harness.js'
import { createAccount } from '../src/accounts/create-account.js'
import { revokeApiKey } from '../src/auth/api-keys.js'

const KEYS = Number(process.env.REVOCATION_BENCH_KEYS ?? 50)
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')

const schema = await postgresSchema()
if (!schema) process.exit(0)
const env = { API_KEY_CACHE_MS: '30000' }
const a = await startBench(env, {}, schema.url)
const b = await startBench(env, {}, schema.url)
await Promise.all([a.deps.events.ready(), b.deps.events.ready()])

/** B's (or A's) answer to a contacts page with `key`: its status, the body read and dropped. */
async function status(bench: Bench, key: string): Promise<number> {
  const response = await fetch(`${bench.baseUrl}/api/contacts`, { headers: { authorization: `Bearer ${key}` } })
  await response.arrayBuffer()
  return response.status
}

const loadBefore = load()
const delays: number[] = []
for (let i = 0; i < KEYS; i++) {
  const { apiKey } = await createAccount(a.deps, { name: `Revoked ${i}` })
  // Twice: the first answer verifies the key and caches it on B, the second is served from the cache.
  const cachedBefore = b.deps.apiKeyCache.size()
  for (let n = 0; n < 2; n++) if ((await status(b, apiKey)) !== 200) throw new Error('the key was not accepted on B')
  if (b.deps.apiKeyCache.size() <= cachedBefore) throw new Error('the key was not cached on B')
  const started = performance.now()
  await revokeApiKey(a.deps, apiKey.slice(0, 15))
  for (;;) {
    if ((await status(b, apiKey)) === 401) break
    if (performance.now() - started > 30_000) throw new Error('not refused before the cache entry expired')
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  delays.push(performance.now() - started)
}
await a.close()
await b.close()
await schema.drop()

delays.sort((x, y) => x - y)
const pick = (q: number) => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))]!.toFixed(1)
console.log(`${KEYS} keys, each cached on B and revoked through A (from revokeApiKey's start to B's first 401)`)
console.log(`| keys | min ms | p50 ms | p95 ms | max ms | target | load average before / after |`)
console.log(`|---:|---:|---:|---:|---:|---|---|`)
console.log(
  `| ${KEYS} | ${delays[0]!.toFixed(1)} | ${pick(0.5)} | ${pick(0.95)} | ${delays.at(-1)!.toFixed(1)} | 1,000 ms | ${loadBefore} / ${load()} |`,
)
process.exit(0)
