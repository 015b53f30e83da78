import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit, fixedClock } from './kit/kit.js'
import { createApp, type App } from '../src/app.js'
import { createDeps } from '../src/deps.js'
import { parseEnv } from '../src/core/env.js'
import { openDatabase } from '../src/db/client.js'
import { createMetrics } from '../src/metrics/create-metrics.js'

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}
interface Family {
  name: string
  help: string
  type: string
  samples: Sample[]
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*'
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*'
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL}="(?:[^"\\\\\\n]|\\\\[\\\\"n])*",?)*)\\})? (\\S+)(?: -?\\d+)?$`)
const SUFFIXES: Record<string, string[]> = {
  counter: [''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
}

/**
 * A strict reader of the Prometheus text format (0.0.4): every non-empty line must be HELP, TYPE or
 * a sample of the family declared just before it; anything else throws.
 */
function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>()
  let current: Family | null = null
  for (const [i, line] of text.split('\n').entries()) {
    // The format allows empty lines (prom-client separates families with one).
    if (line === '') continue
    const fail = (why: string) => new Error(`line ${i + 1} ${why}: ${JSON.stringify(line)}`)
    let m: RegExpExecArray | null
    if ((m = new RegExp(`^# HELP (${NAME}) (.*)$`).exec(line))) {
      if (families.has(m[1]!)) throw fail('repeats a family')
      current = { name: m[1]!, help: m[2]!, type: '', samples: [] }
      families.set(current.name, current)
    } else if ((m = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`).exec(line))) {
      if (!current || current.name !== m[1] || current.type || current.samples.length) throw fail('is a TYPE out of place')
      current.type = m[2]!
    } else if ((m = SAMPLE.exec(line))) {
      if (!current?.type) throw fail('is a sample before HELP and TYPE')
      const suffix = m[1]!.slice(current.name.length)
      if (!m[1]!.startsWith(current.name) || !SUFFIXES[current.type]!.includes(suffix)) throw fail(`is not a sample of ${current.name}`)
      // Prometheus reads values with Go's ParseFloat: NaN and Inf in any case (prom-client writes "Nan").
      const special: Record<string, number> = { nan: NaN, '+inf': Infinity, inf: Infinity, '-inf': -Infinity }
      const raw = m[3]!
      const value =
        raw.toLowerCase() in special ? special[raw.toLowerCase()]! : /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw) ? Number(raw) : NaN
      if (Number.isNaN(value) && raw.toLowerCase() !== 'nan') throw fail('has a bad value')
      const labels: Record<string, string> = {}
      for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!
      current.samples.push({ name: m[1]!, labels, value })
    } else {
      throw fail('is not valid exposition format')
    }
  }
  for (const f of families.values()) {
    if (f.type !== 'histogram') continue
    for (const count of f.samples.filter((s) => s.name.endsWith('_count'))) {
      const key = JSON.stringify(count.labels)
      const inf = f.samples.find(
        (s) => s.name.endsWith('_bucket') && s.labels.le === '+Inf' && JSON.stringify({ ...s.labels, le: undefined }) === key,
      )
      if (inf?.value !== count.value) throw new Error(`${f.name}: +Inf bucket differs from _count for ${key}`)
    }
  }
  return families
}

/** The value of the one sample of `name` whose labels include `labels` (undefined when none). */
function valueOf(families: Map<string, Family>, family: string, labels: Record<string, string> = {}, sample = family) {
  const hits = families.get(family)?.samples.filter((s) => s.name === sample && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
  if (hits && hits.length > 1) throw new Error(`${hits.length} samples of ${sample} match ${JSON.stringify(labels)}`)
  return hits?.[0]?.value
}

async function scrape(app: App, headers: Record<string, string> = {}) {
  const response = await app.fetch(new Request('http://localhost/metrics', { headers }))
  return { response, text: await response.text() }
}

describe.each(targets)('metrics on $name', (target) => {
  const clock = fixedClock('2026-05-01T10:00:00Z')
  const kit = useKit(target, { clock })
  const appWith = (env: Record<string, string> = {}) =>
    createApp({
      deps: kit.depsWith(env, { clock }),
      ready: kit.database.ready,
    })

  it('serves the text format with HELP and TYPE, counting requests by route template', async () => {
    const app = appWith()
    const id = randomUUID()
    await app.fetch(new Request(`http://localhost/api/contact/${id}`))
    await app.fetch(new Request(`http://localhost/api/contact/${id}`))
    await app.fetch(new Request('http://localhost/healthz'))
    await app.fetch(new Request(`http://localhost/no/such/${id}`))
    const { response, text } = await scrape(app)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    const families = parseExposition(text)
    expect(families.get('http_requests_total')).toMatchObject({ type: 'counter', help: expect.stringContaining('route template') })
    expect(families.get('http_request_duration_seconds')?.type).toBe('histogram')
    expect(valueOf(families, 'http_requests_total', { method: 'GET', route: '/api/contact/:id', status: '401' })).toBe(2)
    expect(valueOf(families, 'http_request_duration_seconds', { route: '/api/contact/:id' }, 'http_request_duration_seconds_count')).toBe(2)
    expect(valueOf(families, 'http_requests_total', { method: 'GET', route: '/healthz', status: '200' })).toBe(1)
    expect(valueOf(families, 'http_requests_total', { route: 'other', status: '404' })).toBe(1)
    // Raw paths never become label values.
    expect(text).not.toContain(id)
    for (const name of ['process_cpu_user_seconds_total', 'nodejs_eventloop_lag_seconds', 'process_resident_memory_bytes']) {
      expect(families.has(name), name).toBe(true)
    }
    for (const f of families.values()) expect(f.help.length, f.name).toBeGreaterThan(0)
  })

  it('counts GraphQL operations by name and type, and their errors by phase', async () => {
    const app = appWith()
    const { key } = await kit.seed().account('Metrics')
    const post = (query: string, headers: Record<string, string> = {}) =>
      app.fetch(
        new Request('http://localhost/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ query }),
        }),
      )
    // A name is a label when an authenticated client uses it (test/metrics-labels.test.ts has the rest).
    await post('query Probe { __typename }', { authorization: `Bearer ${key}` })
    await post('query Probe { __typename }')
    await post('query AdHoc { __typename }')
    await post('{ __typename }')
    await post('query Broken { noSuchField }')
    await post('query Unparsable {')
    const families = parseExposition((await scrape(app)).text)
    expect(valueOf(families, 'graphql_operations_total', { operation_name: 'Probe', operation_type: 'query', outcome: 'ok' })).toBe(2)
    expect(valueOf(families, 'graphql_operations_total', { operation_name: 'other', operation_type: 'query', outcome: 'ok' })).toBe(1)
    expect(valueOf(families, 'graphql_operations_total', { operation_name: 'anonymous', operation_type: 'query', outcome: 'ok' })).toBe(1)
    expect(
      valueOf(families, 'graphql_operation_duration_seconds', { operation_name: 'Probe' }, 'graphql_operation_duration_seconds_count'),
    ).toBe(2)
    expect(valueOf(families, 'graphql_errors_total', { phase: 'validate' })).toBe(1)
    expect(valueOf(families, 'graphql_errors_total', { phase: 'parse' })).toBe(1)
    expect(valueOf(families, 'http_requests_total', { method: 'POST', route: '/graphql', status: '200' })).toBe(6)
  })

  it('reports the webhook outbox and SMS states from the database, read once per cache period', async () => {
    const { account } = await kit.seed().account('Gauges')
    const now = clock.now().getTime()
    const message = (status: string) =>
      kit.db.message.create({
        data: {
          accountId: account.id,
          mobile: '+254712345678',
          sender: 'TEST',
          text: 'hi',
          encoding: 'GSM-7',
          pages: 1,
          costPerPage: 1n,
          creditsDeducted: 1n,
          gateway: 'sandbox',
          status,
          broadcastAt: new Date(now),
        },
      })
    const delivered = await message('DELIVRD')
    const pending = await message('PENDING')
    await message('PENDING')
    const delivery = (state: string, ageMs: number) =>
      kit.db.webhookDelivery.create({
        data: {
          id: `msg_${randomUUID().replace(/-/g, '')}`,
          accountId: account.id,
          messageId: delivered.id,
          body: '{}',
          state,
          nextAttemptAt: new Date(now),
          createdAt: new Date(now - ageMs),
        },
      })
    await delivery('pending', 120_000)
    await delivery('pending', 5_000)
    await delivery('delivered', 600_000)
    await kit.db.smsSubmission.create({
      data: {
        messageId: pending.id,
        accountId: account.id,
        nextAttemptAt: new Date(now),
        deadlineAt: new Date(now + 60_000),
        createdAt: new Date(now - 30_000),
      },
    })

    const app = appWith()
    const families = parseExposition((await scrape(app)).text)
    expect(families.get('gateway_webhook_outbox_pending')?.type).toBe('gauge')
    expect(valueOf(families, 'gateway_webhook_outbox_pending')).toBe(2)
    expect(valueOf(families, 'gateway_webhook_outbox_oldest_pending_age_seconds')).toBe(120)
    expect(valueOf(families, 'gateway_webhook_deliveries', { state: 'pending' })).toBe(2)
    expect(valueOf(families, 'gateway_webhook_deliveries', { state: 'delivered' })).toBe(1)
    expect(valueOf(families, 'gateway_webhook_deliveries', { state: 'failed' })).toBe(0)
    expect(valueOf(families, 'gateway_sms_messages', { status: 'PENDING' })).toBe(2)
    expect(valueOf(families, 'gateway_sms_messages', { status: 'DELIVRD' })).toBe(1)
    expect(valueOf(families, 'gateway_sms_messages', { status: 'UNDELIV' })).toBe(0)
    expect(valueOf(families, 'gateway_sms_submissions', { state: 'pending' })).toBe(1)
    expect(valueOf(families, 'gateway_sms_submission_oldest_pending_age_seconds')).toBe(30)

    // Within the cache period a scrape reads nothing from the database.
    await delivery('pending', 1_000)
    kit.statements.length = 0
    const again = parseExposition((await scrape(app)).text)
    expect(kit.statements).toEqual([])
    expect(valueOf(again, 'gateway_webhook_outbox_pending')).toBe(2)
    // A new app (its own cache) sees the new row.
    expect(valueOf(parseExposition((await scrape(appWith())).text), 'gateway_webhook_outbox_pending')).toBe(3)
  })

  it('times the SQL statements the Prisma client sends', async () => {
    const metrics = createMetrics()
    const database = await openDatabase(kit.url, { onQueryEvent: metrics.observeQuery })
    try {
      const app = createApp({
        deps: createDeps(database, parseEnv({ DATABASE_URL: kit.url, LOG_LEVEL: 'silent' }), { clock }),
        ready: database.ready,
        metrics,
      })
      expect((await app.fetch(new Request('http://localhost/readyz'))).status).toBe(200)
      const families = parseExposition((await scrape(app)).text)
      expect(families.get('db_query_duration_seconds')?.type).toBe('histogram')
      expect(valueOf(families, 'db_query_duration_seconds', { statement: 'select' }, 'db_query_duration_seconds_count')).toBeGreaterThan(0)
      expect(valueOf(families, 'db_query_duration_seconds', { statement: 'select' }, 'db_query_duration_seconds_sum')).toBeGreaterThan(0)
    } finally {
      await database.close()
    }
  })

  it('asks for the bearer token when METRICS_TOKEN is set', async () => {
    const app = appWith({ METRICS_TOKEN: 'scrape-secret-1' })
    const none = await scrape(app)
    expect(none.response.status).toBe(401)
    expect(none.response.headers.get('www-authenticate')).toBe('Bearer')
    expect(JSON.parse(none.text)).toEqual({ error: 'A valid metrics token is required', code: 'UNAUTHENTICATED' })
    expect((await scrape(app, { authorization: 'Bearer scrape-secret-2' })).response.status).toBe(401)
    expect((await scrape(app, { authorization: 'Basic scrape-secret-1' })).response.status).toBe(401)
    const ok = await scrape(app, { authorization: 'Bearer scrape-secret-1' })
    expect(ok.response.status).toBe(200)
    expect(parseExposition(ok.text).has('http_requests_total')).toBe(true)
    // The refusals were counted like any request.
    expect(valueOf(parseExposition(ok.text), 'http_requests_total', { route: '/metrics', status: '401' })).toBe(3)
  })

  it('refuses other methods on /metrics', async () => {
    const response = await appWith().fetch(new Request('http://localhost/metrics', { method: 'POST' }))
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('GET, HEAD')
  })

  it('has no /metrics route when METRICS_ENABLED is false', async () => {
    const { response, text } = await scrape(appWith({ METRICS_ENABLED: 'false' }))
    expect(response.status).toBe(404)
    expect(JSON.parse(text)).toMatchObject({ code: 'NOT_FOUND' })
  })
})
