// OpenTelemetry traces (issue 17 item 8; docs/operations.md, "Traces"): the real server as a child
// process, exporting to a real OTLP/HTTP receiver, on each database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { targets, type TestDatabase } from './kit/databases.js'
import { spawnServer, waitFor } from './kit/server-process.js'
import { startOtlpReceiver, type ReceivedSpan } from './kit/otlp-receiver.js'
import { startReceiver } from './kit/receiver.js'
import { applyMigrations } from '../src/db/migrate.js'
import { openDatabase, type Database } from '../src/db/client.js'
import { parseEnv } from '../src/core/env.js'
import { createDeps, type Deps } from '../src/deps.js'
import { createAccount } from '../src/accounts/create-account.js'
import { setWebhook } from '../src/webhooks/endpoints.js'
import { sentMessageRow } from './kit/seed.js'

const CONNECTOR = 'carrier-connector-token-0123456789abcdef'
const hex = (bytes: number) => randomBytes(bytes).toString('hex')
const REPORT = `mutation($input: CarrierStatusInput!) { reportCarrierStatus(input: $input) { status } }`

/** The server from source, with the module hook that lists what it loads. */
const command = (): [string, ...string[]] => [
  process.execPath,
  '--import',
  'tsx',
  '--import',
  './test/kit/record-loads.mjs',
  'src/process/server.ts',
]

describe.each(targets)('traces on $name', (target) => {
  let handle: TestDatabase
  let database: Database
  let deps: Deps
  let key: string
  let accountId: string
  const dir = mkdtempSync(join(tmpdir(), 'gateway-tracing-'))

  beforeAll(async () => {
    handle = await target.create()
    await applyMigrations(handle.url)
    database = await openDatabase(handle.url)
    deps = createDeps(database, parseEnv({ DATABASE_URL: handle.url, LOG_LEVEL: 'silent', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }))
    const created = await createAccount(deps, { name: 'Traced' })
    key = created.apiKey
    accountId = created.account.id
  })
  afterAll(async () => {
    await database?.close()
    await handle?.drop()
    rmSync(dir, { recursive: true, force: true })
  })

  async function serve(env: Record<string, string>, loaded: string) {
    const server = spawnServer({ DATABASE_URL: handle.url, LOADED_MODULES_FILE: loaded, ...env }, { command: command() })
    const url = await server.listening()
    return { url, server, stop: async () => (server.child.kill('SIGTERM'), await server.exited) }
  }

  it('off by default: no SDK module is loaded', async () => {
    const loaded = join(dir, 'off.txt')
    const { url, stop } = await serve({}, loaded)
    expect((await fetch(`${url}/api/contacts`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200)
    await stop()
    const modules = readFileSync(loaded, 'utf8').split('\n')
    expect(modules.some((m) => m.includes('/src/app.ts'))).toBe(true)
    expect(
      modules.filter((m) => /@opentelemetry\/(sdk-|exporter-|instrumentation)|@prisma\/instrumentation|@envelop\/opentelemetry/.test(m)),
    ).toEqual([])
  }, 120_000)

  describe('with OTEL_EXPORTER_OTLP_ENDPOINT (http/json)', () => {
    let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>
    let hooks: Awaited<ReturnType<typeof startReceiver>>
    let service: Awaited<ReturnType<typeof serve>>
    const loaded = join(dir, 'on.txt')
    beforeAll(async () => {
      otlp = await startOtlpReceiver()
      hooks = await startReceiver()
      await setWebhook(deps, accountId, hooks.url)
      service = await serve(
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_BSP_SCHEDULE_DELAY: '50',
          CARRIER_CONNECTOR_TOKEN: CONNECTOR,
          WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        },
        loaded,
      )
    }, 120_000)
    afterAll(async () => {
      await service?.stop()
      await otlp?.close()
      await hooks?.close()
    })

    const inTrace = (traceId: string) => otlp.spans.filter((s) => s.traceId === traceId)
    const ancestors = (span: ReceivedSpan, spans: ReceivedSpan[]) => {
      const chain: ReceivedSpan[] = []
      for (let p = spans.find((s) => s.spanId === span.parentSpanId); p; p = spans.find((s) => s.spanId === p!.parentSpanId)) chain.push(p)
      return chain
    }

    it('one REST request is one trace: the HTTP span continuing the caller, the GraphQL operation, its SQL', async () => {
      const traceId = hex(16)
      const caller = hex(8)
      const res = await fetch(`${service.url}/api/contacts`, {
        headers: { authorization: `Bearer ${key}`, traceparent: `00-${traceId}-${caller}-01` },
      })
      expect(res.status).toBe(200)
      // The spans arrive in several exports, which need not arrive in the order they were sent: wait
      // for the whole trace (the server span, the operation, a statement, and every span's parent but
      // the caller's), then check how it is put together.
      const spans = await waitFor(
        'the whole trace',
        () => {
          const received = inTrace(traceId)
          const ids = new Set(received.map((s) => s.spanId))
          const operation = received.find((s) => s.attributes['graphql.operation.type'] === 'query')
          const whole =
            received.some((s) => s.parentSpanId === caller) &&
            received.every((s) => s.parentSpanId === caller || ids.has(s.parentSpanId)) &&
            received.some((s) => s.name === 'prisma:client:db_query' && operation && ancestors(s, received).includes(operation))
          return whole && received
        },
        15_000,
      )
      const http = spans.find((s) => s.parentSpanId === caller)!
      expect(http).toMatchObject({ kind: 2, service: 'sms-channel-gateway' })
      expect(http.attributes['http.route'] ?? http.attributes['url.path'] ?? http.attributes['http.target']).toMatch(/contacts/)
      const operation = spans.find((s) => s.attributes['graphql.operation.type'] === 'query')!
      expect(operation, JSON.stringify(spans.map((s) => s.name))).toBeDefined()
      expect(ancestors(operation, spans)).toContain(http)
      const sql = spans.filter((s) => s.name === 'prisma:client:db_query')
      expect(sql.length).toBeGreaterThan(0)
      // Every statement belongs to the request; the page's own run inside the operation (the key lookup comes before it).
      for (const statement of sql) expect(ancestors(statement, spans)).toContain(http)
      expect(sql.filter((statement) => ancestors(statement, spans).includes(operation)).length).toBeGreaterThan(0)
      expect(sql.some((s) => /SELECT/i.test(String(s.attributes['db.query.text'] ?? s.attributes['db.statement'])))).toBe(true)
    })

    it('GraphQL on /graphql is traced by the envelop plugin in the same trace', async () => {
      const traceId = hex(16)
      const caller = hex(8)
      const res = await fetch(`${service.url}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', traceparent: `00-${traceId}-${caller}-01` },
        body: JSON.stringify({ query: 'query Mine { groups { nodes { name } } }' }),
      })
      expect(res.status).toBe(200)
      // The operation's span and the HTTP server span (the one continuing the caller; the envelop
      // plugin's operation span is of the server kind too) may come in different exports: wait for both.
      const operation = await waitFor('the operation span', () => inTrace(traceId).find((s) => /Mine/.test(s.name)), 15_000)
      const server = await waitFor('the HTTP span', () => inTrace(traceId).find((s) => s.parentSpanId === caller), 15_000)
      expect(server).toMatchObject({ kind: 2, name: 'POST' })
      expect(operation.spanId).not.toBe(server.spanId)
      expect(ancestors(operation, inTrace(traceId))).toContain(server)
    })

    it('a webhook attempt carries a traceparent, and its span links back to the request that caused the report', async () => {
      const message = await deps.db.message.create({ data: sentMessageRow(accountId) })
      const traceId = hex(16)
      const res = await fetch(`${service.url}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${CONNECTOR}`, 'content-type': 'application/json', traceparent: `00-${traceId}-${hex(8)}-01` },
        body: JSON.stringify({ query: REPORT, variables: { input: { messageId: message.id, status: 'DELIVRD' } } }),
      })
      expect(await res.json()).toEqual({ data: { reportCarrierStatus: { status: 'DELIVRD' } } })
      const delivery = await deps.db.webhookDelivery.findFirstOrThrow({ where: { messageId: message.id } })
      expect(delivery.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
      const post = await waitFor('the webhook POST', () => hooks.received.find((r) => r.headers['webhook-id'] === delivery.id), 30_000)
      const header = String(post.headers.traceparent)
      expect(header).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
      const attemptTrace = header.split('-')[1]!
      // A trace of its own (the attempt runs later, in the worker), linked to the report's request.
      expect(attemptTrace).not.toBe(traceId)
      const attempt = await waitFor('the attempt span', () => inTrace(attemptTrace).find((s) => s.name === 'webhook attempt'), 15_000)
      expect(attempt.links).toContainEqual({ traceId, spanId: delivery.traceparent!.split('-')[2] })
      expect(attempt.attributes).toMatchObject({ 'webhook.id': delivery.id, 'http.response.status_code': 200 })
      // The POST itself is the HTTP instrumentation's client span (kind 3), inside the attempt; it may
      // come in another export than the attempt's span, so it is waited for.
      await waitFor(
        'the POST span inside the attempt',
        () => inTrace(attemptTrace).some((s) => s.kind === 3 && s.parentSpanId === attempt.spanId),
        15_000,
      )
    })

    it('a worker tick that does work is exported whole: its span, marked not idle, and its queries', async () => {
      // The webhook test above made the worker claim and send a delivery in one of its ticks.
      const tick = await waitFor('a worker tick span', () => otlp.spans.find((s) => s.name === 'worker tick'), 15_000)
      expect(tick.attributes['worker.idle']).toBe(false)
      expect(tick.parentSpanId).toBeFalsy()
      // Its queries, each inside the tick; a query's parent may come in a later export than the query.
      await waitFor(
        'its queries, each inside the tick',
        () => {
          const spans = inTrace(tick.traceId)
          const inTick = spans.filter((s) => s.name.startsWith('prisma:'))
          return inTick.length > 0 && inTick.every((q) => ancestors(q, spans).includes(tick))
        },
        15_000,
      )
      // No idle tick is ever exported.
      expect(otlp.spans.filter((s) => s.name === 'worker tick' && s.attributes['worker.idle'] !== false)).toEqual([])
    })

    it('loaded the SDK (so the check of the default can fail)', () => {
      const modules = readFileSync(loaded, 'utf8')
      expect(modules).toMatch(/@opentelemetry\/sdk-trace-node/)
      expect(modules).toMatch(/@prisma\/instrumentation/)
    })
  })

  it('an idle instance exports no span: idle worker ticks, probes and scrapes make none', async () => {
    const otlp = await startOtlpReceiver()
    const { url, stop } = await serve(
      { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50' },
      join(dir, 'idle.txt'),
    )
    try {
      // The worker's polling shows in the statement counts of /metrics (an idle tick runs about five
      // SELECTs; the scrape's own gauges read five at most every 5 s): wait for a few ticks' worth.
      const selects = async () => {
        const text = await (await fetch(`${url}/metrics`)).text()
        return Number(/^db_query_duration_seconds_count\{statement="select"\} (\d+)$/m.exec(text)?.[1] ?? 0)
      }
      expect((await fetch(`${url}/readyz`)).status).toBe(200)
      const before = await selects()
      for (let now = before; now < before + 25; now = await selects()) await new Promise((r) => setTimeout(r, 200))
    } finally {
      // SIGTERM: the exporter sends whatever it still holds before the process exits.
      await stop()
      await otlp.close()
    }
    expect(otlp.spans.map((s) => s.name)).toEqual([])
    expect(otlp.protobufBodies).toEqual([])
  }, 120_000)

  it('exports http/protobuf when asked', async () => {
    const otlp = await startOtlpReceiver()
    const traceId = hex(16)
    const { url, stop } = await serve(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: `${otlp.endpoint}/`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_BSP_SCHEDULE_DELAY: '50',
      },
      join(dir, 'proto.txt'),
    )
    try {
      await fetch(`${url}/api/contacts`, { headers: { authorization: `Bearer ${key}`, traceparent: `00-${traceId}-${hex(8)}-01` } })
      // Protobuf carries ids as raw bytes and names as UTF-8. Spans end at different moments, so
      // the request's span and its queries' spans may arrive in separate batches.
      await waitFor(
        'a protobuf export of the trace and of its queries',
        () =>
          otlp.protobufBodies.some((b) => b.includes(Buffer.from(traceId, 'hex'))) &&
          otlp.protobufBodies.some((b) => b.includes('prisma:client:db_query')),
        15_000,
      )
      expect(otlp.contentTypes.every((t) => t === 'POST /v1/traces application/x-protobuf')).toBe(true)
      expect(otlp.spans).toEqual([])
    } finally {
      await stop()
      await otlp.close()
    }
  }, 120_000)
})
