// Shared set-up for benchmarks: a real HTTP server on a loopback port over a fresh database.
import { createServer, type Server } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { createServerAdapter } from '@whatwg-node/server'
import autocannon from 'autocannon'
import pg from 'pg'
import { applyMigrations } from '../src/db/migrate.js'
import { openDatabase, type Database, type OpenOptions } from '../src/db/client.js'
import { parseEnv } from '../src/core/env.js'
import { createApp } from '../src/app.js'
import { createDeps, type Deps } from '../src/deps.js'

/** The upper middle value (the middle one of an odd count). */
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!

export interface Bench {
  deps: Deps
  database: Database
  baseUrl: string
  close(): Promise<void>
}

/** `databaseUrl` (default BENCH_DATABASE_URL) selects the database; null or unset: a fresh SQLite file. */
export async function startBench(
  extraEnv: Record<string, string> = {},
  extraDeps: Partial<Deps> = {},
  databaseUrl: string | null = process.env.BENCH_DATABASE_URL ?? null,
  /** The database's options (onQuery: count statements). */
  openOptions: OpenOptions = {},
): Promise<Bench> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-'))
  const url = databaseUrl ?? `file:${join(dir, 'bench.db')}`
  await applyMigrations(url)
  const database = await openDatabase(url, openOptions)
  const env = parseEnv({ DATABASE_URL: url, LOG_LEVEL: 'silent', RATE_LIMIT_PER_SECOND: '0', ...extraEnv })
  const deps = createDeps(database, env, extraDeps)
  const app = createApp({ deps, ready: database.ready })
  const server: Server = createServer(createServerAdapter(app.fetch))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    deps,
    database,
    baseUrl: `http://127.0.0.1:${port}`,
    async close() {
      await new Promise((resolve) => server.close(resolve))
      await database.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export interface LoadResult {
  name: string
  requestsPerSecond: number
  p50: number
  p99: number
  errors: number
  non2xx: number
}

/** POST a JSON body to the service's REST API with an account's key; throws unless the answer is 2xx. */
export async function postApi(baseUrl: string, apiKey: string, route: string, body: unknown): Promise<{ reference?: string }> {
  const res = await fetch(`${baseUrl}/api/${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (!res.ok) throw new Error(`${route}: ${res.status} ${await res.text()}`)
  return (await res.json()) as { reference?: string }
}

/** A bounded autocannon run against a loopback URL. */
export async function load(name: string, options: autocannon.Options): Promise<LoadResult> {
  const result = await autocannon({ connections: 10, duration: 10, ...options })
  return {
    name,
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  }
}

export function printTable(rows: LoadResult[]) {
  console.log('| run | req/s | p50 ms | p99 ms | errors | non-2xx |')
  console.log('|---|---:|---:|---:|---:|---:|')
  for (const r of rows) console.log(`| ${r.name} | ${r.requestsPerSecond} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.non2xx} |`)
}

/**
 * A fresh schema on the PostgreSQL at BENCH_DATABASE_URL (default the local `test` database), as a
 * DATABASE_URL that migrations create; `drop()` removes it. Null, with a line saying so, when the
 * server is unreachable: the benchmark skips its PostgreSQL rows.
 */
export async function postgresSchema(): Promise<{ url: string; drop: () => Promise<void> } | null> {
  const base = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test'
  const client = new pg.Client({ connectionString: base })
  try {
    await client.connect()
  } catch {
    console.log(`PostgreSQL at ${base} is unreachable: its rows are skipped`)
    return null
  }
  const schema = `bench_${randomBytes(5).toString('hex')}`
  await client.end()
  const url = new URL(base)
  url.searchParams.set('schema', schema)
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: base })
      await c.connect()
      await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      await c.end()
    },
  }
}
