// Restricted API keys (issue 54, item 1): scopes on every root field, FORBIDDEN naming the scope on
// GraphQL and REST alike, expiry (also from the key cache) and rolling with a grace period.
import { describe, expect, it } from 'vitest'
import { isObjectType } from 'graphql'
import { targets } from './kit/databases.js'
import { useKit, fixedClock } from './kit/kit.js'
import { schema } from '../src/graphql/schema.js'
import { createApiKey } from '../src/auth/api-keys.js'
import { ALL_SCOPES, type Scope } from '../src/auth/scopes.js'
import { restRoutes } from '../rest-compat/routes.js'
import { buildOpenApiDocument, scopesOf } from '../rest-compat/openapi/build-document.js'

describe('the schema', () => {
  it('states the scope of every Query, Mutation and Subscription field, in its description', () => {
    const missing: string[] = []
    let fields = 0
    for (const name of ['Query', 'Mutation', 'Subscription']) {
      const type = schema.getType(name)
      if (!isObjectType(type)) throw new Error(`no ${name}`)
      for (const field of Object.values(type.getFields())) {
        fields++
        const scope = field.extensions.scope
        const stated = /Scope: (`[a-z:]+`|public \(|connector \()/.test(field.description ?? '')
        if (typeof scope !== 'string' || !stated || !['public', 'connector', ...ALL_SCOPES].includes(scope))
          missing.push(`${name}.${field.name}`)
      }
    }
    expect(fields).toBeGreaterThan(40)
    expect(missing).toEqual([])
  })
})

describe.each(targets)('restricted API keys on $name', (target) => {
  const clock = fixedClock('2026-06-01T09:00:00Z')
  const kit = useKit(target, { clock, env: { API_KEY_CACHE_MS: '600000' } })

  const keyWith = async (accountId: string, scopes: Scope[], expiresAt: Date | null = null) =>
    (await createApiKey(kit.deps, accountId, { label: scopes.join(' '), scopes, expiresAt })).apiKey

  it('keys made before scopes (the migration default) keep every scope', async () => {
    const { account } = await kit.seed().account()
    const row = await kit.db.apiKey.findFirstOrThrow({ where: { accountId: account.id } })
    expect(row.scopes.split(',')).toEqual(ALL_SCOPES)
  })

  it('a key without the scope gets FORBIDDEN naming it, on GraphQL and REST, and changes nothing', async () => {
    const { account, key } = await kit.seed().account()
    const sendOnly = await keyWith(account.id, ['sms:send'])
    const readOnly = await keyWith(account.id, ['read'])

    const listed = await kit.graphql('{ groups { nodes { uuid } } }', {}, sendOnly)
    expect(listed.errors?.[0]).toMatchObject({ message: 'This API key lacks the scope "read"', extensions: { code: 'FORBIDDEN' } })
    const rest = await kit.rest('GET', '/api/contacts', { key: sendOnly })
    expect(rest.status).toBe(403)
    expect(rest.body).toMatchObject({ code: 'FORBIDDEN', error: 'This API key lacks the scope "read"' })

    const groups = () => kit.db.group.count({ where: { accountId: account.id } })
    const before = await groups()
    const create = await kit.rest('POST', '/api/contact/group/create', { key: readOnly, body: { name: 'Refused' } })
    expect(create.status).toBe(403)
    expect(create.body.error).toContain('contacts:write')
    const mutation = await kit.graphql('mutation { createGroup(input: { name: "Refused" }) { group { id } } }', {}, readOnly)
    expect(mutation.errors?.[0]?.extensions.code).toBe('FORBIDDEN')
    expect(await groups()).toBe(before)

    // node(id:) is public for channels, but account objects need `read`.
    const group = await kit.gql('mutation { createGroup(input: { name: "Mine" }) { group { id } } }', {}, key)
    const node = await kit.graphql('query($id: ID!) { node(id: $id) { id } }', { id: group.createGroup.group.id }, sendOnly)
    expect(node.errors?.[0]?.extensions.code).toBe('FORBIDDEN')
    expect((await kit.gql('query($id: ID!) { node(id: $id) { id } }', { id: group.createGroup.group.id }, readOnly)).node).not.toBeNull()
    // The read-only key reads.
    expect((await kit.rest('GET', '/api/contacts', { key: readOnly })).status).toBe(200)
  })

  it('only admin keys and console sessions manage keys and make console links', async () => {
    const { account, key } = await kit.seed().account()
    const readOnly = await keyWith(account.id, ['read', 'contacts:write', 'sms:send', 'webhooks:manage'])
    for (const query of ['mutation { createConsoleLink { url } }', 'mutation { createApiKey(label: "x") { key } }', '{ apiKeys { id } }']) {
      const answer = await kit.graphql(query, {}, readOnly)
      expect(answer.errors?.[0], query).toMatchObject({
        extensions: { code: 'FORBIDDEN' },
        message: 'This API key lacks the scope "admin"',
      })
    }
    expect((await kit.gql('mutation { createConsoleLink { url } }', {}, key)).createConsoleLink.url).toContain('/console/sign-in')
  })

  it('keys are made with chosen scopes and an expiry; bad scopes and past expiries are refused and make nothing', async () => {
    const { account, key } = await kit.seed().account()
    const count = () => kit.db.apiKey.count({ where: { accountId: account.id } })
    const before = await count()
    const refusals: [string, Record<string, unknown>, string][] = [
      ['mutation($s: [ApiKeyScope!]) { createApiKey(label: "x", scopes: $s) { key } }', { s: [] }, 'scopes'],
      ['mutation($e: DateTime) { createApiKey(label: "x", expiresAt: $e) { key } }', { e: '2026-06-01T08:00:00Z' }, 'expiresAt'],
    ]
    for (const [query, variables, field] of refusals) {
      const answer = await kit.graphql(query, variables, key)
      expect(answer.errors?.[0]?.extensions, field).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field }] })
    }
    const unknown = await kit.graphql('mutation { createApiKey(label: "x", scopes: [NOPE]) { key } }', {}, key)
    expect(unknown.errors?.length).toBe(1)
    expect(await count()).toBe(before)

    const made = await kit.gql(
      'mutation { createApiKey(label: "CI", scopes: [READ, SMS_SEND], expiresAt: "2026-07-01T09:00:00Z") { key apiKey { scopes expiresAt } } }',
      {},
      key,
    )
    expect(made.createApiKey.apiKey).toEqual({ scopes: ['READ', 'SMS_SEND'], expiresAt: '2026-07-01T09:00:00.000Z' })
    expect((await kit.rest('GET', '/api/contacts', { key: made.createApiKey.key })).status).toBe(200)
  })

  it('an expired key is refused like a revoked one, also when the key cache remembers it', async () => {
    const { account } = await kit.seed().account()
    const expiring = await keyWith(account.id, ['read'], new Date(clock.now().getTime() + 3_600_000))
    expect((await kit.rest('GET', '/api/contacts', { key: expiring })).status).toBe(200)
    expect(kit.deps.apiKeyCache.size()).toBeGreaterThan(0)
    clock.advance(3_600_000)
    const refused = await kit.rest('GET', '/api/contacts', { key: expiring })
    expect(refused.status).toBe(401)
    expect(refused.body).toEqual({ error: 'A valid API key is required', code: 'UNAUTHENTICATED' })
  })

  it('rolling makes a new key with the same scopes; the old one works until its grace period ends', async () => {
    const { account, key } = await kit.seed().account()
    const old = await createApiKey(kit.deps, account.id, { label: 'deploys', scopes: ['read', 'sms:send'] })
    expect((await kit.rest('GET', '/api/contacts', { key: old.apiKey })).status).toBe(200)

    const before = await kit.db.apiKey.count({ where: { accountId: account.id } })
    for (const graceHours of [-1, 721]) {
      const refused = await kit.graphql(`mutation { rollApiKey(id: "${old.id}", graceHours: ${graceHours}) { key } }`, {}, key)
      expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'graceHours' }] })
    }
    expect(await kit.db.apiKey.count({ where: { accountId: account.id } })).toBe(before)

    const graceEnd = new Date(clock.now().getTime() + 2 * 3_600_000).toISOString()
    const rolled = await kit.gql(
      `mutation { rollApiKey(id: "${old.prefix}", graceHours: 2) { key apiKey { label scopes rolledFromId expiresAt } previous { expiresAt } } }`,
      {},
      key,
    )
    expect(rolled.rollApiKey.apiKey).toEqual({ label: 'deploys', scopes: ['READ', 'SMS_SEND'], rolledFromId: old.id, expiresAt: null })
    expect(rolled.rollApiKey.previous.expiresAt).toBe(graceEnd)
    const fresh = rolled.rollApiKey.key as string
    expect((await kit.rest('GET', '/api/contacts', { key: old.apiKey })).status).toBe(200)
    expect((await kit.rest('GET', '/api/contacts', { key: fresh })).status).toBe(200)
    clock.advance(2 * 3_600_000)
    expect((await kit.rest('GET', '/api/contacts', { key: old.apiKey })).status).toBe(401)
    expect((await kit.rest('GET', '/api/contacts', { key: fresh })).status).toBe(200)

    // Grace 0: the old key stops at once, though the cache remembered it a moment ago.
    const again = await kit.gql(`mutation { rollApiKey(id: "${fresh.slice(0, 15)}", graceHours: 0) { key } }`, {}, key)
    expect((await kit.rest('GET', '/api/contacts', { key: fresh })).status).toBe(401)
    expect((await kit.rest('GET', '/api/contacts', { key: again.rollApiKey.key })).status).toBe(200)
    // A key that no longer works cannot be rolled.
    const stale = await kit.graphql(`mutation { rollApiKey(id: "${old.id}", graceHours: 1) { key } }`, {}, key)
    expect(stale.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'id' }] })
  })
})

describe('the REST routes', () => {
  it('each messaging route states the scopes of the GraphQL fields it runs, in its OpenAPI security entry', () => {
    const unscoped = restRoutes.filter((r) => r.api === 'messaging' && scopesOf(r).length === 0).map((r) => `${r.method} ${r.path}`)
    expect(unscoped).toEqual([])
    const document = buildOpenApiDocument(restRoutes, { version: 'test' })
    expect(document.paths['/contacts']!.get!.security).toEqual([{ bearerAuth: ['read'] }])
    expect(document.paths['/contact/group/create']!.post!.security).toEqual([{ bearerAuth: ['contacts:write'] }])
    expect(document.paths['/contacts']!.get!.responses[403]).toBeDefined()
  })

  it('every documented operation states its scope: key scopes in its security entry and its description, or public', () => {
    const document = buildOpenApiDocument(restRoutes, { version: 'test' })
    const unstated: string[] = []
    let operations = 0
    for (const [path, item] of Object.entries(document.paths))
      for (const [method, operation] of Object.entries(item as Record<string, any>)) {
        operations++
        const security = operation.security as Record<string, string[]>[] | undefined
        const scopes = security?.[0]?.bearerAuth
        const keyed =
          security?.length === 1 &&
          scopes!.length > 0 &&
          scopes!.every((s) => (ALL_SCOPES as string[]).includes(s)) &&
          operation.description.endsWith(`Scope: ${scopes!.map((s) => `\`${s}\``).join(' and ')}.`)
        const open =
          Array.isArray(security) && security.length === 0 && operation.description.endsWith('Scope: public (no API key needed).')
        if (!keyed && !open) unstated.push(`${method.toUpperCase()} ${path}`)
      }
    expect(operations).toBe(restRoutes.length)
    expect(unstated).toEqual([])
    expect(document.paths['/contact/group/create']!.post!.description).toMatch(/Scope: `contacts:write`\.$/)
    expect(document.paths['/channels/{uuid}/status']!.get!.security).toEqual([])
  })
})
