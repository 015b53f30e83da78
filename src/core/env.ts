import { z } from 'zod'
import { isSupportedCountry } from 'libphonenumber-js/max'

const bool = z.enum(['true', 'false', '1', '0'], { message: 'must be true or false' }).transform((v) => v === 'true' || v === '1')

const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z
    .string()
    .default('file:./data/gateway.db')
    .refine((u) => u.startsWith('file:') || /^postgres(ql)?:\/\//.test(u), {
      message: 'must be file:<path> (SQLite) or postgresql://... (PostgreSQL)',
    }),
  PUBLIC_BASE_URL: z.url({ message: 'must be an absolute http(s) URL' }).optional(),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool.default(false),
  DEFAULT_COUNTRY: z
    .string()
    .regex(/^[A-Z]{2}$/, 'must be a two-letter ISO 3166 region code such as KE')
    .refine(isSupportedCountry, 'is not a region libphonenumber knows (use a two-letter ISO 3166 region code such as KE)')
    .default('KE'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(5 * 1024 * 1024),
  /** Requests per second allowed per API key (token bucket); 0 turns the limit off. */
  RATE_LIMIT_PER_SECOND: z.coerce.number().min(0).default(50),
  RATE_LIMIT_BURST: z.coerce.number().int().min(1).default(200),
  /** Requests per second allowed per client address (IPv6: per /64) without an API key; 0 turns it off. */
  RATE_LIMIT_ANONYMOUS_PER_SECOND: z.coerce.number().min(0).default(20),
  RATE_LIMIT_ANONYMOUS_BURST: z.coerce.number().int().min(1).default(100),
  /** Behind one reverse proxy: take the client address from the last X-Forwarded-For hop. */
  TRUST_PROXY: bool.default(false),
  /** Delay before the sandbox gateway reports a final status. */
  SANDBOX_DELIVERY_DELAY_MS: z.coerce.number().int().min(0).default(1000),
  /** A charged SMS not accepted by the gateway by then is refunded and FAILED (SUBMIT_TIMEOUT); docs/sms.md. */
  SMS_SUBMIT_DEADLINE_MS: z.coerce.number().int().min(1000).default(300_000),
  /** How long a worker's claim (SMS submit, carrier event, webhook delivery) holds before another takes it over. */
  WORKER_LEASE_MS: z.coerce.number().int().min(500).default(60_000),
  /** How long now-playing data is shared between requests of one instance. */
  CHANNEL_CACHE_MS: z.coerce.number().int().min(0).default(1000),
  /**
   * How long a verified API key is remembered per instance (0: off). Unset: 30 s on PostgreSQL,
   * off on SQLite (the CLI is another process there and cannot tell the server of a revocation).
   */
  API_KEY_CACHE_MS: z.coerce.number().int().min(0).optional(),
  /** Live (unrevoked) API keys one account may hold at once; creating one more is refused (CONFLICT). */
  API_KEYS_PER_ACCOUNT: z.coerce.number().int().min(1).max(10_000).default(20),
  /** Run the cron loop (webhook dispatch, gateway events) in this process. */
  WORKER_ENABLED: bool.default(true),
  /**
   * HTTP worker processes sharing the port (node:cluster); 1 is one process without a cluster.
   * The cron loop still runs once per host (docs/operations.md "Several workers on one host").
   */
  WEB_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(1),
  /** PostgreSQL: wait for a new connection or a free pool slot before answering 503. */
  DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).default(5000),
  /** PostgreSQL: statement_timeout on the server, and (plus a margin) the client's wait for an answer. */
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** PostgreSQL: an idle pooled connection is closed after this long. */
  DB_IDLE_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /**
   * The database's circuit breaker (src/db/breaker.ts): a `SELECT 1` this long after the previous
   * probe ended. With DB_PROBE_TIMEOUT_MS it bounds how long a frozen database goes unnoticed.
   */
  DB_PROBE_INTERVAL_MS: z.coerce.number().int().min(50).max(60_000).default(250),
  /** A probe not answered within this opens the breaker: waiting and new requests answer 503. */
  DB_PROBE_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(500),
  /** Default budget of one interactive transaction (bulk imports set their own, longer). */
  DB_TRANSACTION_TIMEOUT_MS: z.coerce.number().int().min(100).default(15_000),
  /**
   * SQLite: how long a write waits for another process's lock before answering 503. better-sqlite3
   * waits synchronously, so the whole process stalls for up to this long: keep it short.
   */
  SQLITE_BUSY_TIMEOUT_MS: z.coerce.number().int().min(0).default(2000),
  /**
   * SQLite: the page cache of the service's connection, in MiB, held in the process's own memory
   * (PostgreSQL's is the server's). Larger helps a database far bigger than it; the OS's file cache
   * serves the rest.
   */
  SQLITE_CACHE_MIB: z.coerce.number().int().min(1).max(4096).default(8),
  /** On SIGTERM: how long in-flight requests may take before the process exits anyway. */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
  /** Node's headersTimeout: a client must send its whole request head within this (slowloris). */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).default(15_000),
  /** Node's requestTimeout: the whole request, body included, must arrive within this. */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).default(120_000),
  /**
   * How long an idle keep-alive socket stays open. Longer than a load balancer's idle timeout
   * (60 s is common), so the balancer, not this server, closes idle connections: a server-side
   * close races with a request the client is sending, and that request gets ECONNRESET.
   */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).default(65_000),
  /** Open sockets per instance; further connections are dropped at once. */
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).default(1024),
  /**
   * Open sockets per client address (an IPv6 /64), HTTP and WebSocket together, per instance; more
   * are dropped at once. Unset: an eighth of HTTP_MAX_CONNECTIONS (128). Not applied with
   * TRUST_PROXY, where every socket is the proxy's (docs/security.md "Connections").
   */
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(1).optional(),
  /** A WebSocket that has not sent connection_init within this is closed (4408). */
  WEBSOCKET_INIT_TIMEOUT_MS: z.coerce.number().int().min(100).default(3000),
  /** A WebSocket with no operation running for this long (none started, or all ended) is closed (1000). */
  WEBSOCKET_IDLE_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  /** Live subscriptions (SSE on /graphql) open at once per API key, per instance; more are RATE_LIMITED. */
  SUBSCRIPTIONS_PER_KEY: z.coerce.number().int().min(1).default(20),
  /** Live subscriptions open at once per client address, per instance; more are RATE_LIMITED. */
  SUBSCRIPTIONS_PER_IP: z.coerce.number().int().min(1).default(50),
  /** A comment line (`:`) is sent on an idle subscription stream this often, so proxies keep it open. */
  SUBSCRIPTION_KEEPALIVE_MS: z.coerce.number().int().min(50).default(15_000),
  /** Serve Prometheus metrics at GET /metrics. */
  METRICS_ENABLED: bool.default(true),
  /** When set, /metrics requires `Authorization: Bearer <token>`. */
  METRICS_TOKEN: z.string().min(1).optional(),
  /** Deliveries of one webhook endpoint in flight at once on one instance (src/webhooks/dispatcher.ts). */
  WEBHOOK_ENDPOINT_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(10),
  /** The largest answer an Idempotency-Key keeps for replay (characters); larger ones are not kept. */
  IDEMPOTENCY_MAX_ANSWER_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(64 * 1024),
  /** How much of kept answers one account may have at once (characters, within the 24 h retention). */
  IDEMPOTENCY_ACCOUNT_BUDGET_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(16 * 1024 * 1024),
  /** The Bearer token of carrier connectors (reportCarrierStatus); unset: nobody may report. */
  CARRIER_CONNECTOR_TOKEN: z.string().min(32, 'CARRIER_CONNECTOR_TOKEN must be at least 32 characters').optional(),
  /**
   * Origins (scheme://host[:port], comma-separated) whose browser pages may send credentialed
   * requests to /graphql (docs/security.md "CORS"); everyone else gets `*` without credentials.
   */
  /**
   * OpenTelemetry traces (docs/operations.md, "Traces"): off unless the OTLP endpoint is set; the
   * standard names. Traces go to `<endpoint>/v1/traces`.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ message: 'must be an absolute http(s) URL such as http://collector:4318' }).optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z
    .enum(['http/protobuf', 'http/json'], { message: 'must be http/protobuf or http/json (grpc is not supported)' })
    .default('http/protobuf'),
  OTEL_SERVICE_NAME: z.string().min(1).default('sms-channel-gateway'),
  /** Where outgoing SMS go: the built-in sandbox (default) or an SMPP 3.4 bind (docs/sms.md "SMPP"). */
  SMS_GATEWAY: z.enum(['sandbox', 'smpp'], { message: 'must be sandbox or smpp' }).default('sandbox'),
  /** smpp://SYSTEM_ID:PASSWORD@HOST:PORT, or smpps:// for TLS. Required when SMS_GATEWAY=smpp. */
  SMPP_URL: z.string().refine(isSmppUrl, 'must be smpp://SYSTEM_ID:PASSWORD@HOST:PORT or smpps://SYSTEM_ID:PASSWORD@HOST:PORT').optional(),
  /** The bind's system_type (at most 12 characters); empty unless the SMSC asks for one. */
  SMPP_SYSTEM_TYPE: z.string().max(12, 'must be at most 12 characters').default(''),
  /** submit_sm PDUs in flight at once on the bind. */
  SMPP_WINDOW: z.coerce.number().int().min(1).max(1000).default(10),
  /** submit_sm PDUs a second on the bind; unset: no limit beyond the window. */
  SMPP_TPS: z.coerce.number().positive().max(100_000).optional(),
  /** enquire_link period; a peer silent for two periods is dead and the bind is made again. */
  SMPP_ENQUIRE_LINK_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /** A submit_sm without an answer this long may have gone out: it is never sent again (docs/sms.md "Crashes"). */
  SMPP_RESPONSE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  /** Long texts: `udh` (concatenated parts, one submit_sm each) or `payload` (one submit_sm, message_payload TLV). */
  SMPP_LONG_MESSAGES: z.enum(['udh', 'payload'], { message: 'must be udh or payload' }).default('udh'),
  /** smpps://: a PEM file of the certificate authority to trust besides the system ones (a self-signed SMSC). */
  SMPP_TLS_CA_FILE: z.string().min(1).optional(),
  /** `only`: /graphql answers trusted documents alone (docs/graphql.md "Persisted documents"). */
  GRAPHQL_TRUSTED_DOCUMENTS: z.enum(['open', 'only'], { message: 'must be open or only' }).default('open'),
  /** A JSON manifest `{ "<sha256 hex>": "<document>" }` of the operator's own trusted documents. */
  GRAPHQL_TRUSTED_DOCUMENTS_FILE: z.string().min(1).optional(),
  /** Queries on /graphql run compiled from their second use (docs/graphql.md "Compiled queries"); false: graphql-js always. */
  GRAPHQL_COMPILED_EXECUTION: bool.default(true),
  /** Milliseconds between two exports of finished spans (the batch span processor's delay). */
  OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().min(1).default(5000),
  CORS_ORIGINS: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    )
    .superRefine((origins, ctx) => {
      for (const origin of origins) {
        if (!isOrigin(origin))
          ctx.addIssue({
            code: 'custom',
            message: `${JSON.stringify(origin)} is not an origin: write scheme://host[:port] with no path, such as https://app.example`,
          })
      }
    })
    .default([]),
  /** Days the audit log keeps an entry (docs/console.md "Audit log"); the worker purges older ones. */
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(365),
})

/** smpp:// or smpps:// with a system id, a host and a port. */
function isSmppUrl(value: string): boolean {
  try {
    const url = new URL(value)
    return (url.protocol === 'smpp:' || url.protocol === 'smpps:') && url.username !== '' && url.hostname !== '' && url.port !== ''
  } catch {
    return false
  }
}

/** An exact serialized origin, as browsers send it in `Origin`: http(s), lower case, no path, no default port. */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value)
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value
  } catch {
    return false
  }
}

export type Env = z.infer<typeof schema> & {
  PUBLIC_BASE_URL: string
  /**
   * Where PUBLIC_BASE_URL came from: given, built from a given PORT, or the default (port 4000).
   * The CLI prefers the URL a running server recorded over the default (src/db/public-base-url.ts).
   */
  PUBLIC_BASE_URL_FROM: 'PUBLIC_BASE_URL' | 'PORT' | 'default'
}

/** Parses the environment once. Throws an Error listing every problem. */
export function parseEnv(source: Record<string, string | undefined>): Env {
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''))
  const result = schema
    .refine((env) => env.SMS_GATEWAY !== 'smpp' || env.SMPP_URL, { path: ['SMPP_URL'], message: 'is required when SMS_GATEWAY=smpp' })
    .safeParse(cleaned)
  if (!result.success) {
    const lines = result.error.issues.map((i) => {
      const name = i.path.join('.')
      // zod's own words for a coerced number ("expected number, received NaN") name no setting's rule.
      const message =
        i.code === 'invalid_type' && i.expected === 'number' ? `must be a number, not ${JSON.stringify(cleaned[name])}` : i.message
      return `  ${name}: ${message}`
    })
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`)
  }
  const env = result.data
  return {
    ...env,
    PUBLIC_BASE_URL: (env.PUBLIC_BASE_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, ''),
    PUBLIC_BASE_URL_FROM: env.PUBLIC_BASE_URL ? 'PUBLIC_BASE_URL' : cleaned.PORT !== undefined ? 'PORT' : 'default',
  }
}

/** For entry points only (server, CLI): parse process.env or print the problems on one line and exit. */
export function loadEnvOrExit(): Env {
  try {
    return parseEnv(process.env)
  } catch (error) {
    const [title, ...problems] = (error as Error).message.split('\n')
    console.error(`${title} ${problems.map((p) => p.trim()).join('; ')}`)
    process.exit(1)
  }
}
