// npm run bench -- graphql-attacks
// The GraphQL attacks of issue 7 against the real server (src/process/server.ts in a child process, so the
// attacking clients do not share its event loop):
// 1. time to refuse each attack (median of N sequential requests);
// 2. /healthz latency (p50, p99, max) alone, then while 10 clients send attacks in a loop;
// 3. the heaviest legitimate page (100 contacts with their groups), and the server's RSS growth.
import { spawn } from 'node:child_process'
import { request as httpRequest } from 'node:http'
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { createAccount } from '../src/accounts/create-account.js'
import { createGroup } from '../src/messaging/groups.js'
import { parseContacts } from '../src/messaging/contacts.js'
import { upsertContacts } from '../src/messaging/upsert-contacts.js'
import { startBench } from './harness.js'

const N = Number(process.env.BENCH_ROUNDS ?? 20)
const bench = await startBench()
const { deps } = bench
const { account, apiKey } = await createAccount(deps, { name: 'Bench' })
const groups = [await createGroup(deps, account.id, { name: 'Alpha' }), await createGroup(deps, account.id, { name: 'Beta' })]
const inputs = Array.from({ length: 200 }, (_, i) => ({
  mobile: `+2547${String(10_000_000 + i)}`,
  firstName: `Name${String(i).padStart(4, '0')}`,
}))
for (const { group } of groups) await upsertContacts(deps, account.id, parseContacts(inputs, 'KE'), group.id)

const server = spawn(process.execPath, ['--import', 'tsx', 'src/process/server.ts'], {
  env: {
    ...process.env,
    DATABASE_URL: deps.env.DATABASE_URL,
    PORT: '0',
    LOG_LEVEL: 'info',
    WORKER_ENABLED: 'false',
    RATE_LIMIT_PER_SECOND: '0',
    RATE_LIMIT_ANONYMOUS_PER_SECOND: '0',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
})
let out = ''
server.stdout!.on('data', (d) => (out = (out + d).slice(-100_000)))
while (!out.includes('"msg":"listening"')) await new Promise((r) => setTimeout(r, 100))
const base: string = JSON.parse(out.split('\n').find((l) => l.includes('"msg":"listening"'))!).url

interface Attack {
  name: string
  method?: string
  path?: string
  body?: Buffer
  chunked?: boolean
  key?: boolean
  status: number
}
const q = (query: string) => Buffer.from(JSON.stringify({ query }))
const nested =
  '{ contacts(perPage:100) { nodes { groups { contacts(perPage:100) { nodes { groups { contacts(perPage:100) { nodes { id } } } } } } } } }'
const attacks: Attack[] = [
  { name: 'argument x16,000 (160 KB)', body: q(`{ contacts(${'perPage:1 '.repeat(16_000)}) { nodes { id } } }`), status: 400 },
  { name: 'argument x100,000 (1 MB)', body: q(`{ contacts(${'perPage:1 '.repeat(100_000)}) { nodes { id } } }`), status: 400 },
  { name: 'argument x3,000 in 30 KB (tokens)', body: q(`{ contacts(${'perPage:1,'.repeat(3000)}) { nodes { id } } }`), status: 400 },
  { name: '3,000 levels of nesting', body: q(`{ contacts ${'{nodes'.repeat(3000)}${'}'.repeat(3001)}`), status: 400 },
  { name: 'nested pages of 100, no key', body: q(nested), status: 400 },
  { name: 'nested pages of 100, with key', body: q(nested), key: true, status: 400 },
  {
    name: 'alias bomb (200 pages of 100)',
    body: q(`{ ${Array.from({ length: 200 }, (_, i) => `a${i}: contacts(perPage: 100) { nodes { id } }`).join(' ')} }`),
    key: true,
    status: 400,
  },
  { name: 'field repeated 1,000 times', body: q(`{ contacts(perPage: 100) { nodes { ${'id '.repeat(1000)}} } }`), key: true, status: 400 },
  {
    name: 'fragment fan-out 2^30',
    body: q(
      `query { ...F0 } ${Array.from({ length: 30 }, (_, i) => `fragment F${i} on Query { ${i < 29 ? `...F${i + 1} ... on Query { ...F${i + 1} }` : 'contacts(perPage: 100) { nodes { id } }'} }`).join(' ')}`,
    ),
    key: true,
    status: 400,
  },
  { name: '6 MiB body with Content-Length', body: Buffer.alloc(6 * 1024 * 1024, 'a'), status: 413 },
  { name: '6 MiB body, chunked', body: Buffer.alloc(6 * 1024 * 1024, 'a'), chunked: true, status: 413 },
  { name: 'GET with a 30 KB query string', method: 'GET', path: `/graphql?query=${'x'.repeat(30_000)}`, status: 431 },
]

function send(a: Pick<Attack, 'method' | 'path' | 'body' | 'chunked' | 'key'>): Promise<{ status: number; ms: number }> {
  const started = performance.now()
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
  if (a.key) headers.authorization = `Bearer ${apiKey}`
  if (a.body && !a.chunked) headers['content-length'] = String(a.body.length)
  return new Promise((resolve) => {
    const req = httpRequest(new URL(a.path ?? '/graphql', base), { method: a.method ?? 'POST', headers, agent: false }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode!, ms: performance.now() - started }))
    })
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started }))
    if (a.body && a.chunked) for (let i = 0; i < a.body.length; i += 65_536) req.write(a.body.subarray(i, i + 65_536))
    else if (a.body) req.write(a.body)
    req.end()
  })
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!
const rss = () => Number(readFileSync(`/proc/${server.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)![1]) * 1024
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)

const legit: Attack = {
  name: 'legitimate: 100 contacts with groups',
  body: q('{ contacts(perPage: 100) { nodes { id mobile firstName groups { id name } } pageInfo { total } } }'),
  key: true,
  status: 200,
}
for (let i = 0; i < 5; i++) await send(legit)
const rssBefore = rss()

console.log(
  `load average before: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
)
console.log(`| request | status | median ms | max ms (of ${N}) |`)
console.log('|---|---:|---:|---:|')
for (const a of [...attacks, legit]) {
  const times: number[] = []
  let status = 0
  for (let i = 0; i < N; i++) {
    const r = await send(a)
    status = r.status
    if (status !== a.status) throw new Error(`${a.name}: expected ${a.status}, got ${status}`)
    times.push(r.ms)
  }
  console.log(`| ${a.name} | ${status} | ${percentile(times, 50).toFixed(1)} | ${Math.max(...times).toFixed(1)} |`)
}

async function probeHealth(ms: number) {
  const latencies: number[] = []
  const until = Date.now() + ms
  while (Date.now() < until) {
    latencies.push((await send({ method: 'GET', path: '/healthz' })).ms)
    await new Promise((r) => setTimeout(r, 20))
  }
  return latencies
}
const line = (name: string, l: number[]) =>
  console.log(
    `| ${name} | ${l.length} | ${percentile(l, 50).toFixed(1)} | ${percentile(l, 99).toFixed(1)} | ${Math.max(...l).toFixed(1)} |`,
  )

console.log('\n| /healthz | probes | p50 ms | p99 ms | max ms |')
console.log('|---|---:|---:|---:|---:|')
line('idle', await probeHealth(5_000))
let stop = false
let sent = 0
const clients = Array.from({ length: 10 }, async (_, c) => {
  for (let i = c; !stop; i++) {
    await send(attacks[i % attacks.length]!)
    sent++
  }
})
line('10 clients sending attacks', await probeHealth(15_000))
stop = true
await Promise.all(clients)
const rssPeak = rss()
await new Promise((r) => setTimeout(r, 5_000))
console.log(
  `\nattacks sent during the probe: ${sent}; server RSS ${mib(rssBefore)} MiB before, ${mib(rssPeak)} MiB at the end of the attacks, ${mib(rss())} MiB 5 s later`,
)
console.log(
  `load average after: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
)

server.kill('SIGTERM')
await new Promise((r) => server.once('exit', r))
await bench.close()
