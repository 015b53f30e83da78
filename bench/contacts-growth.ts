// npm run bench -- contacts-growth
// One account grown to GROWTH_CONTACTS (default 1,000,000) contacts through the REST API, 10,000 new
// contacts a request into one group, as the shared harness grows its account with BIG=1 (the same
// contacts: 20 first names, 17 family names, every other one with an email, every third with an
// organization). Prints the median request time from 10,000 to 100,000 contacts and from 100,000
// to the end, and their ratio (issue 19, goal 7: at most 1.5x), on SQLite (a fresh file), then on
// PostgreSQL at BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/test; a fresh
// schema, dropped after). In-process app over loopback HTTP. About 2 minutes on SQLite, 4 on
// PostgreSQL for a million.
import { loadavg } from 'node:os'
import { createAccount } from '../src/accounts/create-account.js'
import { createGroup } from '../src/messaging/groups.js'
import { median, postgresSchema, startBench } from './harness.js'

const TOP = Number(process.env.GROWTH_CONTACTS ?? 1_000_000)
if (!Number.isInteger(TOP) || TOP < 200_000 || TOP % 10_000) throw new Error('GROWTH_CONTACTS: a multiple of 10,000, at least 200,000')
const STEP = 10_000

const FIRST = [
  'Wanjiru',
  'Otieno',
  'Achieng',
  'Kamau',
  'Njeri',
  'Mwangi',
  'Akinyi',
  'Kiptoo',
  'Chebet',
  'Mutua',
  'Nyambura',
  'Omondi',
  'Wambui',
  'Kibet',
  'Atieno',
  'Njoroge',
  'Wairimu',
  'Odhiambo',
  'Jepkoech',
  'Muthoni',
]
const FAMILY = [
  'Kariuki',
  'Ochieng',
  'Maina',
  'Kiprono',
  'Wafula',
  'Onyango',
  'Ndungu',
  'Cheruiyot',
  'Barasa',
  'Kimani',
  'Owino',
  'Gitau',
  'Rotich',
  'Nyongesa',
  'Macharia',
  'Koech',
  'Mugo',
]
/** The shared harness's contact n (bench-peers/driver.mjs). */
const contact = (n: number) => ({
  mobile: `+2547${10_000_000 + n}`,
  first_name: FIRST[n % FIRST.length],
  family_name: FAMILY[Math.floor(n / FIRST.length) % FAMILY.length],
  ...(n % 2 ? { email: `${FIRST[n % FIRST.length]!.toLowerCase()}.${n}@example.com` } : {}),
  ...(n % 3 === 0 ? { organization: `Org ${n % 97}` } : {}),
})

const load = () => loadavg()[0]!.toFixed(2)

async function grow(label: string, databaseUrl: string | null) {
  const bench = await startBench({}, {}, databaseUrl)
  try {
    const app = await createAccount(bench.deps, { name: 'Growth' })
    const group = (await createGroup(bench.deps, app.account.id, { name: 'Seed' })).group.id
    const loadAtStart = load()
    const started = performance.now()
    const ms: number[] = []
    for (let n = 0; n < TOP; n += STEP) {
      const contacts = Array.from({ length: STEP }, (_, i) => contact(n + i))
      const t = performance.now()
      const res = await fetch(`${bench.baseUrl}/api/contact/group/${group}/add-contacts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${app.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ contacts }),
      })
      await res.arrayBuffer()
      if (res.status !== 200) throw new Error(`add-contacts answered ${res.status}`)
      ms.push(performance.now() - t)
      if ((n + STEP) % 100_000 === 0)
        console.log(`${label}: ${(n + STEP) / 1000}k, last request ${ms.at(-1)!.toFixed(0)} ms, load ${load()}`)
    }
    // The harness's two rows: the requests that took the account from 10k to 100k, and from 100k on.
    const small = median(ms.slice(1, 10))
    const big = median(ms.slice(10))
    return { label, small, big, ratio: big / small, minutes: (performance.now() - started) / 60_000, load: `${loadAtStart} → ${load()}` }
  } finally {
    await bench.close()
  }
}

const rows = [await grow('SQLite', null)]
const pg = await postgresSchema()
if (pg) {
  try {
    rows.push(await grow('PostgreSQL', pg.url))
  } finally {
    await pg.drop()
  }
}
console.log(
  `\nadd-contacts of ${STEP.toLocaleString('en')} new contacts into one growing account, median request time (issue 19: at most 1.5x)`,
)
console.log(`| database | 10k → 100k | 100k → ${TOP / 1000}k | ratio | minutes | load (start → end) |`)
console.log('|---|---:|---:|---:|---:|---|')
for (const r of rows)
  console.log(
    `| ${r.label} | ${r.small.toFixed(0)} ms | ${r.big.toFixed(0)} ms | ${r.ratio.toFixed(2)}x | ${r.minutes.toFixed(1)} | ${r.load} |`,
  )
