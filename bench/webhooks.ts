// npm run bench -- webhooks
// 1. Dispatcher throughput: 5,000 due deliveries POSTed to a local receiver (node:http, 200).
// 2. The due-deliveries query: its plan, and a tick's cost with 100,000 pending future deliveries
//    against none.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createAccount } from '../src/accounts/create-account.js'
import { claimDueDeliveries, dispatchDueDeliveries } from '../src/webhooks/dispatcher.js'
import { startBench } from './harness.js'

const bench = await startBench({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })
const { deps } = bench
const db = deps.db

let received = 0
const receiver = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    received++
    res.end('ok')
  })
})
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

const { account } = await createAccount(deps, { name: 'Bench' })
const endpoint = await db.webhookEndpoint.create({ data: { accountId: account.id, url, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } })
const message = await db.message.create({
  data: {
    accountId: account.id,
    mobile: '+254712345678',
    sender: 'BENCH',
    text: 'x',
    encoding: 'GSM_7',
    pages: 1,
    costPerPage: 8000n,
    creditsDeducted: 8000n,
    gateway: 'sandbox',
    status: 'DELIVRD',
    broadcastAt: new Date(),
  },
})
const body = JSON.stringify({ reference: message.id, id: message.id, status: 'DELIVRD', padding: 'x'.repeat(200) })

async function enqueue(n: number, at: Date, prefix: string) {
  for (let i = 0; i < n; i += 1000) {
    await db.webhookDelivery.createMany({
      data: Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({
        id: `msg_${prefix}${String(i + j).padStart(28, '0')}`,
        accountId: account.id,
        endpointId: endpoint.id,
        messageId: message.id,
        body,
        nextAttemptAt: at,
      })),
    })
  }
}

// 1. Throughput
const N = 5000
await enqueue(N, new Date(), 'due')
const started = performance.now()
let delivered = 0
while (delivered < N) {
  const r = await dispatchDueDeliveries(deps, { owner: 'bench', batchSize: 200, concurrency: 50 })
  delivered += r.delivered
  if (r.claimed === 0) break
}
const seconds = (performance.now() - started) / 1000
console.log(
  `dispatcher (${deps.dbKind}): ${delivered} deliveries in ${seconds.toFixed(2)} s = ${Math.round(delivered / seconds)} deliveries/s (receiver counted ${received}; target: at least 500/s)`,
)

// 2. The due query with nothing due, before and after 100,000 future deliveries.
async function tickCost(label: string) {
  const rounds = 300
  const t = performance.now()
  for (let i = 0; i < rounds; i++) await claimDueDeliveries(deps, 'bench', 200)
  console.log(`claim tick with nothing due, ${label}: ${((performance.now() - t) / rounds).toFixed(3)} ms`)
}
await tickCost('no pending deliveries')
await enqueue(100_000, new Date(Date.now() + 86_400_000), 'future')
console.log(`pending future deliveries: ${await db.webhookDelivery.count({ where: { state: 'pending' } })}`)
await tickCost('100,000 pending future deliveries')

const now = new Date().toISOString()
const plan =
  deps.dbKind === 'sqlite'
    ? await db.$queryRawUnsafe<{ detail: string }[]>(
        `EXPLAIN QUERY PLAN SELECT id FROM "WebhookDelivery" WHERE state = 'pending' AND "nextAttemptAt" <= ? AND ("leaseUntil" IS NULL OR "leaseUntil" < ?) ORDER BY "nextAttemptAt" ASC LIMIT 200`,
        now,
        now,
      )
    : await db.$queryRawUnsafe<{ 'QUERY PLAN': string }[]>(
        `EXPLAIN SELECT id FROM "WebhookDelivery" WHERE state = 'pending' AND "nextAttemptAt" <= $1::timestamp AND ("leaseUntil" IS NULL OR "leaseUntil" < $1::timestamp) ORDER BY "nextAttemptAt" ASC LIMIT 200`,
        now,
      )
console.log('plan of the due-deliveries query:')
for (const row of plan) console.log(`  ${'detail' in row ? row.detail : row['QUERY PLAN']}`)

receiver.close()
await bench.close()
