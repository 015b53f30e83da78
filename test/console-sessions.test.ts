// The account console's sign-in, session and settings API over HTTP (the app in-process, real
// databases): links work once and expire, the session cookie counts only with its CSRF token from
// the service's own origin, and every new mutation refuses bad input without changing anything.
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { targets } from './kit/databases.js'
import { useKit, fixedClock } from './kit/kit.js'
import { reply, startReceiver } from './kit/receiver.js'
import { csrfTokenOf } from '../src/console/sessions.js'
import { dispatchBatch } from '../src/webhooks/dispatcher.js'
import { graphql } from '../src/graphql/typed-documents.js'

const BASE = 'http://127.0.0.1:4000'
const PEER = { req: { socket: { remoteAddress: '203.0.113.7' } } }

describe.each(targets)('account console sessions on $name', (target) => {
  const clock = fixedClock('2026-06-01T09:00:00Z')
  const kit = useKit(target, { clock, env: { PUBLIC_BASE_URL: BASE, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } })
  let key: string
  let accountId: string
  let accountName: string

  beforeAll(async () => {
    const s = await kit.seed().account()
    key = s.key
    accountId = s.account.id
    accountName = s.account.name
  })

  const fetchApp = (path: string, init: RequestInit = {}, server: unknown = undefined) =>
    kit.app.fetch(new Request(`${BASE}${path}`, init), server as never)

  async function link(): Promise<string> {
    const data = await kit.gql(graphql('mutation { createConsoleLink { url expiresAt } }'), {}, key)
    expect(data.createConsoleLink.url).toMatch(new RegExp(`^${BASE}/console/sign-in\\?token=[A-Za-z0-9_-]{43}$`))
    return new URL(data.createConsoleLink.url).searchParams.get('token')!
  }

  const redeem = (token: string, origin: string | null = BASE) =>
    fetchApp('/console/sign-in', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(origin ? { origin } : {}) },
      body: new URLSearchParams({ token }).toString(),
    })

  async function signIn(): Promise<string> {
    const response = await redeem(await link())
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toBe('/console')
    const cookie = response.headers.get('set-cookie')!
    expect(cookie).toMatch(/^console_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/)
    return cookie.split(';')[0]!.split('=')[1]!
  }

  /** A /graphql request as the console page makes it (or not: `headers` overrides). */
  const asConsole = (session: string, query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    fetchApp('/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        cookie: `console_session=${session}`,
        'x-csrf-token': csrfTokenOf(session),
        origin: BASE,
        'sec-fetch-site': 'same-origin',
        ...headers,
      },
      body: JSON.stringify({ query, variables }),
    }).then((r) => r.json() as Promise<{ data?: any; errors?: { message: string; extensions: { code: string; details?: unknown } }[] }>)

  it('a link opens a session once; the sign-in page names the account and its POST sets the cookie', async () => {
    const token = await link()
    const opened = await fetchApp(`/console/sign-in?token=${token}`)
    expect(opened.status).toBe(200)
    const html = await opened.text()
    expect(html).toContain('<button type="submit">Sign in</button>')
    expect(html).toContain(`the account <strong>${accountName}</strong>`)
    expect(opened.headers.get('x-frame-options')).toBe('DENY')
    expect(opened.headers.get('referrer-policy')).toBe('same-origin')
    // Opening it spends nothing: the POST does.
    expect((await fetchApp(`/console/sign-in?token=${token}`)).status).toBe(200)
    const first = await redeem(token)
    expect(first.status).toBe(303)
    const again = await redeem(token)
    expect(again.status).toBe(410)
    expect(await again.text()).toContain('This sign-in link was used already')
    const reopened = await fetchApp(`/console/sign-in?token=${token}`)
    expect(reopened.status).toBe(410)
    expect(await kit.db.consoleSession.count({ where: { accountId } })).toBeGreaterThanOrEqual(1)
  })

  it('two redemptions of one link at once open exactly one session', async () => {
    const token = await link()
    const before = await kit.db.consoleSession.count()
    const answers = await Promise.all([redeem(token), redeem(token), redeem(token)])
    expect(answers.map((a) => a.status).sort()).toEqual([303, 410, 410])
    expect(await kit.db.consoleSession.count()).toBe(before + 1)
  })

  it('a forged or expired link gets a clear 4xx page, never a stack trace, and opens nothing', async () => {
    const before = await kit.db.consoleSession.count()
    for (const [path, status, text] of [
      ['/console/sign-in?token=forged', 400, 'This sign-in link is not valid'],
      [`/console/sign-in?token=${'A'.repeat(43)}`, 400, 'This sign-in link is not valid'],
      ['/console/sign-in', 400, 'This sign-in link is not valid'],
    ] as const) {
      const answer = await fetchApp(path)
      expect(answer.status, path).toBe(status)
      const html = await answer.text()
      expect(html).toContain(text)
      expect(html).not.toMatch(/at .*\.ts:\d+|Error:/)
    }
    expect((await redeem('x'.repeat(5000))).status).toBe(400)
    const token = await link()
    clock.advance(15 * 60_000 + 1)
    const expired = await redeem(token)
    expect(expired.status).toBe(410)
    expect(await expired.text()).toContain('This sign-in link has expired')
    expect(await kit.db.consoleSession.count()).toBe(before)
  })

  it('a sign-in posted from another origin (or with none) is refused and leaves the link unspent', async () => {
    const token = await link()
    for (const origin of ['https://evil.example', null]) {
      const refused = await redeem(token, origin)
      expect(refused.status).toBe(403)
      expect(refused.headers.get('set-cookie')).toBeNull()
    }
    expect((await redeem(token)).status).toBe(303)
  })

  it('sign-in attempts are rate limited per address', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 12; i++) statuses.push((await fetchApp('/console/sign-in?token=forged', {}, PEER)).status)
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(400))
    expect(statuses.slice(10)).toEqual([429, 429])
    const limited = await fetchApp('/console/sign-in?token=forged', {}, PEER)
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/)
  })

  it('the cookie counts only with its CSRF token, from the own origin; otherwise the request is anonymous', async () => {
    const session = await signIn()
    const ok = await asConsole(session, '{ account { id creditBalance } }')
    expect(ok.data.account.id).toBe(accountId)
    for (const headers of <Record<string, string>[]>[
      { 'x-csrf-token': '' },
      { 'x-csrf-token': csrfTokenOf('another-session-token-aaaaaaaaaaaaaaaaaaaaaa') },
      { origin: 'https://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ]) {
      const refused = await asConsole(session, '{ account { id } }', {}, headers)
      expect(refused.errors?.[0]?.extensions.code, JSON.stringify(headers)).toBe('UNAUTHENTICATED')
    }
    // Another origin's page cannot read the answer either: no credentialed CORS for it.
    const preflight = await fetchApp('/graphql', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://evil.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-csrf-token',
      },
    })
    expect(preflight.headers.get('access-control-allow-credentials')).not.toBe('true')
  })

  it('the console page carries the CSRF token for a live session; a stale cookie gets the sign-in help and is cleared', async () => {
    const session = await signIn()
    const page = await fetchApp('/console', { headers: { cookie: `console_session=${session}` } })
    expect(page.status).toBe(200)
    expect(await page.text()).toContain(`<meta name="csrf-token" content="${csrfTokenOf(session)}" />`)
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'")
    const script = await fetchApp('/console/app.js')
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect((await script.text()).length).toBeGreaterThan(1000)
    const none = await fetchApp('/console')
    expect(none.status).toBe(401)
    expect(await none.text()).toContain('console:link')
    const stale = await fetchApp('/console', { headers: { cookie: 'console_session=' + 'B'.repeat(43) } })
    expect(stale.status).toBe(401)
    expect(stale.headers.get('set-cookie')).toMatch(/^console_session=; .*Max-Age=0/)
  })

  it('sessions end at sign-out (one, or all of the account) and after 12 hours', async () => {
    const a = await signIn()
    const b = await signIn()
    const c = await signIn()
    expect((await asConsole(a, 'mutation { signOut { sessionsEnded } }')).data.signOut.sessionsEnded).toBe(1)
    expect((await asConsole(a, '{ account { id } }')).errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED')
    expect((await asConsole(b, '{ account { id } }')).data.account.id).toBe(accountId)
    // A key has no session of its own.
    const keyOnly = await kit.graphql(graphql('mutation { signOut { sessionsEnded } }'), {}, key)
    expect(keyOnly.errors?.[0]?.extensions.code).toBe('BAD_REQUEST')
    const all = await asConsole(b, 'mutation { signOut(everywhere: true) { sessionsEnded } }')
    expect(all.data.signOut.sessionsEnded).toBeGreaterThanOrEqual(2)
    for (const s of [b, c]) expect((await asConsole(s, '{ account { id } }')).errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED')
    const d = await signIn()
    clock.advance(12 * 3_600_000)
    expect((await asConsole(d, '{ account { id } }')).errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED')
  })

  it('a console session makes sign-in links, as an admin key does (issue 54: scopes)', async () => {
    const session = await signIn()
    const answer = await asConsole(session, 'mutation { createConsoleLink { url } }')
    expect(answer.data.createConsoleLink.url).toMatch(/\/console\/sign-in\?token=/)
  })

  it('keys: created with a label and shown once, listed, revoked; bad input changes nothing', async () => {
    const session = await signIn()
    const count = () => kit.db.apiKey.count({ where: { accountId } })
    const before = await count()
    for (const label of ['', '   ', 'x'.repeat(101), 'bad\u0000label']) {
      const refused = await asConsole(session, 'mutation($l: String!) { createApiKey(label: $l) { key } }', { l: label })
      expect(refused.errors?.[0]?.extensions, JSON.stringify(label)).toMatchObject({
        code: 'VALIDATION_FAILED',
        details: [{ field: 'label' }],
      })
    }
    expect(await count()).toBe(before)
    const created = await asConsole(
      session,
      'mutation { createApiKey(label: " CI deploys ") { key apiKey { id prefix label revokedAt } } }',
    )
    const { key: newKey, apiKey } = created.data.createApiKey
    expect(newKey.startsWith(`${apiKey.prefix}_`)).toBe(true)
    expect(apiKey).toMatchObject({ label: 'CI deploys', revokedAt: null })
    const listed = await asConsole(session, '{ apiKeys { id prefix label lastUsedAt } }')
    expect(JSON.stringify(listed.data)).not.toContain(newKey)
    expect(listed.data.apiKeys[0]).toMatchObject({ id: apiKey.id, lastUsedAt: null })
    expect((await kit.rest('GET', '/api/contacts', { key: newKey })).status).toBe(200)
    await vi.waitFor(async () => expect((await kit.db.apiKey.findUniqueOrThrow({ where: { id: apiKey.id } })).lastUsedAt).not.toBeNull())
    // Another account's key is not found, and keeps working.
    const other = await kit.seed().account()
    const otherKey = await kit.db.apiKey.findFirstOrThrow({ where: { accountId: other.account.id } })
    const foreign = await asConsole(session, 'mutation($id: ID!) { revokeApiKey(id: $id) { id } }', { id: otherKey.id })
    expect(foreign.errors?.[0]?.extensions.code).toBe('NOT_FOUND')
    expect((await kit.rest('GET', '/api/contacts', { key: other.key })).status).toBe(200)
    const revoked = await asConsole(session, 'mutation($id: ID!) { revokeApiKey(id: $id) { revokedAt } }', { id: apiKey.id })
    expect(revoked.data.revokeApiKey.revokedAt).not.toBeNull()
    expect((await kit.rest('GET', '/api/contacts', { key: newKey })).status).toBe(401)
  })

  it('webhook: a test event, a rotation signed by both secrets for the overlap, and refusals that change nothing', async () => {
    const receiver = await startReceiver(reply(204))
    try {
      const session = await signIn()
      const noHook = await asConsole(session, 'mutation { sendTestWebhook { id } }')
      expect(noHook.errors?.[0]?.extensions.code).toBe('NOT_FOUND')
      expect(await kit.db.webhookDelivery.count({ where: { accountId } })).toBe(0)
      const set = await asConsole(session, 'mutation($u: String!) { setWebhook(url: $u) { secret } }', { u: receiver.url })
      const oldSecret = set.data.setWebhook.secret as string
      for (const hours of [-1, 169]) {
        const refused = await asConsole(session, 'mutation($h: Int) { rotateWebhookSecret(overlapHours: $h) { secret } }', { h: hours })
        expect(refused.errors?.[0]?.extensions.code).toBe('VALIDATION_FAILED')
      }
      expect((await kit.db.webhookEndpoint.findFirstOrThrow({ where: { accountId } })).secret).toBe(oldSecret)
      const rotated = await asConsole(session, 'mutation { rotateWebhookSecret { secret webhook { secret previousSecretExpiresAt } } }')
      const newSecret = rotated.data.rotateWebhookSecret.secret as string
      expect(newSecret).not.toBe(oldSecret)
      expect(rotated.data.rotateWebhookSecret.webhook.secret).toBe(newSecret)
      expect(new Date(rotated.data.rotateWebhookSecret.webhook.previousSecretExpiresAt).getTime()).toBe(
        clock.now().getTime() + 24 * 3_600_000,
      )
      const test = await asConsole(session, 'mutation { sendTestWebhook { id test messageId state } }')
      expect(test.data.sendTestWebhook).toMatchObject({ test: true, messageId: null, state: 'PENDING' })
      await dispatchBatch(kit.deps, { owner: 'test', timeoutMs: 2000 })
      const got = receiver.received.at(-1)!
      expect(JSON.parse(got.body)).toMatchObject({ test: true, id: test.data.sendTestWebhook.id })
      const signature = got.headers['webhook-signature'] as string
      expect(signature.split(' ')).toHaveLength(2)
      vi.useFakeTimers({ now: clock.now(), toFake: ['Date'] })
      try {
        const headers = {
          'webhook-id': got.headers['webhook-id'] as string,
          'webhook-timestamp': got.headers['webhook-timestamp'] as string,
          'webhook-signature': signature,
        }
        expect(new Webhook(newSecret).verify(got.body, headers)).toMatchObject({ test: true })
        expect(new Webhook(oldSecret).verify(got.body, headers)).toMatchObject({ test: true })
      } finally {
        vi.useRealTimers()
      }
      // After the overlap only the new secret signs.
      clock.advance(24 * 3_600_000 + 1000)
      // (The session ended after its 12 hours: the account's key goes on.)
      const later = await kit.gql(graphql('mutation { sendTestWebhook { id } }'), {}, key)
      expect(await dispatchBatch(kit.deps, { owner: 'test', timeoutMs: 2000 })).toMatchObject({ claimed: 1, delivered: 1 })
      expect(receiver.received.at(-1)!.headers['webhook-id']).toBe(later.sendTestWebhook.id)
      expect((receiver.received.at(-1)!.headers['webhook-signature'] as string).split(' ')).toHaveLength(1)
      const bad = await kit.graphql(graphql('mutation($u: String!) { setWebhook(url: $u) { secret } }'), { u: 'not a url' }, key)
      expect(bad.errors?.[0]?.extensions.code).toBe('VALIDATION_FAILED')
      expect((await kit.db.webhookEndpoint.findFirstOrThrow({ where: { accountId } })).url).toBe(receiver.url)
    } finally {
      await receiver.close()
    }
  })

  it('an https PUBLIC_BASE_URL makes the cookie Secure and __Host- prefixed', async () => {
    const { createConsoleRoutes } = await import('../src/console/console-routes.js')
    const env = { ...kit.deps.env, PUBLIC_BASE_URL: 'https://console.example' }
    const routes = createConsoleRoutes({ ...kit.deps, env })
    const token = await link()
    const answer = await routes(
      new Request('https://console.example/console/sign-in', {
        method: 'POST',
        headers: { origin: 'https://console.example', 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${token}`,
      }),
      new URL('https://console.example/console/sign-in'),
      undefined,
    )
    expect(answer!.status).toBe(303)
    expect(answer!.headers.get('set-cookie')).toMatch(
      /^__Host-console=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/,
    )
  })
})
