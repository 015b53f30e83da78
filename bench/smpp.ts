// npm run bench -- smpp: submits a second through one SMPP bind against the same SMSC (the test
// kit's, on node-smpp's server) in the same run and window: a bare node-smpp client doing only the
// submit_sm against the connector alone (gateway.submit of messages already charged and in the
// outbox: each part's row before its submit_sm, the answer's id after it), both warmed, in rounds
// A B B A. Then the connector behind sendSms (charge, outbox, part row, submit_sm, SENT), and end
// to end: sendSms to DELIVRD with the SMSC sending a receipt for every part.
//   SMPP_BENCH_MESSAGES=3000 SMPP_BENCH_WINDOW=10 npm run bench -- smpp
//   SMPP_BENCH_DATABASE=postgresql npm run bench -- smpp   (a fresh schema on BENCH_DATABASE_URL's server)
// CPU a message is this process's (the SMSC's share included): on a loaded machine compare those.
import smpp, { type PDU } from 'smpp'
import pg from 'pg'
import { statSync } from 'node:fs'
import { loadavg } from 'node:os'
import { postgresSchema, startBench } from './harness.js'
import { startSmsc } from '../test/kit/smsc.js'
import { createSmppGateway } from '../src/sms/smpp/smpp-gateway.js'
import { createLogger } from '../src/core/logger.js'
import { createAccount } from '../src/accounts/create-account.js'
import { sendSms } from '../src/sms/send-sms.js'
import type { OutgoingSms } from '../src/sms/gateway.js'

const N = Number(process.env.SMPP_BENCH_MESSAGES ?? 2000)
const WINDOW = Number(process.env.SMPP_BENCH_WINDOW ?? 10)
/** sendSms callers at once: more than the window, so the window is always full. */
const CALLERS = WINDOW * 4
/** CPU of this process (the SMSC's included, it runs here too), for the figures of a loaded machine. */
const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000
/** Messages each side sends before the timed rounds (untimed): both sides' code warm, the SMSC's too. */
const WARM = Math.min(200, N)

/** A timed round: its messages, wall time and this process's CPU. */
interface Round {
  messages: number
  ms: number
  cpuMs: number
}
const total = (rounds: Round[]) => {
  const messages = rounds.reduce((sum, r) => sum + r.messages, 0)
  return {
    perSecond: messages / (rounds.reduce((sum, r) => sum + r.ms, 0) / 1000),
    cpuMsPerMessage: rounds.reduce((sum, r) => sum + r.cpuMs, 0) / messages,
  }
}

/** `count` submit_sm through a bind of its own, WINDOW in flight. */
async function bare(url: string, count: number): Promise<Round> {
  const target = new URL(url)
  const session = smpp.connect({ host: target.hostname, port: Number(target.port) })
  await new Promise<void>((resolve) => session.on('connect', resolve))
  await new Promise<void>((resolve, reject) =>
    session.bind_transceiver({ system_id: target.username, password: target.password }, (pdu) =>
      pdu.command_status === 0 ? resolve() : reject(new Error('bind refused')),
    ),
  )
  session.on('deliver_sm', (pdu: PDU) => session.send(pdu.response()))
  const started = performance.now()
  let next = 0
  const worker = async () => {
    while (next < count) {
      const i = next++
      await new Promise<void>((resolve) =>
        session.submit_sm(
          {
            source_addr_ton: 5,
            source_addr: 'BENCH',
            dest_addr_ton: 1,
            dest_addr_npi: 1,
            destination_addr: '254711000000',
            registered_delivery: 1,
            data_coding: 0,
            short_message: Buffer.from(`bench message ${i}`, 'latin1'),
          },
          () => resolve(),
        ),
      )
    }
  }
  const cpu = process.cpuUsage()
  await Promise.all(Array.from({ length: WINDOW }, worker))
  const round = { messages: count, ms: performance.now() - started, cpuMs: cpuMs(process.cpuUsage(cpu)) }
  await new Promise<void>((resolve) => session.unbind(() => resolve()))
  session.close()
  return round
}

const smsc = await startSmsc()

// The SMSC shares this process: a long answer timeout, so a busy machine does not turn slow answers into UNKNOWN.
const gateway = createSmppGateway({ url: smsc.url, logger: createLogger('silent'), window: WINDOW, responseTimeoutMs: 120_000 })
// SMPP_BENCH_DATABASE=postgresql: a fresh schema on BENCH_DATABASE_URL's server, dropped after.
const schema = process.env.SMPP_BENCH_DATABASE === 'postgresql' ? await postgresSchema() : null
if (process.env.SMPP_BENCH_DATABASE === 'postgresql' && !schema) process.exit(1)
// Every statement the database runs, Prisma's and the direct ones (BEGIN and COMMIT included where they are logged).
let statements = 0
/**
 * PostgreSQL: every query a connection sends (BEGIN, COMMIT and ROLLBACK included, which the
 * statements above leave out on the direct path): node-postgres sends each as one round trip.
 */
let roundTrips = 0
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  roundTrips++
  return query.apply(this, args)
} as typeof pg.Client.prototype.query
/** Each COMMIT's time (ms): on SQLite the one that crosses wal_autocheckpoint runs the checkpoint itself. */
const commitMs: number[] = []
const bench = await startBench({ SMS_GATEWAY: 'smpp', SMPP_URL: smsc.url }, { gateway }, schema?.url ?? null, {
  onQuery: () => statements++,
  onQueryEvent: ({ query, duration }) => {
    if (query === 'COMMIT') commitMs.push(duration)
  },
})
const { account } = await createAccount(bench.deps, { name: 'Bench' })
await bench.deps.db.account.update({ where: { id: account.id }, data: { creditBalance: BigInt(N) * 4n * 10_000n, pricePerPage: 10_000n } })

// The connector alone needs messages already charged and in the outbox: sent while the gateway is
// not bound yet, so that each is left PENDING (its submit refused as transient) and never submitted.
const queued: OutgoingSms[] = []
for (let i = 0; i < WARM + N; i++) {
  const text = `queued message ${i}`
  const sent = await sendSms(bench.deps, account.id, { to: '+254711000000', message: text, sender: 'BENCH' })
  queued.push({ id: sent.id, to: '+254711000000', sender: 'BENCH', text, encoding: 'GSM_7', pages: 1 })
}
gateway.start(bench.deps)
await gateway.whenBound()

/**
 * The connector alone, as the bare client: `gateway.submit` of messages already charged and
 * written, through the same bind and window. Each part's row is committed before its submit_sm
 * and the answer's id recorded after it (the connector's own records; the charge, the outbox and
 * SENT are sendSms's and submitHeld's, measured below).
 */
let taken = 0
async function connectorAlone(count: number): Promise<Round & { statements: number; roundTrips: number }> {
  const cpu = process.cpuUsage()
  const statementsBefore = statements
  const roundTripsBefore = roundTrips
  const started = performance.now()
  const end = taken + count
  const caller = async () => {
    while (taken < end) {
      const message = queued[taken++]!
      await gateway.submit(message, {
        db: bench.deps.db,
        dbKind: bench.deps.dbKind,
        directRead: bench.deps.directRead,
        directTransaction: bench.deps.directTransaction,
        now: bench.deps.clock.now(),
        fresh: true,
      })
    }
  }
  await Promise.all(Array.from({ length: CALLERS }, caller))
  return {
    messages: count,
    ms: performance.now() - started,
    cpuMs: cpuMs(process.cpuUsage(cpu)),
    statements: statements - statementsBefore,
    roundTrips: roundTrips - roundTripsBefore,
  }
}

async function run(label: string, receipts: boolean) {
  smsc.options.autoReceipt = receipts ? { stat: 'DELIVRD', when: 'after' } : null
  const ids: string[] = []
  const cpu = process.cpuUsage()
  const statementsBefore = statements
  const roundTripsBefore = roundTrips
  const started = performance.now()
  let next = 0
  const caller = async () => {
    while (next < N) {
      const i = next++
      const sent = await sendSms(bench.deps, account.id, { to: '+254711000000', message: `${label} message ${i}`, sender: 'BENCH' })
      ids.push(sent.id)
    }
  }
  await Promise.all(Array.from({ length: CALLERS }, caller))
  const submitted = performance.now()
  let polls = 1
  // Not accepted at once (left PENDING for the outbox, which this bench does not run): not counted.
  const notSent = await bench.deps.db.message.count({
    where: { accountId: account.id, status: 'PENDING', text: { startsWith: label } },
  })
  if (notSent) console.log(`${label}: ${notSent} of ${N} left PENDING`)
  if (receipts) {
    for (;;) {
      const delivered = await bench.deps.db.message.count({
        where: { accountId: account.id, status: 'DELIVRD', text: { startsWith: label } },
      })
      polls++
      if (delivered >= N - notSent) break
      await new Promise((r) => setTimeout(r, 20))
    }
  }
  const done = performance.now()
  const cpuMsPerMessage = cpuMs(process.cpuUsage(cpu)) / N
  // The bench's own counts (above) and polls are left out.
  const statementsPerMessage = (statements - statementsBefore - polls) / N
  const roundTripsPerMessage = (roundTrips - roundTripsBefore - polls) / N
  const counted = N - notSent
  return {
    submitsPerSecond: counted / ((submitted - started) / 1000),
    endToEndPerSecond: counted / ((done - started) / 1000),
    cpuMsPerMessage,
    statementsPerMessage,
    roundTripsPerMessage,
  }
}

smsc.options.autoReceipt = null
// Both warm first, then timed rounds A B B A: neither side gains from running after the other.
await bare(smsc.url, WARM)
await connectorAlone(WARM)
const half = Math.floor(N / 2)
const bareRounds: Round[] = []
const aloneRounds: (Round & { statements: number; roundTrips: number })[] = []
bareRounds.push(await bare(smsc.url, half))
aloneRounds.push(await connectorAlone(half))
aloneRounds.push(await connectorAlone(N - half))
bareRounds.push(await bare(smsc.url, N - half))
const baseline = total(bareRounds)
const alone = {
  ...total(aloneRounds),
  statementsPerMessage: aloneRounds.reduce((sum, r) => sum + r.statements, 0) / N,
  roundTripsPerMessage: aloneRounds.reduce((sum, r) => sum + r.roundTrips, 0) / N,
}
/** PostgreSQL's round trips a message, beside the statements. */
const trips = (perMessage: number) => (bench.deps.dbKind === 'postgresql' ? `, ${perMessage.toFixed(1)} round trips` : '')
const submits = await run('submit-only', false)
const endToEnd = await run('end-to-end', true)
await gateway.stop()
// The WAL's file at the end: it starts over from its first frame only when all of it was copied at a writer's BEGIN.
const walMiB = bench.deps.dbKind === 'sqlite' ? statSync(`${bench.deps.env.DATABASE_URL.replace(/^file:/, '')}-wal`).size / 2 ** 20 : 0
await bench.close()
await schema?.drop()
await smsc.close()

const ratio = submits.submitsPerSecond / baseline.perSecond
const aloneRatio = alone.perSecond / baseline.perSecond
console.log(`messages ${N}, window ${WINDOW}, ${CALLERS} sendSms callers, database ${bench.deps.dbKind}`)
if (bench.deps.dbKind === 'sqlite') console.log(`the WAL file at the end: ${walMiB.toFixed(1)} MiB`)
console.log(
  `bare node-smpp client:        ${baseline.perSecond.toFixed(0)} submit_sm/s, ${baseline.cpuMsPerMessage.toFixed(2)} ms CPU a message`,
)
console.log(
  `connector alone (submit):     ${alone.perSecond.toFixed(0)} messages/s (${aloneRatio.toFixed(2)}x the bare client), ${alone.cpuMsPerMessage.toFixed(2)} ms CPU, ${alone.statementsPerMessage.toFixed(1)} statements a message${trips(alone.roundTripsPerMessage)}`,
)
console.log(
  `connector (sendSms → SENT):   ${submits.submitsPerSecond.toFixed(0)} messages/s (${ratio.toFixed(2)}x the bare client), ${submits.cpuMsPerMessage.toFixed(2)} ms CPU, ${submits.statementsPerMessage.toFixed(1)} statements a message${trips(submits.roundTripsPerMessage)}`,
)
console.log(
  `end to end (sendSms → DELIVRD): ${endToEnd.endToEndPerSecond.toFixed(0)} messages/s, ${endToEnd.cpuMsPerMessage.toFixed(2)} ms CPU, ${endToEnd.statementsPerMessage.toFixed(1)} statements a message${trips(endToEnd.roundTripsPerMessage)}`,
)
const slow = commitMs.filter((ms) => ms > 5)
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0)
console.log(
  `commits: ${commitMs.length}, ${sum(commitMs).toFixed(0)} ms in all; ${slow.length} over 5 ms (${sum(slow).toFixed(0)} ms, the longest ${Math.max(0, ...commitMs).toFixed(0)} ms)`,
)
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
)
