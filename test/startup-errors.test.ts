// Start-up failures an operator can fix end in one line naming the problem and the fix, exit code 1,
// no stack trace. Each case starts the real server in a child process.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { spawnServer } from './kit/server-process.js'

const postgres = process.env.TEST_DATABASE_URL

async function startServer(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now()
  const server = spawnServer(env)
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 30_000)
  const code = await server.exited
  clearTimeout(timer)
  return { code, stdout: server.output(), stderr: server.errors(), ms: Date.now() - started }
}

/** Exit code 1 and exactly one line on stderr, matching `pattern`. */
async function expectOneLine(env: Record<string, string>, pattern: RegExp) {
  const { code, stderr } = await startServer(env)
  expect(stderr).toMatch(/\n$/)
  const lines = stderr.trimEnd().split('\n')
  expect(lines, stderr).toHaveLength(1)
  expect(lines[0]).toMatch(pattern)
  expect(stderr).not.toMatch(/^\s+at /m)
  expect(code).toBe(1)
  return lines[0]!
}

async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

const dirs: string[] = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-startup-'))
  dirs.push(dir)
  return dir
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

describe('start-up errors', () => {
  it('names a SQLite path whose directory cannot be made, at once (it used to hang with no output)', async () => {
    const started = Date.now()
    await expectOneLine({ DATABASE_URL: 'file:/proc/nope/x.db' }, /^cannot create or open the SQLite database "\/proc\/nope\/x\.db"/)
    // Node's recursive mkdir spun forever there; a hang would be killed at 30 s and fail above.
    expect(Date.now() - started).toBeLessThan(25_000)
  }, 40_000)

  it('names a trusted documents manifest entry that is not the hash of its document, in one line', async () => {
    const dir = tempDir()
    const manifest = join(dir, 'manifest.json')
    writeFileSync(manifest, JSON.stringify({ ['0'.repeat(64)]: '{ a }' }))
    await expectOneLine(
      { DATABASE_URL: `file:${join(dir, 'x.db')}`, GRAPHQL_TRUSTED_DOCUMENTS_FILE: manifest },
      /^GRAPHQL_TRUSTED_DOCUMENTS_FILE .*manifest\.json: the entry 0{16}… is not the sha256 of its document$/,
    )
  }, 40_000)

  it('names a PORT that is not a number in one plain line', async () => {
    await expectOneLine({ PORT: 'abc' }, /^Invalid configuration: PORT: must be a number, not "abc"$/)
  }, 40_000)

  it('names an unreachable PostgreSQL and does not print the password', async () => {
    const port = await closedPort()
    const line = await expectOneLine(
      { DATABASE_URL: `postgresql://postgres:s3cret-pw@127.0.0.1:${port}/gateway` },
      new RegExp(
        `^cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port} \\(connection refused\\): start PostgreSQL there or fix the host and port in DATABASE_URL$`,
      ),
    )
    expect(line).not.toContain('s3cret')
  }, 40_000)

  it('names a DATABASE_URL that is not a URL', async () => {
    await expectOneLine(
      { DATABASE_URL: 'postgresql://postgres@127.0.0.1:99999/gateway' },
      /^DATABASE_URL is not a valid URL: write it as postgresql:\/\/user:password@host:5432\/database/,
    )
  }, 40_000)

  it('names an SQLite path whose parent is a file', async () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'occupied'), 'not a directory')
    const file = join(dir, 'occupied', 'gateway.db')
    await expectOneLine(
      { DATABASE_URL: `file:${file}` },
      new RegExp(
        `^cannot create or open the SQLite database "${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}" \\(.+\\): point DATABASE_URL at a writable path`,
      ),
    )
  }, 40_000)

  it('names an SQLite path that cannot be opened as a database file', async () => {
    const dir = tempDir()
    await expectOneLine(
      { DATABASE_URL: `file:${dir}` },
      /^cannot create or open the SQLite database ".+" \(cannot open the file\): point DATABASE_URL at a writable path/,
    )
  }, 40_000)

  it('names a port already in use', async () => {
    const busy: Server = createServer()
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
    const { port } = busy.address() as { port: number }
    try {
      await expectOneLine(
        { DATABASE_URL: `file:${join(tempDir(), 'gateway.db')}`, PORT: String(port), HOST: '127.0.0.1', WORKER_ENABLED: 'false' },
        new RegExp(`^port ${port} on 127\\.0\\.0\\.1 is already in use: stop the other process or set PORT to a free port$`),
      )
    } finally {
      busy.close()
    }
  }, 40_000)

  describe.skipIf(!postgres)('on the local PostgreSQL', () => {
    const base = new URL(postgres ?? 'postgresql://unused')
    const withUrl = (change: (u: URL) => void) => {
      const u = new URL(base)
      change(u)
      return u.toString()
    }

    it('names a database that does not exist, with the createdb command', async () => {
      const name = `gateway_missing_${randomBytes(4).toString('hex')}`
      await expectOneLine(
        { DATABASE_URL: withUrl((u) => (u.pathname = `/${name}`)) },
        new RegExp(
          `^database "${name}" does not exist on ${base.hostname}:${base.port || 5432}: create it with \`createdb -h ${base.hostname} -p ${base.port || 5432} -U postgres ${name}\``,
        ),
      )
    }, 40_000)

    it('names a user PostgreSQL refuses', async () => {
      const user = `nobody_${randomBytes(4).toString('hex')}`
      await expectOneLine(
        { DATABASE_URL: withUrl((u) => ((u.username = user), (u.password = 'wrong'))) },
        new RegExp(
          `^PostgreSQL at ${base.hostname}:${base.port || 5432} refused user "${user}" \\(.*\\): fix the user name and password in DATABASE_URL$`,
        ),
      )
    }, 40_000)

    it('names any other refusal by its SQLSTATE (a user without the right to create the schema)', async () => {
      const role = `limited_${randomBytes(4).toString('hex')}`
      const admin = new pg.Client({ connectionString: postgres })
      await admin.connect()
      await admin.query(`CREATE ROLE ${role} LOGIN`)
      try {
        await expectOneLine(
          { DATABASE_URL: withUrl((u) => ((u.username = role), u.searchParams.set('schema', `s_${role}`))) },
          /^PostgreSQL at .+ refused to start the service \(SQLSTATE 42501: permission denied for database \w+\): check the user's rights on database "\w+"$/,
        )
      } finally {
        await admin.query(`DROP ROLE ${role}`)
        await admin.end()
      }
    }, 40_000)

    it('names a refusal of the first read of the migrations (a user without rights on an existing schema)', async () => {
      // The usual start reads the applied migrations before anything else (src/db/migrate.ts):
      // a refusal there is not taken for a schema still to be made.
      const role = `limited_${randomBytes(4).toString('hex')}`
      const schema = `s_${role}`
      const admin = new pg.Client({ connectionString: postgres })
      await admin.connect()
      await admin.query(`CREATE ROLE ${role} LOGIN`)
      await admin.query(`CREATE SCHEMA ${schema}`)
      await admin.query(
        `CREATE TABLE ${schema}."_prisma_migrations" ("migration_name" TEXT, "finished_at" TIMESTAMPTZ, "rolled_back_at" TIMESTAMPTZ)`,
      )
      try {
        await expectOneLine(
          { DATABASE_URL: withUrl((u) => ((u.username = role), u.searchParams.set('schema', schema))) },
          new RegExp(
            `^PostgreSQL at .+ refused to start the service \\(SQLSTATE 42501: permission denied for schema ${schema}\\): check the user's rights on database "\\w+"$`,
          ),
        )
      } finally {
        await admin.query(`DROP SCHEMA ${schema} CASCADE`)
        await admin.query(`DROP ROLE ${role}`)
        await admin.end()
      }
    }, 40_000)
  })
})
