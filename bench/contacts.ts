// npm run bench -- contacts
// 1. GET /api/contacts (a 25-contact page of 10,000) against the equivalent POST /graphql, side by side.
// 2. add-contacts with 5,000 new contacts in one request.
import { createAccount } from '../src/accounts/create-account.js'
import { createGroup } from '../src/messaging/groups.js'
import { parseContacts } from '../src/messaging/contacts.js'
import { upsertContacts } from '../src/messaging/upsert-contacts.js'
import { load, printTable, startBench } from './harness.js'

const bench = await startBench()
const { deps, baseUrl } = bench
const { account, apiKey } = await createAccount(deps, { name: 'Bench' })
const auth = { authorization: `Bearer ${apiKey}` }

const seedStart = performance.now()
for (let batch = 0; batch < 10; batch++) {
  const inputs = Array.from({ length: 1000 }, (_, i) => {
    const n = batch * 1000 + i
    return { mobile: `+2547${String(10_000_000 + n)}`, firstName: `Name${String(n).padStart(5, '0')}`, familyName: 'Bench' }
  })
  await upsertContacts(deps, account.id, parseContacts(inputs, 'KE'))
}
console.log(`seeded 10,000 contacts in ${Math.round(performance.now() - seedStart)} ms (${deps.dbKind})`)

const query = `query { contacts(page: 7, perPage: 25) { nodes { id: uuid firstName familyName otherNames mobile email organization gender } pageInfo { search total skipped perPage page pageCount } } }`
const rows: Awaited<ReturnType<typeof load>>[] = []
// Warm both paths, then measure them alternately so neither gets a warmer machine.
await load('warm-up', { url: `${baseUrl}/api/contacts?page=7`, headers: auth, duration: 3 })
await load('warm-up', {
  url: `${baseUrl}/graphql`,
  method: 'POST',
  headers: { ...auth, 'content-type': 'application/json' },
  body: JSON.stringify({ query }),
  duration: 3,
})
for (let round = 1; round <= 2; round++) {
  rows.push(await load(`REST GET /api/contacts?page=7 (round ${round})`, { url: `${baseUrl}/api/contacts?page=7`, headers: auth }))
  rows.push(
    await load(`GraphQL POST /graphql contacts(page: 7) (round ${round})`, {
      url: `${baseUrl}/graphql`,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    }),
  )
}
printTable(rows)
const rest = rows.filter((r) => r.name.startsWith('REST')).reduce((a, r) => a + r.requestsPerSecond, 0)
const gql = rows.filter((r) => r.name.startsWith('GraphQL')).reduce((a, r) => a + r.requestsPerSecond, 0)
console.log(`REST / GraphQL throughput: ${((rest / gql) * 100).toFixed(1)}% (target: at least 85%)`)

const { group } = await createGroup(deps, account.id, { name: 'Bulk' })
const bulk = Array.from({ length: 5000 }, (_, i) => ({
  first_name: `Bulk${i}`,
  family_name: 'New',
  mobile: `+2547${String(30_000_000 + i)}`,
}))
const started = performance.now()
const res = await fetch(`${baseUrl}/api/contact/group/${group.id}/add-contacts`, {
  method: 'POST',
  headers: { ...auth, 'content-type': 'application/json' },
  body: JSON.stringify({ contacts: bulk }),
})
const ms = Math.round(performance.now() - started)
console.log(`add-contacts, 5,000 new contacts in one request: ${res.status} in ${ms} ms (target: under 3000 ms)`)
await bench.close()
