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
