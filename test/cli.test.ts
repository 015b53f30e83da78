import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { anyUuid } from './kit/matchers.js'

const run = promisify(execFile)

async function cli(url: string, ...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      env: { ...process.env, DATABASE_URL: url },
    })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

describe.each(targets)('CLI on $name', (target) => {
  const kit = useKit(target)

  it('creates an account with a working key, adds and revokes keys', async () => {
    const made = await cli(kit.url, 'account:create', '--name', 'Acme Ltd')
    expect(made.code).toBe(0)
    const out = JSON.parse(made.stdout)
    expect(out).toEqual({ account: { uuid: anyUuid(), name: 'Acme Ltd' }, apiKey: expect.stringMatching(/^gk_[0-9a-f]{12}_[\w-]{43}$/) })
    expect(made.stdout.trim().split('\n')).toHaveLength(1)
    expect((await kit.rest('GET', '/api/contacts', { key: out.apiKey })).status).toBe(200)

    const second = JSON.parse((await cli(kit.url, 'apikey:create', '--account', out.account.uuid)).stdout)
    expect((await kit.rest('GET', '/api/contacts', { key: second.apiKey })).status).toBe(200)
    const revoked = await cli(kit.url, 'apikey:revoke', '--key', second.prefix)
    expect(revoked.code).toBe(0)
    expect((await kit.rest('GET', '/api/contacts', { key: second.apiKey })).status).toBe(401)
    expect((await kit.rest('GET', '/api/contacts', { key: out.apiKey })).status).toBe(200)
  }, 60_000)

  it('exits non-zero with one line on bad input', async () => {
    for (const args of [
      ['account:create'],
      ['account:create', '--name', ' '],
      ['account:create', '--nam', 'x'],
      ['apikey:create', '--account', '00000000-0000-4000-8000-000000000000'],
      ['apikey:revoke', '--key', 'gk_nothing'],
      ['no:such-command'],
    ]) {
      const res = await cli(kit.url, ...args)
      expect(res.code, args.join(' ')).not.toBe(0)
      expect(res.stdout).toBe('')
      expect(res.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1)
    }
  }, 60_000)
})
