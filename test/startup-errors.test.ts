// Start-up failures an operator can fix end in one line naming the problem and the fix, exit code 1,
// no stack trace. Each case starts the real server in a child process.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'

const postgres = process.env.TEST_DATABASE_URL

function startServer(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    }),
  )
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
  it('names an unreachable PostgreSQL and does not print the password', async () => {
    const port = await closedPort()
    const line = await expectOneLine(
      { DATABASE_URL: `postgresql://postgres:s3cret-pw@127.0.0.1:${port}/gateway` },
      new RegExp(`^cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port} \\(connection refused\\): start PostgreSQL there or fix the host and port in DATABASE_URL$`),
    )
    expect(line).not.toContain('s3cret')
  }, 40_000)

  it('names a DATABASE_URL that is not a URL', async () => {
    await expectOneLine({ DATABASE_URL: 'postgresql://postgres@127.0.0.1:99999/gateway' }, /^DATABASE_URL is not a valid URL: write it as postgresql:\/\/user:password@host:5432\/database/)
  }, 40_000)

  it('names an SQLite path whose parent is a file', async () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'occupied'), 'not a directory')
    const file = join(dir, 'occupied', 'gateway.db')
    await expectOneLine(
      { DATABASE_URL: `file:${file}` },
      new RegExp(`^cannot create or open the SQLite database "${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}" \\(.+\\): point DATABASE_URL at a writable path`),
    )
  }, 40_000)

  it('names an SQLite path that cannot be opened as a database file', async () => {
    const dir = tempDir()
    await expectOneLine({ DATABASE_URL: `file:${dir}` }, /^cannot create or open the SQLite database ".+" \(cannot open the file\): point DATABASE_URL at a writable path/)
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
        new RegExp(`^database "${name}" does not exist on ${base.hostname}:${base.port || 5432}: create it with \`createdb -h ${base.hostname} -p ${base.port || 5432} -U postgres ${name}\``),
      )
    }, 40_000)

    it('names a user PostgreSQL refuses', async () => {
      const user = `nobody_${randomBytes(4).toString('hex')}`
      await expectOneLine(
        { DATABASE_URL: withUrl((u) => ((u.username = user), (u.password = 'wrong'))) },
        new RegExp(`^PostgreSQL at ${base.hostname}:${base.port || 5432} refused user "${user}" \\(.*\\): fix the user name and password in DATABASE_URL$`),
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
  })
})
