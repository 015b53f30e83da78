// npm run bench -- ws-vs-http
// The same GraphQL query over HTTP (POST /graphql) and over a WebSocket (graphql-ws, one socket a
// client): the service's CPU an operation on each, in one run. The service is the real one, started
// as `npm start` starts it (child process, its CPU from /proc), with 1,000 contacts in its account;
// WS_HTTP_CLIENTS (10) clients keep one operation each in flight, WS_HTTP_OPERATIONS (5,000) an
// interval, intervals A B B A (HTTP, WebSocket, WebSocket, HTTP) after untimed warm-ups of both.
// Both doors run the same checks per operation (credentials, budget, scopes): the WebSocket door
// authenticates once per socket and again before each operation (docs/security.md).
// SQLite (a fresh file), then PostgreSQL at BENCH_DATABASE_URL (a fresh schema, dropped after;
// skipped when unreachable). The goal: an operation over the WebSocket costs at most the CPU of
// the same one over HTTP.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createClient, type Client } from 'graphql-ws'
import WebSocket from 'ws'
import { createAccount } from '../src/accounts/create-account.js'
import { parseEnv } from '../src/core/env.js'
import { openDatabase } from '../src/db/client.js'
import { applyMigrations } from '../src/db/migrate.js'
import { createDeps } from '../src/deps.js'
import { postgresSchema } from './harness.js'
import { benchServiceEnv, serviceCommand, startChild, type Child } from './peers/processes.js'
import { seedContacts } from './peers/seed.js'

const CLIENTS = Number(process.env.WS_HTTP_CLIENTS ?? 10)
const OPERATIONS = Number(process.env.WS_HTTP_OPERATIONS ?? 5000)
const QUERY = 'query Page { contacts(page: 7, perPage: 25) { pageInfo { total } nodes { id firstName familyName mobile } } }'
const root = fileURLToPath(new URL('..', import.meta.url))
const load = () => os.loadavg()[0]!.toFixed(2)

/** Runs `operations` calls of `one` from CLIENTS loops; returns the wall time in ms. */
async function drive(operations: number, one: (client: number) => Promise<void>): Promise<number> {
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      while (next++ < operations) await one(client)
    }),
  )
  return performance.now() - started
}

function checkAnswer(body: { data?: { contacts?: { nodes?: unknown[] } }; errors?: unknown }) {
  if (body.errors || body.data?.contacts?.nodes?.length !== 25) throw new Error(`unexpected answer: ${JSON.stringify(body).slice(0, 300)}`)
}

async function measure(db: string, url: string) {
  await applyMigrations(url)
  const database = await openDatabase(url)
  const deps = createDeps(database, parseEnv({ DATABASE_URL: url, LOG_LEVEL: 'silent' }))
  const { account, apiKey } = await createAccount(deps, { name: 'WS against HTTP' })
  await database.close()
  await seedContacts(url, account.id, 40_000_000, 1000)

  const start = serviceCommand(root)
  const service: Child = await startChild(`service (${db})`, (port) => ({ args: start.args, env: benchServiceEnv(start, url, port) }), root)
  const sockets: Client[] = []
  try {
    const http = (client: number) => async () => {
      void client
      const res = await fetch(`${service.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({ query: QUERY, operationName: 'Page' }),
      })
      checkAnswer(await res.json())
    }
    for (let i = 0; i < CLIENTS; i++) {
      const socket = createClient({
        url: `${service.baseUrl.replace(/^http/, 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${apiKey}` },
        lazy: false,
        retryAttempts: 0,
      })
      sockets.push(socket)
    }
    const ws = (client: number) =>
      new Promise<void>((resolve, reject) => {
        let answer: unknown
        sockets[client]!.subscribe(
          { query: QUERY, operationName: 'Page' },
          { next: (value) => (answer = value), error: reject, complete: () => (checkAnswer(answer as never), resolve()) },
        )
      })
    const run = async (name: 'HTTP' | 'WebSocket', operations: number) => {
      const cpu = service.cpuMs()
      const ms = await drive(operations, name === 'HTTP' ? (c) => http(c)() : ws)
      return { cpuMs: service.cpuMs() - cpu, ms }
    }
    // Warm both doors as long as one measured interval: the first HTTP interval otherwise still
    // pays for V8's compiling of the HTTP path (540 against 320 µs in a trial run).
    for (const name of ['HTTP', 'WebSocket', 'HTTP', 'WebSocket'] as const) await run(name, OPERATIONS / 2)
    const totals = { HTTP: { cpuMs: 0, ms: 0 }, WebSocket: { cpuMs: 0, ms: 0 } }
    const loads: string[] = [load()]
    for (const name of ['HTTP', 'WebSocket', 'WebSocket', 'HTTP'] as const) {
      const r = await run(name, OPERATIONS)
      totals[name].cpuMs += r.cpuMs
      totals[name].ms += r.ms
      console.log(
        `${db} | ${name} | ${((r.cpuMs * 1000) / OPERATIONS).toFixed(0)} µs CPU an operation | ${((OPERATIONS * 1000) / r.ms).toFixed(0)} operations/s | load ${load()}`,
      )
    }
    loads.push(load())
    const per = (name: 'HTTP' | 'WebSocket') => (totals[name].cpuMs * 1000) / (2 * OPERATIONS)
    const rate = (name: 'HTTP' | 'WebSocket') => (2 * OPERATIONS * 1000) / totals[name].ms
    console.log(
      `${db}: HTTP ${per('HTTP').toFixed(0)} µs, WebSocket ${per('WebSocket').toFixed(0)} µs of the service's CPU an operation: WebSocket/HTTP ${(per('WebSocket') / per('HTTP')).toFixed(2)}x (goal at most 1.0x); ${rate('HTTP').toFixed(0)} and ${rate('WebSocket').toFixed(0)} operations/s; load ${loads.join(' → ')}`,
    )
  } finally {
    await Promise.all(sockets.map((s) => s.dispose()))
    await service.stop()
  }
}

console.log(
  `ws-vs-http: ${CLIENTS} clients, ${OPERATIONS} operations an interval, ${os.cpus().length} CPUs; load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
)
const dir = mkdtempSync(join(os.tmpdir(), 'gateway-ws-vs-http-'))
try {
  await measure('SQLite', `file:${join(dir, 'ws.db')}`)
  const schema = await postgresSchema()
  if (schema)
    try {
      await measure('PostgreSQL', schema.url)
    } finally {
      await schema.drop()
    }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
