// The audit log (issue 54, item 2): changes to keys, console sessions and the webhook are recorded
// with their actor and address, readable by admin keys (paged), append-only, purged after
// AUDIT_RETENTION_DAYS.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { isInputObjectType, isObjectType, getNamedType } from 'graphql'
import { targets } from './kit/databases.js'
import { useKit, fixedClock } from './kit/kit.js'
import { schema } from '../src/graphql/schema.js'
import { createApiKey } from '../src/auth/api-keys.js'
import { OPERATOR, recordAudit } from '../src/audit/record-audit.js'
import { purgeExpiredAuditEvents } from '../src/audit/purge-audit.js'
import { createAccount } from '../src/accounts/create-account.js'
import { assignSim } from '../src/sms/sims.js'
import { MAX_ENDPOINTS_PER_ACCOUNT } from '../src/webhooks/endpoints.js'

/** The real CLI in a child process, as the operator runs it. */
async function cli(url: string, ...args: string[]) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      env: { ...process.env, DATABASE_URL: url },
    })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

const AUDIT_PAGE = `query($first: Int, $after: String) {
  auditEvents(first: $first, after: $after) {
    totalCount
    edges { node { action actorKind actorId actorLabel target address details } }
    pageInfo { hasNextPage endCursor }
  }
}`

describe('the audit log is append-only', () => {
  it('no mutation takes or returns an audit entry', () => {
    const mutation = schema.getMutationType()!
    const touching = Object.values(mutation.getFields()).filter(
      (f) =>
        getNamedType(f.type).name.startsWith('AuditEvent') ||
        f.args.some((a) => {
          const named = getNamedType(a.type)
          return isInputObjectType(named) && Object.keys(named.getFields()).length > 0 && named.name.startsWith('Audit')
        }),
    )
    expect(touching.map((f) => f.name)).toEqual([])
    expect(isObjectType(schema.getType('AuditEvent'))).toBe(true)
  })

  it('no code updates an entry, and only the retention purge deletes', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const path = join(dir, name)
        if (path.startsWith(join('src', 'generated'))) return []
        return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : []
      })
    const writers = [...files('src'), ...files('rest-compat')].filter((path) =>
      /auditEvent\s*\.\s*(update|updateMany|upsert|delete|deleteMany|updateManyAndReturn)\b|"AuditEvent"/.test(readFileSync(path, 'utf8')),
    )
    expect(writers).toEqual([join('src', 'audit', 'purge-audit.ts')])
  })
})

describe.each(targets)('the audit log on $name', (target) => {
  const clock = fixedClock('2026-06-01T09:00:00Z')
  const BASE = 'http://127.0.0.1:4000'
  const kit = useKit(target, { clock, env: { TRUST_PROXY: 'true', PUBLIC_BASE_URL: BASE, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } })

  const asClient = (key: string, query: string, variables: Record<string, unknown> = {}, address = '198.51.100.9') =>
    kit.rest('POST', '/graphql', { key, headers: { 'x-forwarded-for': address }, body: { query, variables } })

  it('records key, console and webhook changes with who, what and from where; admin keys read it, paged', async () => {
    const { account, key } = await kit.seed().account()
    const prefix = key.slice(0, 15)
    const made = await asClient(key, 'mutation { createApiKey(label: "CI", scopes: [READ]) { key apiKey { id prefix } } }')
    const newKey = made.body.data.createApiKey
    await asClient(key, 'mutation($id: ID!) { rollApiKey(id: $id, graceHours: 1) { key } }', { id: newKey.apiKey.id })
    await asClient(key, 'mutation($id: ID!) { revokeApiKey(id: $id) { id } }', { id: newKey.apiKey.id })
    await asClient(key, 'mutation { setWebhook(url: "http://127.0.0.1:9/hook") { secret } }')
    await asClient(key, 'mutation { rotateWebhookSecret(overlapHours: 0) { secret } }')
    await asClient(key, 'mutation { removeWebhook { deletedId } }')
    const link = await asClient(key, 'mutation { createConsoleLink { url } }')
    const token = new URL(link.body.data.createConsoleLink.url).searchParams.get('token')!
    const signIn = await kit.app.fetch(
      new Request(`${BASE}/console/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: BASE, 'x-forwarded-for': '203.0.113.5' },
        body: new URLSearchParams({ token }).toString(),
      }),
      { req: { socket: { remoteAddress: '10.0.0.1' } } } as never,
    )
    expect(signIn.status).toBe(303)
    await asClient(key, 'mutation { signOut(everywhere: true) { sessionsEnded } }')

    const page = await asClient(key, AUDIT_PAGE, { first: 100 })
    const entries = page.body.data.auditEvents.edges.map((e: { node: unknown }) => e.node)
    expect(entries.map((e: { action: string }) => e.action)).toEqual([
      'console.sign_out',
      'console.sign_in',
      'console.link_create',
      'webhook.remove',
      'webhook.rotate_secret',
      'webhook.set',
      'apikey.revoke',
      'apikey.roll',
      'apikey.create',
    ])
    const byKey = { actorKind: 'API_KEY', actorLabel: prefix, address: '198.51.100.9' }
    expect(entries[8]).toMatchObject({ ...byKey, target: newKey.apiKey.prefix })
    expect(JSON.parse(entries[8].details)).toMatchObject({ label: 'CI', scopes: ['read'] })
    expect(entries[5]).toMatchObject({ ...byKey, target: 'http://127.0.0.1:9/hook' })
    expect(entries[1]).toMatchObject({ actorKind: 'CONSOLE_SESSION', actorLabel: 'console session', address: '203.0.113.5' })
    expect(page.body.data.auditEvents.totalCount).toBe(9)
    // Nothing secret is recorded.
    expect(JSON.stringify(entries)).not.toContain(newKey.key ?? 'gk_never')
    expect(JSON.stringify(entries)).not.toContain(token)

    // Paged: two at a time, in the same order.
    const seen: string[] = []
    let after: string | null = null
    do {
      const next: {
        body: { data: { auditEvents: { edges: { node: { action: string } }[]; pageInfo: { hasNextPage: boolean; endCursor: string } } } }
      } = await asClient(key, AUDIT_PAGE, { first: 2, after })
      seen.push(...next.body.data.auditEvents.edges.map((e) => e.node.action))
      after = next.body.data.auditEvents.pageInfo.hasNextPage ? next.body.data.auditEvents.pageInfo.endCursor : null
    } while (after)
    expect(seen).toEqual(entries.map((e: { action: string }) => e.action))

    // Another account's log is its own.
    const other = await kit.seed().account()
    expect((await asClient(other.key, AUDIT_PAGE)).body.data.auditEvents.totalCount).toBe(0)
    // A key without admin cannot read it.
    const reader = await createApiKey(kit.deps, account.id, { scopes: ['read'] })
    const refused = await asClient(reader.apiKey, AUDIT_PAGE)
    expect(refused.body.errors[0].extensions.code).toBe('FORBIDDEN')
  })

  it('a refused change records nothing', async () => {
    const { account, key } = await kit.seed().account()
    const count = () => kit.db.auditEvent.count({ where: { accountId: account.id } })
    const before = await count()
    await asClient(key, 'mutation { createApiKey(label: "") { key } }')
    await asClient(key, 'mutation { revokeApiKey(id: "gk_000000000000") { id } }')
    await asClient(key, 'mutation { rollApiKey(id: "gk_000000000000", graceHours: 1) { key } }')
    const reader = await createApiKey(kit.deps, account.id, { scopes: ['read'] })
    await asClient(reader.apiKey, 'mutation { createConsoleLink { url } }')
    expect(await count()).toBe(before)
  })

  const CREATE_ENDPOINT = 'mutation($url: String!) { createWebhookEndpoint(input: { url: $url }) { webhook { id } } }'

  it('refused webhook changes record nothing: a bad URL, the endpoint cap, an unknown endpoint, a bad overlap', async () => {
    const { account, key } = await kit.seed().account()
    const count = () => kit.db.auditEvent.count({ where: { accountId: account.id } })
    const endpoints = () => kit.db.webhookEndpoint.findMany({ where: { accountId: account.id }, orderBy: { id: 'asc' } })
    const refused = async (query: string, variables: Record<string, unknown> = {}) => {
      const before = [await count(), await endpoints()]
      const answer = await asClient(key, query, variables)
      expect(answer.body.errors?.[0]?.extensions?.code, query).toMatch(/^(VALIDATION_FAILED|NOT_FOUND)$/)
      expect([await count(), await endpoints()], query).toEqual(before)
    }
    // Nothing to change yet.
    await refused('mutation { removeWebhook { deletedId } }')
    await refused('mutation { rotateWebhookSecret(overlapHours: 1) { secret } }')
    await refused('mutation { setWebhook(url: "not a url") { secret } }')
    await refused(CREATE_ENDPOINT, { url: 'ftp://127.0.0.1/hook' })

    for (let i = 0; i < MAX_ENDPOINTS_PER_ACCOUNT; i++)
      expect((await asClient(key, CREATE_ENDPOINT, { url: `http://127.0.0.1:9/h${i}` })).body.errors).toBeUndefined()
    expect(await count()).toBe(MAX_ENDPOINTS_PER_ACCOUNT)
    const [first] = await endpoints()
    await refused(CREATE_ENDPOINT, { url: 'http://127.0.0.1:9/one-too-many' })
    await refused('mutation($id: ID!) { updateWebhookEndpoint(id: $id, input: { url: "javascript:alert(1)" }) { id } }', { id: first!.id })
    await refused('mutation($id: ID!) { updateWebhookEndpoint(id: $id, input: { eventTypes: [] }) { id } }', { id: first!.id })
    await refused('mutation { updateWebhookEndpoint(id: "nope", input: { url: "http://127.0.0.1:9/x" }) { id } }')
    await refused('mutation { deleteWebhookEndpoint(id: "nope") { deletedId } }')
    await refused('mutation { rotateWebhookSecret(overlapHours: 169) { secret } }')
    await refused('mutation { recoverFailedWebhookDeliveries(since: "2999-01-01T00:00:00Z") { recovered } }')
    // Another account's endpoint is not this account's to change.
    const other = await kit.seed().account()
    await refused('mutation($id: ID!) { deleteWebhookEndpoint(id: $id) { deletedId } }', {
      id: (await asClient(other.key, CREATE_ENDPOINT, { url: 'http://127.0.0.1:9/theirs' })).body.data.createWebhookEndpoint.webhook.id,
    })
  })

  it('a change whose audit entry cannot be written is undone: change and entry commit together', async () => {
    const { account, key } = await kit.seed().account()
    const main = (await asClient(key, 'mutation { setWebhook(url: "http://127.0.0.1:9/a") { webhook { id } } }')).body.data.setWebhook
    const second = (await asClient(key, CREATE_ENDPOINT, { url: 'http://127.0.0.1:9/b' })).body.data.createWebhookEndpoint.webhook
    const failedAt = new Date(clock.now().getTime() - 60_000)
    await kit.db.webhookDelivery.create({
      data: {
        id: 'msg_failed_1',
        accountId: account.id,
        endpointId: main.webhook.id,
        body: '{}',
        state: 'failed',
        nextAttemptAt: failedAt,
        finishedAt: failedAt,
      },
    })
    const state = async () => ({
      endpoints: await kit.db.webhookEndpoint.findMany({ where: { accountId: account.id }, orderBy: { id: 'asc' } }),
      deliveries: await kit.db.webhookDelivery.findMany({ where: { accountId: account.id } }),
      keys: await kit.db.apiKey.count({ where: { accountId: account.id } }),
      sims: await kit.db.sim.count(),
      accounts: await kit.db.account.count(),
      audit: await kit.db.auditEvent.count(),
    })
    const before = await state()

    // Every audit entry now fails to insert (on SQLite through a NOT NULL violation: the adapter
    // would retry a RAISE() as if it were a foreign-key race).
    if (target.name === 'sqlite') {
      await kit.db.$executeRawUnsafe(
        `CREATE TRIGGER refuse_audit BEFORE INSERT ON "AuditEvent" BEGIN INSERT INTO "Account" ("id", "name") VALUES (NULL, 'refused'); END`,
      )
    } else {
      await kit.db.$executeRawUnsafe(
        `CREATE FUNCTION refuse_audit() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'audit refused'; END $$ LANGUAGE plpgsql`,
      )
      await kit.db.$executeRawUnsafe(
        `CREATE TRIGGER refuse_audit BEFORE INSERT ON "AuditEvent" FOR EACH ROW EXECUTE FUNCTION refuse_audit()`,
      )
    }
    try {
      const changes: [string, Record<string, unknown>][] = [
        ['mutation { setWebhook(url: "http://127.0.0.1:9/changed") { secret } }', {}],
        [CREATE_ENDPOINT, { url: 'http://127.0.0.1:9/c' }],
        [
          'mutation($id: ID!) { updateWebhookEndpoint(id: $id, input: { url: "http://127.0.0.1:9/d", payloadFormat: STANDARD }) { id } }',
          { id: second.id },
        ],
        ['mutation($id: ID!) { rotateWebhookSecret(endpointId: $id, overlapHours: 0) { secret } }', { id: second.id }],
        ['mutation($id: ID!) { deleteWebhookEndpoint(id: $id) { deletedId } }', { id: second.id }],
        ['mutation { removeWebhook { deletedId } }', {}],
        ['mutation($since: DateTime!) { recoverFailedWebhookDeliveries(since: $since) { recovered } }', { since: '2020-01-01T00:00:00Z' }],
        ['mutation { createApiKey(label: "never") { key } }', {}],
        ['mutation { createConsoleLink { url } }', {}],
      ]
      for (const [query, variables] of changes) {
        const answer = await asClient(key, query, variables)
        expect(answer.body.errors?.[0]?.extensions?.code, query).toBe('INTERNAL')
      }
      const refusal = target.name === 'sqlite' ? /Null constraint violation on the fields: \(`id`\)/ : /audit refused/
      await expect(createAccount(kit.deps, { name: 'Never' }, { actor: OPERATOR, address: null })).rejects.toThrow(refusal)
      await expect(assignSim(kit.deps, { accountId: account.id, number: '22999' })).rejects.toThrow(refusal)
      expect(await state()).toEqual(before)
    } finally {
      await kit.db.$executeRawUnsafe(target.name === 'sqlite' ? 'DROP TRIGGER refuse_audit' : 'DROP TRIGGER refuse_audit ON "AuditEvent"')
    }
    // With the log writable again, the same change commits with its entry.
    expect((await asClient(key, 'mutation { removeWebhook { deletedId } }')).body.errors).toBeUndefined()
    expect(
      await kit.db.auditEvent.count({ where: { accountId: account.id, action: 'webhook.remove', target: 'http://127.0.0.1:9/a' } }),
    ).toBe(1)
  })

  it('the CLI records the operator; the worker purges entries older than AUDIT_RETENTION_DAYS', async () => {
    const { account } = await kit.seed().account()
    const old = new Date(clock.now().getTime() - 366 * 86_400_000)
    await recordAudit(kit.db, { accountId: account.id, actor: OPERATOR, action: 'apikey.create', at: old })
    await recordAudit(kit.db, { accountId: account.id, actor: OPERATOR, action: 'account.credit', details: { added: '5' } })
    const purged = await purgeExpiredAuditEvents(kit.deps, { minIntervalMs: 0 })
    expect(purged).toBeGreaterThanOrEqual(1)
    const left = await kit.db.auditEvent.findMany({ where: { accountId: account.id } })
    expect(left.map((e) => [e.action, e.actorKind, e.actorLabel, e.address])).toEqual([
      ['account.credit', 'operator', 'operator (CLI)', null],
    ])
  })

  it('sim:assign and sim:unassign record the operator, the SIM and the account; refused ones record nothing', async () => {
    const { account, key } = await kit.seed().account()
    const other = await kit.seed().account()
    const entries = async (accountId: string) =>
      (await kit.db.auditEvent.findMany({ where: { accountId, action: { startsWith: 'sim.' } }, orderBy: { id: 'asc' } })).map((e) => ({
        action: e.action,
        actor: [e.actorKind, e.actorId, e.actorLabel],
        target: e.target,
        details: e.details && JSON.parse(e.details),
        address: e.address,
      }))
    const byOperator = { actor: ['operator', null, 'operator (CLI)'], address: null }

    expect((await cli(kit.url, 'sim:assign', '--account', account.id, '--number', '0733 000 101')).code).toBe(0)
    // Again to its owner: nothing changes, nothing is recorded.
    expect(JSON.parse((await cli(kit.url, 'sim:assign', '--account', account.id, '--number', '+254733000101')).stdout).created).toBe(false)
    // Refused: held by another account, not a number, an unknown account, nothing to unassign.
    for (const args of [
      ['sim:assign', '--account', other.account.id, '--number', '+254733000101'],
      ['sim:assign', '--account', other.account.id, '--number', 'not-a-number'],
      ['sim:assign', '--account', '00000000-0000-4000-8000-000000000000', '--number', '22777'],
      ['sim:unassign', '--number', '22778'],
    ]) {
      const refused = await cli(kit.url, ...args)
      expect(refused.code, args.join(' ')).toBe(1)
    }
    expect(await entries(other.account.id)).toEqual([])
    expect(await kit.db.auditEvent.count({ where: { action: { startsWith: 'sim.' }, target: { in: ['22777', '22778'] } } })).toBe(0)
    expect((await cli(kit.url, 'sim:unassign', '--number', '+254733000101')).code).toBe(0)

    expect(await entries(account.id)).toEqual([
      { action: 'sim.assign', ...byOperator, target: '+254733000101', details: { account: account.id } },
      { action: 'sim.unassign', ...byOperator, target: '+254733000101', details: { account: account.id } },
    ])
    // The account holder reads them in the log like any other change.
    const page = await asClient(key, AUDIT_PAGE, { first: 10 })
    expect(page.body.data.auditEvents.edges.map((e: { node: { action: string } }) => e.node.action).slice(0, 2)).toEqual([
      'sim.unassign',
      'sim.assign',
    ])
  }, 120_000)
})
