// npm run bench -- idempotency
// What the Idempotency-Key layer costs on POST /api/contact/group/create (an existing name, so the
// handler does the same reads each time): without the header, with a fresh key per request (claim,
// run, keep the answer), and repeating one key (replay from the record).
import { randomUUID } from 'node:crypto'
import { loadavg } from 'node:os'
import { createAccount } from '../src/accounts/create-account.js'
import { load, printTable, startBench } from './harness.js'

const bench = await startBench()
const { deps, baseUrl } = bench
const { apiKey } = await createAccount(deps, { name: 'Bench' })
const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }
const options = {
  url: `${baseUrl}/api/contact/group/create`,
  method: 'POST' as const,
  body: JSON.stringify({ name: 'Customers' }),
  duration: 5,
}

await load('warm-up', { ...options, headers, duration: 2 })
const rows: Awaited<ReturnType<typeof load>>[] = []
for (let round = 1; round <= 2; round++) {
  rows.push(await load(`no header (round ${round})`, { ...options, headers }))
  rows.push(
    await load(`fresh key per request (round ${round})`, {
      ...options,
      headers,
      setupClient: (client) => client.setHeaders({ ...headers, 'idempotency-key': randomUUID() }),
      requests: [{ setupRequest: (req) => ({ ...req, headers: { ...headers, 'idempotency-key': randomUUID() } }) }],
    }),
  )
  rows.push(await load(`one key, replayed (round ${round})`, { ...options, headers: { ...headers, 'idempotency-key': `replay-${round}` } }))
}
printTable(rows)
const records = await deps.db.idempotencyRecord.count()
console.log(
  `${records} records kept (${deps.dbKind}); load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
)
await bench.close()
