// npm run bench -- add-contacts-cpu
// Adding 10,000 new contacts in one request on PostgreSQL (issue 56, goal 3: at least 1.0x the
// hand-written time), wall time and the server process's own CPU (utime + stime from /proc, so
// PostgreSQL's backends are not in it), the real service (started as `npm start` starts it) against
// the project's hand-written fastify + pg peer (bench/peers/hand-server.ts), each in an account
// of its own in one fresh schema on BENCH_DATABASE_URL, the two alternating request by request.
// ADD_CPU_ROUNDS (8) requests each; the first of each is left out of the medians (first use).
// Where the service's extra CPU goes is the point: a CPU profile of the service is taken with
// ADD_CPU_PROFILE=<dir> (node --cpu-prof).
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { createAccount } from '../src/accounts/create-account.js'
import { parseEnv } from '../src/core/env.js'
import { openDatabase } from '../src/db/client.js'
import { applyMigrations } from '../src/db/migrate.js'
import { createDeps } from '../src/deps.js'
import { createGroup } from '../src/messaging/groups.js'
import { median, postgresSchema } from './harness.js'
import { benchServiceEnv, serviceCommand, startChild, type Child } from './peers/processes.js'

const ROUNDS = Number(process.env.ADD_CPU_ROUNDS ?? 8)
const PROFILE = process.env.ADD_CPU_PROFILE
const root = fileURLToPath(new URL('..', import.meta.url))
const load = () => os.loadavg()[0]!.toFixed(2)

const schema = await postgresSchema()
if (!schema) {
  console.log('add-contacts-cpu: PostgreSQL unreachable (BENCH_DATABASE_URL); skipped')
  process.exit(0)
}
const servers: Child[] = []
try {
  const url = schema.url
  await applyMigrations(url)
  const database = await openDatabase(url)
  const deps = createDeps(database, parseEnv({ DATABASE_URL: url, LOG_LEVEL: 'silent' }))
  const accounts = []
  for (const name of ['Service', 'Hand-written']) {
    const { account, apiKey } = await createAccount(deps, { name })
    const { group } = await createGroup(deps, account.id, { name: 'Bulk' })
    accounts.push({ apiKey, groupId: group.id })
  }
  await database.close()

  const start = serviceCommand(root)
  servers.push(
    await startChild(
      'service',
      (port) => ({
        args: [...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`] : []), ...start.args],
        env: benchServiceEnv(start, url, port),
      }),
      root,
    ),
    await startChild('fastify + pg', (port) => ({ args: ['--import', 'tsx', 'bench/peers/hand-server.ts', String(port), url] }), root),
  )
  const contacts = (base: number, from: number) =>
    Array.from({ length: 10_000 }, (_, i) => ({
      mobile: `+2547${String(base + from + i)}`,
      first_name: `First${from + i}`,
      family_name: `Family${(from + i) % 97}`,
      gender: 'f',
    }))
  const figures = servers.map(() => ({ ms: [] as number[], cpuMs: [] as number[] }))
  console.log(`add-contacts-cpu: ${ROUNDS} requests of 10,000 new contacts each, PostgreSQL; load ${load()}`)
  for (let round = 0; round < ROUNDS; round++) {
    const line: string[] = []
    for (const [i, server] of servers.entries()) {
      const { apiKey, groupId } = accounts[i]!
      const body = JSON.stringify({ contacts: contacts(10_000_000 * (i + 1), round * 10_000) })
      const cpu = server.cpuMs()
      const started = performance.now()
      const res = await fetch(`${server.baseUrl}/api/contact/group/${groupId}/add-contacts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body,
      })
      const text = await res.text()
      if (res.status !== 200) throw new Error(`${server.name}: ${res.status} ${text.slice(0, 300)}`)
      const ms = performance.now() - started
      const cpuMs = server.cpuMs() - cpu
      if (round > 0) {
        figures[i]!.ms.push(ms)
        figures[i]!.cpuMs.push(cpuMs)
      }
      line.push(`${server.name} ${ms.toFixed(0)} ms, CPU ${cpuMs.toFixed(0)} ms`)
    }
    console.log(`request ${round + 1} (account at ${round * 10}k): ${line.join(' | ')} | load ${load()}`)
  }
  const [service, hand] = figures as [(typeof figures)[0], (typeof figures)[0]]
  console.log(
    `median: service ${median(service.ms).toFixed(0)} ms (CPU ${median(service.cpuMs).toFixed(0)} ms), fastify + pg ${median(hand.ms).toFixed(0)} ms (CPU ${median(hand.cpuMs).toFixed(0)} ms): hand-written time / service time ${(median(hand.ms) / median(service.ms)).toFixed(2)}x, CPU ${(median(service.cpuMs) / median(hand.cpuMs)).toFixed(2)}x the peer's; load ${load()}`,
  )
} finally {
  for (const server of servers) await server.stop()
  await schema.drop()
}
