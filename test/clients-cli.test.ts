// The CLI as a newcomer runs it, beside a real server (a child process) on each database: the
// server in one terminal (its own PORT), `npm run cli` in another without PORT or PUBLIC_BASE_URL.
// console:link prints a link that server answers; apikey:create takes --label; a flag the command
// does not take is refused with one line and a non-zero exit, and nothing is created.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, spawnServer } from './kit/server-process.js'
import { targets, type TestDatabase } from './kit/databases.js'

/** The second terminal: the test's environment without the server's PORT or PUBLIC_BASE_URL. */
function terminal(databaseUrl: string, extra: Record<string, string> = {}) {
  const env: Record<string, string | undefined> = { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', ...extra }
  if (!('PORT' in extra)) delete env.PORT
  if (!('PUBLIC_BASE_URL' in extra)) delete env.PUBLIC_BASE_URL
  return env
}

/** The CLI from source (what `npm run cli` runs), for its exit code and both streams. */
async function cliRun(env: Record<string, string | undefined>, ...args: string[]) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}

describe.each(targets)('the CLI beside a running server on $name', (target) => {
  let database: TestDatabase
  let server: ReturnType<typeof spawnServer>
  let base: string
  let accountId: string

  beforeAll(async () => {
    database = await target.create()
    accountId = JSON.parse(await runCli(terminal(database.url), 'account:create', '--name', 'Newcomer')).account.uuid
    // Its own port (PORT=0: the one the system gives), no PUBLIC_BASE_URL.
    server = spawnServer({ DATABASE_URL: database.url, PUBLIC_BASE_URL: undefined })
    base = await server.listening(60_000)
  }, 120_000)

  afterAll(async () => {
    server?.child.kill('SIGTERM')
    await server?.exited
    await database?.drop()
  })

  it('console:link, run with neither PORT nor PUBLIC_BASE_URL, prints a link the running server answers', async () => {
    const link = await runCli(terminal(database.url), 'console:link', '--account', accountId)
    const port = new URL(base).port
    expect(link).toMatch(new RegExp(`^http://localhost:${port}/console/sign-in\\?token=[A-Za-z0-9_-]{43}$`))
    const page = await fetch(link)
    expect(page.status).toBe(200)
    expect(await page.text()).toMatch(/Sign in/)
  }, 120_000)

  it('console:link follows PUBLIC_BASE_URL, or PORT, when the CLI is given one', async () => {
    const given = await cliRun(
      terminal(database.url, { PUBLIC_BASE_URL: 'https://gateway.example/' }),
      'console:link',
      '--account',
      accountId,
    )
    expect(given.code).toBe(0)
    expect(given.stdout.trim()).toMatch(/^https:\/\/gateway\.example\/console\/sign-in\?token=/)
    const port = await cliRun(terminal(database.url, { PORT: '5500' }), 'console:link', '--account', accountId)
    expect(port.stdout.trim()).toMatch(/^http:\/\/localhost:5500\/console\/sign-in\?token=/)
  }, 120_000)

  it('apikey:create --label names the key', async () => {
    const made = JSON.parse(await runCli(terminal(database.url), 'apikey:create', '--account', accountId, '--label', '  billing server '))
    expect(made).toEqual({
      id: expect.any(String),
      prefix: expect.stringMatching(/^gk_/),
      apiKey: expect.any(String),
      label: 'billing server',
      scopes: ['read', 'contacts:write', 'sms:send', 'sms:receive', 'webhooks:manage', 'channels:manage', 'admin'],
      expiresAt: null,
    })
    const { keys } = JSON.parse(await runCli(terminal(database.url), 'apikey:list', '--account', accountId))
    expect(keys.find((k: { id: string }) => k.id === made.id)).toMatchObject({ label: 'billing server' })
    // The key works.
    const res = await fetch(`${base}/api/contacts`, { headers: { authorization: `Bearer ${made.apiKey}` } })
    expect(res.status).toBe(200)
  }, 120_000)

  it('refuses what a command does not take, with one line and a non-zero exit, and creates nothing', async () => {
    const env = terminal(database.url)
    const before = JSON.parse((await cliRun(env, 'apikey:list', '--account', accountId)).stdout).keys.length
    const cases: [string[], RegExp][] = [
      [
        ['apikey:create', '--account', accountId, '--lable', 'typo'],
        /^apikey:create: unknown option --lable; it takes --account, --label, --scopes, --expires-in;/,
      ],
      [['apikey:create', '--account', accountId, '--account', accountId], /^apikey:create: --account is given more than once;/],
      [['apikey:create', '--account', '--label', 'x'], /^apikey:create: --account needs a value/],
      [
        ['apikey:create', '--account', accountId, 'billing'],
        /^apikey:create: unexpected argument "billing"; it takes --account, --label, --scopes, --expires-in;/,
      ],
      // (--label= is an empty label.)
      [['apikey:create', '--account', accountId, '--label='], /^apikey:create: label: A label is required$/],
      [['account:list', '--all'], /^account:list: unknown option --all; it takes no options;/],
    ]
    for (const [args, message] of cases) {
      const run = await cliRun(env, ...args)
      expect(run.code, args.join(' ')).toBeGreaterThan(0)
      expect(run.stdout, args.join(' ')).toBe('')
      const lines = run.stderr.trim().split('\n')
      expect(lines, args.join(' ')).toHaveLength(1)
      expect(lines[0]).toMatch(message)
    }
    expect(JSON.parse((await cliRun(env, 'apikey:list', '--account', accountId)).stdout).keys).toHaveLength(before)
  }, 300_000)
})
