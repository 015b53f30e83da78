// The real databases the suite runs on: SQLite always, PostgreSQL when TEST_DATABASE_URL is set.
// Each test file gets its own SQLite file or its own PostgreSQL schema, dropped afterwards.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import pg from 'pg'

export interface TestDatabase {
  url: string
  drop(): Promise<void>
}

export interface TestTarget {
  name: 'sqlite' | 'postgresql'
  create(): Promise<TestDatabase>
}

const sqlite: TestTarget = {
  name: 'sqlite',
  async create() {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-test-'))
    return { url: `file:${join(dir, 'test.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) }
  },
}

const postgres = (base: string): TestTarget => ({
  name: 'postgresql',
  async create() {
    const schema = `test_${randomBytes(6).toString('hex')}`
    const url = new URL(base)
    url.searchParams.set('schema', schema)
    return {
      url: url.toString(),
      async drop() {
        const client = new pg.Client({ connectionString: base })
        await client.connect()
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
        await client.end()
      },
    }
  },
})

export const targets: TestTarget[] = [sqlite, ...(process.env.TEST_DATABASE_URL ? [postgres(process.env.TEST_DATABASE_URL)] : [])]

/** A plain pg connection to the PostgreSQL test database at `url` (a kit's), with its schema as search_path: a second session for lock and race tests. */
export async function schemaClient(url: string): Promise<pg.Client> {
  const target = new URL(url)
  const schema = target.searchParams.get('schema')!
  target.search = ''
  const client = new pg.Client({ connectionString: target.toString() })
  await client.connect()
  await client.query(`SET search_path TO "${schema}"`)
  return client
}
