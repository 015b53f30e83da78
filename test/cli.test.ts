import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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

  it('exits as soon as its work is done, whatever the idle timeout of the connection pool', async () => {
    // With a pool left open the process would live on for DB_IDLE_TIMEOUT_MS after printing.
    const started = Date.now()
    const made = await cli(kit.url, 'DB_IDLE_TIMEOUT_MS=120000', 'account:create', '--name', 'Quick exit')
    expect(made.code).toBe(0)
    expect(JSON.parse(made.stdout).account.name).toBe('Quick exit')
    expect(Date.now() - started).toBeLessThan(60_000)
  }, 180_000)

  it('sets the webhook and prints its secret; adds credit and sets the price', async () => {
    const { account } = await kit.seed().account()
    const set = await cli(
      kit.url,
      'WEBHOOK_ALLOW_PRIVATE_NETWORKS=true',
      'webhook:set',
      '--account',
      account.id,
      '--url',
      'http://127.0.0.1:9/hooks',
    )
    expect(set.code).toBe(0)
    expect(JSON.parse(set.stdout)).toEqual({ url: 'http://127.0.0.1:9/hooks', secret: expect.stringMatching(/^whsec_/) })
    const refused = await cli(kit.url, 'webhook:set', '--account', account.id, '--url', 'http://127.0.0.1:9/hooks')
    expect(refused.code).not.toBe(0)
    expect(refused.stderr.trim()).toBe('webhook:set: url: url must resolve to a public address')
    const credit = await cli(kit.url, 'account:credit', '--account', account.id, '--add', '12.5', '--price-per-page', '0.8')
    expect(JSON.parse(credit.stdout)).toEqual({ account: { uuid: account.id, creditBalance: '12.5000', pricePerPage: '0.8000' } })
    const bad = await cli(kit.url, 'account:credit', '--account', account.id, '--add', '1.23456')
    expect(bad.code).not.toBe(0)
  }, 60_000)

  it('adds and lists webhook endpoints; an unknown event type or format changes nothing', async () => {
    const { account } = await kit.seed().account()
    const env = 'WEBHOOK_ALLOW_PRIVATE_NETWORKS=true'
    const add = ['webhook:add', '--account', account.id, '--url', 'http://127.0.0.1:9/hooks']
    const added = await cli(kit.url, env, ...add, '--events', 'test', '--format', 'standard')
    expect(added.code).toBe(0)
    expect(JSON.parse(added.stdout)).toEqual({
      id: expect.any(String),
      url: 'http://127.0.0.1:9/hooks',
      secret: expect.stringMatching(/^whsec_/),
      eventTypes: ['test'],
      payloadFormat: 'standard',
    })
    for (const [extra, line] of [
      [['--events', 'message.status,sms.sent'], 'webhook:add: eventTypes[1]: unknown event type; one of message.status, test'],
      [['--format', 'xml'], 'webhook:add: payloadFormat: one of legacy, standard'],
    ] as const) {
      const refused = await cli(kit.url, env, ...add, ...extra)
      expect(refused.code).not.toBe(0)
      expect(refused.stderr.trim()).toBe(line)
    }
    const listed = await cli(kit.url, 'webhook:list', '--account', account.id)
    expect(JSON.parse(listed.stdout)).toEqual([
      { id: JSON.parse(added.stdout).id, url: 'http://127.0.0.1:9/hooks', eventTypes: ['test'], payloadFormat: 'standard', enabled: true },
    ])
  }, 180_000)

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

  it('explains itself: --help for the CLI and each command, exit 0; unknown commands are named', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const res = await cli(kit.url, ...args)
      expect(res.code, args[0]).toBe(0)
      expect(res.stdout).toMatch(/^usage: npm run cli -- <command> \[options\]/)
      for (const name of ['account:create', 'account:list', 'apikey:list', 'channel:list', 'channel:operator', 'demo:seed'])
        expect(res.stdout).toContain(name)
    }
    for (const args of [
      ['channel:import', '--help'],
      ['help', 'channel:import'],
    ]) {
      const res = await cli(kit.url, ...args)
      expect(res.code).toBe(0)
      expect(res.stdout).toContain('usage: npm run cli -- channel:import <file.json> --account <uuid>')
      expect(res.stdout).toContain('--account')
    }
    const unknown = await cli(kit.url, 'accounts:lst')
    expect(unknown.code).toBe(2)
    expect(unknown.stderr.trim()).toBe('unknown command "accounts:lst"; run `npm run cli -- --help` for the list')
    const badFlag = await cli(kit.url, 'account:list', '--all')
    expect(badFlag.code).toBe(2)
    expect(badFlag.stderr).toContain('account:list --help')
  }, 60_000)

  it('lists accounts, keys (prefixes only) and channels', async () => {
    const made = JSON.parse((await cli(kit.url, 'account:create', '--name', 'Listed')).stdout)
    await cli(kit.url, 'apikey:create', '--account', made.account.uuid)
    const accounts = JSON.parse((await cli(kit.url, 'account:list')).stdout).accounts
    expect(accounts).toContainEqual({
      uuid: made.account.uuid,
      name: 'Listed',
      timezone: 'UTC',
      creditBalance: '0.0000',
      activeKeys: 2,
      createdAt: expect.any(String),
    })
    const keysOut = (await cli(kit.url, 'apikey:list', '--account', made.account.uuid)).stdout
    const keys = JSON.parse(keysOut).keys
    expect(keys).toHaveLength(2)
    expect(keys[0]).toEqual({
      id: anyUuid(),
      prefix: made.apiKey.slice(0, 15),
      label: null,
      createdAt: expect.any(String),
      scopes: ['read', 'contacts:write', 'sms:send', 'sms:receive', 'webhooks:manage', 'channels:manage', 'admin'],
      revokedAt: null,
      expiresAt: null,
      lastUsedAt: null,
    })
    expect(keysOut).not.toContain(made.apiKey.slice(16))
    const missing = await cli(kit.url, 'apikey:list', '--account', '00000000-0000-4000-8000-000000000000')
    expect(missing.code).toBe(1)
    expect(missing.stderr.trim()).toBe('apikey:list: no account 00000000-0000-4000-8000-000000000000')
  }, 60_000)

  it('channel:import without --account says how to add an operator; channel:operator adds one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-channel-'))
    const file = join(dir, 'c.json')
    writeFileSync(file, JSON.stringify({ channel: { slug: 'cli-tv', name: 'CLI TV', timezone: 'UTC' } }))
    const imported = await cli(kit.url, 'channel:import', file)
    expect(imported.code).toBe(0)
    const { channel } = JSON.parse(imported.stdout)
    expect(imported.stderr.trim()).toBe(
      'channel:import: channel cli-tv has no operator account, so no API key can manage it; add one with: npm run cli -- channel:operator --channel cli-tv --account <uuid> (account:list shows the uuids)',
    )
    const { account } = await kit.seed().account()
    const handed = await cli(kit.url, 'channel:operator', '--channel', 'cli-tv', '--account', account.id)
    expect(JSON.parse(handed.stdout)).toEqual({ channel: { uuid: channel.uuid, slug: 'cli-tv', operator: account.id } })
    expect(JSON.parse((await cli(kit.url, 'channel:list')).stdout).channels).toContainEqual({
      uuid: channel.uuid,
      slug: 'cli-tv',
      name: 'CLI TV',
      timezone: 'UTC',
      operator: account.id,
    })
    const again = await cli(kit.url, 'channel:import', file, '--account', account.id)
    expect(again.code).toBe(0)
    expect(again.stderr).toBe('')
    for (const args of [
      ['channel:operator', '--channel', 'no-such-tv', '--account', account.id],
      ['channel:operator', '--channel', 'cli-tv', '--account', '00000000-0000-4000-8000-000000000000'],
      ['channel:operator', '--channel', 'cli-tv'],
    ]) {
      const res = await cli(kit.url, ...args)
      expect(res.code, args.join(' ')).toBe(1)
      expect(res.stderr.trim().split('\n')).toHaveLength(1)
    }
    expect((await kit.db.channel.findUniqueOrThrow({ where: { slug: 'cli-tv' } })).operatorAccountId).toBe(account.id)
  }, 120_000)

  it('demo:seed prints the account, its key, groups and the demo channel', async () => {
    const res = await cli(kit.url, 'demo:seed')
    expect(res.code).toBe(0)
    const out = JSON.parse(res.stdout)
    expect(out).toEqual({
      account: { uuid: anyUuid(), name: 'Demo' },
      apiKey: expect.stringMatching(/^gk_/),
      groups: [
        { uuid: anyUuid(), name: 'Customers' },
        { uuid: anyUuid(), name: 'Staff' },
        { uuid: anyUuid(), name: 'Newsletter' },
      ],
      contacts: 12,
      channel: { uuid: anyUuid(), slug: 'demo-tv' },
    })
    expect((await kit.rest('GET', '/api/contacts', { key: out.apiKey })).body.meta.total).toBe(12)
  }, 60_000)
})
