// npm run bench -- smpp: submits a second through one SMPP bind, the connector (sendSms: charge,
// outbox, part row, submit_sm, SENT) against a bare node-smpp client doing only the submit_sm,
// against the same SMSC (the test kit's, on node-smpp's server) in the same run and window. Then
// end to end: sendSms to DELIVRD with the SMSC sending a receipt for every part.
//   SMPP_BENCH_MESSAGES=3000 SMPP_BENCH_WINDOW=10 npm run bench -- smpp
//   SMPP_BENCH_DATABASE=postgresql npm run bench -- smpp   (a fresh schema on BENCH_DATABASE_URL's server)
// CPU a message is this process's (the SMSC's share included): on a loaded machine compare those.
import smpp, { type PDU } from 'smpp'
import { statSync } from 'node:fs'
import { loadavg } from 'node:os'
import { postgresSchema, startBench } from './harness.js'
import { startSmsc } from '../test/kit/smsc.js'
import { createSmppGateway } from '../src/sms/smpp/smpp-gateway.js'
import { createLogger } from '../src/core/logger.js'
import { createAccount } from '../src/accounts/create-account.js'
import { sendSms } from '../src/sms/send-sms.js'

const N = Number(process.env.SMPP_BENCH_MESSAGES ?? 2000)
const WINDOW = Number(process.env.SMPP_BENCH_WINDOW ?? 10)
/** sendSms callers at once: more than the window, so the window is always full. */
const CALLERS = WINDOW * 4
/** CPU of this process (the SMSC's included, it runs here too), for the figures of a loaded machine. */
const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000
let bareCpuMs = 0

async function bare(url: string): Promise<number> {
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
    while (next < N) {
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
  const rate = N / ((performance.now() - started) / 1000)
  bareCpuMs = cpuMs(process.cpuUsage(cpu)) / N
  await new Promise<void>((resolve) => session.unbind(() => resolve()))
  session.close()
  return rate
}

const smsc = await startSmsc()
const baseline = await bare(smsc.url)

// The SMSC shares this process: a long answer timeout, so a busy machine does not turn slow answers into UNKNOWN.
const gateway = createSmppGateway({ url: smsc.url, logger: createLogger('silent'), window: WINDOW, responseTimeoutMs: 120_000 })
// SMPP_BENCH_DATABASE=postgresql: a fresh schema on BENCH_DATABASE_URL's server, dropped after.
const schema = process.env.SMPP_BENCH_DATABASE === 'postgresql' ? await postgresSchema() : null
if (process.env.SMPP_BENCH_DATABASE === 'postgresql' && !schema) process.exit(1)
// Every statement the database runs, Prisma's and the direct ones (BEGIN and COMMIT included where they are logged).
let statements = 0
/** Each COMMIT's time (ms): on SQLite the one that crosses wal_autocheckpoint runs the checkpoint itself. */
const commitMs: number[] = []
const bench = await startBench({ SMS_GATEWAY: 'smpp', SMPP_URL: smsc.url }, { gateway }, schema?.url ?? null, {
  onQuery: () => statements++,
  onQueryEvent: ({ query, duration }) => {
    if (query === 'COMMIT') commitMs.push(duration)
  },
})
gateway.start(bench.deps)
await gateway.whenBound()
const { account } = await createAccount(bench.deps, { name: 'Bench' })
await bench.deps.db.account.update({ where: { id: account.id }, data: { creditBalance: BigInt(N) * 4n * 10_000n, pricePerPage: 10_000n } })

async function run(label: string, receipts: boolean) {
  smsc.options.autoReceipt = receipts ? { stat: 'DELIVRD', when: 'after' } : null
  const ids: string[] = []
  const cpu = process.cpuUsage()
  const statementsBefore = statements
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
  const counted = N - notSent
  return {
    submitsPerSecond: counted / ((submitted - started) / 1000),
    endToEndPerSecond: counted / ((done - started) / 1000),
    cpuMsPerMessage,
    statementsPerMessage,
  }
}

const submits = await run('submit-only', false)
const endToEnd = await run('end-to-end', true)
await gateway.stop()
// The WAL's file at the end: it starts over from its first frame only when all of it was copied at a writer's BEGIN.
const walMiB = bench.deps.dbKind === 'sqlite' ? statSync(`${bench.deps.env.DATABASE_URL.replace(/^file:/, '')}-wal`).size / 2 ** 20 : 0
await bench.close()
await schema?.drop()
await smsc.close()

const ratio = submits.submitsPerSecond / baseline
console.log(`messages ${N}, window ${WINDOW}, ${CALLERS} sendSms callers, database ${bench.deps.dbKind}`)
if (bench.deps.dbKind === 'sqlite') console.log(`the WAL file at the end: ${walMiB.toFixed(1)} MiB`)
console.log(`bare node-smpp client:        ${baseline.toFixed(0)} submit_sm/s, ${bareCpuMs.toFixed(2)} ms CPU a message`)
console.log(
  `connector (sendSms → SENT):   ${submits.submitsPerSecond.toFixed(0)} messages/s (${ratio.toFixed(2)}x the bare client), ${submits.cpuMsPerMessage.toFixed(2)} ms CPU, ${submits.statementsPerMessage.toFixed(1)} statements a message`,
)
console.log(
  `end to end (sendSms → DELIVRD): ${endToEnd.endToEndPerSecond.toFixed(0)} messages/s, ${endToEnd.cpuMsPerMessage.toFixed(2)} ms CPU, ${endToEnd.statementsPerMessage.toFixed(1)} statements a message`,
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
