import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { anyUuid } from './kit/matchers.js'

const run = promisify(execFile)

async function cli(url: string, ...args: string[]) {
  const extraEnv = args[0]?.includes('=') ? Object.fromEntries([args.shift()!.split('=')]) : {}
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      env: { ...process.env, DATABASE_URL: url, ...extraEnv },
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

  it('sets the webhook and prints its secret; adds credit and sets the price', async () => {
    const { account } = await kit.seed().account()
    const set = await cli(kit.url, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS=true', 'webhook:set', '--account', account.id, '--url', 'http://127.0.0.1:9/hooks')
    expect(set.code).toBe(0)
    expect(JSON.parse(set.stdout)).toEqual({ url: 'http://127.0.0.1:9/hooks', secret: expect.stringMatching(/^whsec_/) })
    const refused = await cli(kit.url, 'webhook:set', '--account', account.id, '--url', 'http://127.0.0.1:9/hooks')
    expect(refused.code).not.toBe(0)
    expect(refused.stderr.trim()).toBe('webhook:set: url: url resolves to 127.0.0.1, which is not a public address')
    const credit = await cli(kit.url, 'account:credit', '--account', account.id, '--add', '12.5', '--price-per-page', '0.8')
    expect(JSON.parse(credit.stdout)).toEqual({ account: { uuid: account.id, creditBalance: '12.5000', pricePerPage: '0.8000' } })
    const bad = await cli(kit.url, 'account:credit', '--account', account.id, '--add', '1.23456')
    expect(bad.code).not.toBe(0)
  }, 60_000)

  it('exits non-zero with one line on bad input', async () => {
    for (const args of [
      ['account:create'],
      ['account:create', '--name', ' '],
      ['account:create', '--nam', 'x'],
      ['apikey:create', '--account', '00000000-0000-4000-8000-000000000000'],
      ['apikey:revoke', '--key', 'gk_nothing'],
      ['no:such-command'],
      ['webhook:set', '--account', '00000000-0000-4000-8000-000000000000', '--url', 'https://example.com/hook'],
      ['account:credit', '--account', '00000000-0000-4000-8000-000000000000', '--add', '1'],
    ]) {
      const res = await cli(kit.url, ...args)
      expect(res.code, args.join(' ')).not.toBe(0)
      expect(res.stdout).toBe('')
      expect(res.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1)
    }
  }, 60_000)
})
