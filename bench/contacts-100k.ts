// npm run bench -- contacts-100k
// One account with 100,000 contacts; one client, sequential requests, median latency of:
//   REST substring searches (a common name, a rare mobile fragment, a 2-character term),
//   page 1, and the last page. BENCH_DATABASE_URL selects PostgreSQL (default: a fresh SQLite file).
// Targets (issue 8): search <= 25 ms on both databases, page 1 <= 8 ms, last page on PostgreSQL <= 30 ms.
import { loadavg } from 'node:os'
import { createAccount } from '../src/accounts/create-account.js'
import { contactKeys } from '../src/messaging/contacts.js'
import { timeOrderedId } from '../src/db/time-ordered-id.js'
import { startBench } from './harness.js'
import { listContacts } from '../src/messaging/contact-list.js'
import { pageRequest } from '../src/messaging/paging.js'

const TOTAL = 100_000
const FIRST = [
  'Wanjiru',
  'Otieno',
  'Achieng',
  'Kamau',
  'Njeri',
  'Mwangi',
  'Akinyi',
  'Kiprop',
  'Chebet',
  'Omondi',
  'Nafula',
  'Wekesa',
  'Atieno',
  'Kariuki',
  'Muthoni',
  'Odhiambo',
]
const FAMILY = [
  'Kimani',
  'Ochieng',
  'Mutua',
  'Njoroge',
  'Onyango',
  'Kiplagat',
  'Wambui',
  'Barasa',
  'Korir',
  'Nyambura',
  'Ruto',
  'Maina',
  'Owino',
  'Jepchirchir',
  'Waweru',
  'Gitau',
]
const ORGS = ['Acme Ltd', 'Safari Co', 'Jua Kali Works', 'Rift Valley Tea', 'Lake Basin Fish', null]

const bench = await startBench()
const { deps, baseUrl } = bench
const { account, apiKey } = await createAccount(deps, { name: 'Bench 100k' })
const auth = { authorization: `Bearer ${apiKey}` }

// A fixed pseudo-random sequence, so both databases hold the same rows.
let seed = 42
const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed)
// The low bits of this generator cycle quickly: pick with the high ones.
const pick = <T>(list: T[]) => list[(next() >>> 12) % list.length]!

const seedStart = performance.now()
for (let offset = 0; offset < TOTAL; offset += 1000) {
  const data = Array.from({ length: 1000 }, (_, i) => {
    const n = offset + i
    const firstName = `${pick(FIRST)}${n % 7 === 0 ? ' Grace' : ''}`
    const familyName = pick(FAMILY)
    const organization = pick(ORGS)
    const mobile = `+2547${String(10_000_000 + n)}`
    const email = n % 3 === 0 ? `${firstName.toLowerCase().replace(' ', '.')}.${n}@example.com` : null
    return {
      id: timeOrderedId(),
      accountId: account.id,
      mobile,
      firstName,
      familyName,
      organization,
      email,
      ...contactKeys({ firstName, familyName, mobile, email, organization }),
    }
  })
  await deps.db.contact.createMany({ data })
}
if (deps.dbKind === 'postgresql') await deps.db.$executeRawUnsafe('VACUUM ANALYZE "Contact"')
else await deps.db.$executeRawUnsafe('ANALYZE')
console.log(`seeded ${TOTAL.toLocaleString('en')} contacts in ${Math.round(performance.now() - seedStart)} ms (${deps.dbKind})`)

const REST_COLUMNS = ['id', 'firstName', 'familyName', 'otherNames', 'mobile', 'email', 'organization', 'gender'] as const

/** The list statement alone, through Prisma (no HTTP, GraphQL or key lookup): what this work changed. */
async function statementMedian(path: string, runs: number) {
  const params = new URL(path, 'http://x').searchParams
  const request = pageRequest({ page: Number(params.get('page') ?? 1), search: params.get('search') })
  const run = () => listContacts(deps, { accountId: account.id, request }, REST_COLUMNS)
  for (let i = 0; i < 3; i++) await run()
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    await run()
    times.push(performance.now() - started)
  }
  return times.sort((a, b) => a - b)[runs >> 1]!
}

async function median(name: string, path: string, runs = 31) {
  let total = -1
  for (let i = 0; i < 3; i++) await fetch(`${baseUrl}${path}`, { headers: auth }).then((r) => r.arrayBuffer())
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    const res = await fetch(`${baseUrl}${path}`, { headers: auth })
    const body = (await res.json()) as { meta?: { total: number } }
    times.push(performance.now() - started)
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`)
    total = body.meta!.total
  }
  times.sort((a, b) => a - b)
  return { name, path, median: times[runs >> 1]!, p90: times[Math.floor(runs * 0.9)]!, total, statement: 0 }
}

const lastPage = Math.ceil(TOTAL / 25)
const rows = [
  await median('page 1', '/api/contacts?page=1'),
  await median('last page', `/api/contacts?page=${lastPage}`),
  await median('search "grace" (common, 1 in 7)', '/api/contacts?search=grace'),
  await median('search "wanjiru kimani" (no match across a newline)', '/api/contacts?search=wanjiru%20kimani'),
  await median('search "710012345" (one mobile)', '/api/contacts?search=710012345'),
  await median('search "jepchirchir" (1 in 16)', '/api/contacts?search=jepchirchir'),
  await median('search "ki" (2 characters: a scan)', '/api/contacts?search=ki'),
  await median('search "ki" last page', `/api/contacts?search=ki&page=100`),
]
// The statement alone, after every HTTP run (a long pause between requests lets keep-alive sockets expire).
for (const r of rows) r.statement = await statementMedian(r.path, 31)
console.log(`\n${deps.dbKind}, ${TOTAL.toLocaleString('en')} contacts in one account, one client, REST, median of 31`)
console.log('| request | REST median ms | REST p90 ms | list statement median ms | total |')
console.log('|---|---:|---:|---:|---:|')
for (const r of rows) console.log(`| ${r.name} | ${r.median.toFixed(1)} | ${r.p90.toFixed(1)} | ${r.statement.toFixed(1)} | ${r.total} |`)
console.log(
  `load average: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
)
console.log('targets: search <= 25 ms (both databases), page 1 <= 8 ms, last page on PostgreSQL <= 30 ms')
await bench.close()
