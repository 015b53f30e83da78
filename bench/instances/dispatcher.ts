// One dispatching instance for bench/webhook-dispatch.ts: the worker's continuous dispatcher
// (createDispatcher) as src/process/worker.ts runs it, pumped every second, in a process of its own.
import pg from 'pg'
import { openDatabase } from '../../src/db/client.js'
import { parseEnv } from '../../src/core/env.js'
import { createDeps } from '../../src/deps.js'
import { createDispatcher } from '../../src/webhooks/dispatcher.js'

const url = process.env.DATABASE_URL!
const statements = new Map<string, number>()
// Round trips to PostgreSQL: every query a pg client sends (BEGIN, COMMIT and Prisma's statements
// included), whichever path sent it; the statement log above sees only what Prisma and the direct
// paths report. Counted from 'go' on.
let roundTrips = 0
let counting = false
const query = pg.Client.prototype.query
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (counting) roundTrips++
  return (query as (...a: unknown[]) => unknown).apply(this, args)
} as typeof query
const database = await openDatabase(url, {
  onQuery: (sql) => {
    const shape = sql
      .replace(/\s+/g, ' ')
      .trim()
      .replace(/\$\d+|\?/g, '?')
      .replace(/(\?,\s*)+\?/g, '?…')
      .slice(0, 60)
    statements.set(shape, (statements.get(shape) ?? 0) + 1)
  },
})
// The bench's WEBHOOK_ENDPOINT_CONCURRENCY must reach the dispatcher: without it the one account
// had the default 10 slots of the 50, and every claim was of 5.
const deps = createDeps(
  database,
  parseEnv({
    DATABASE_URL: url,
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_ENDPOINT_CONCURRENCY: process.env.WEBHOOK_ENDPOINT_CONCURRENCY,
  }),
)
const dispatcher = createDispatcher(deps, { owner: `bench-${process.pid}` })
process.send!('ready')
let started = process.cpuUsage()
let tick: NodeJS.Timeout | undefined
// 'go' starts the dispatcher; 'mark' (after a warm-up, WEBHOOK_BENCH_WARM) starts the counts again
// and pauses the dispatcher until 'pump'; 'stop' stops it and reports what was counted since 'go' or 'mark'.
process.on('message', async (message) => {
  if (message === 'go' || message === 'mark') {
    statements.clear()
    roundTrips = 0
    counting = true
    started = process.cpuUsage()
  }
  if (message === 'go' || message === 'pump') {
    tick = setInterval(() => void dispatcher.pump().catch(() => undefined), 1000)
    void dispatcher.pump().catch(() => undefined)
  } else if (message === 'mark') {
    // No claim until 'pump': the measured deliveries are being written.
    clearInterval(tick)
    process.send!('marked')
  } else if (message === 'stop') {
    clearInterval(tick)
    await dispatcher.stop()
    const cpu = process.cpuUsage(started)
    counting = false
    process.send!({ cpuMs: (cpu.user + cpu.system) / 1000, statements: Object.fromEntries(statements), roundTrips })
    await database.close()
    process.exit(0)
  }
})
