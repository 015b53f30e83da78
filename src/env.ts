import { z } from 'zod'

const bool = z
  .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1')

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
    .default('KE'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(5 * 1024 * 1024),
  /** Requests per second allowed per API key (token bucket); 0 turns the limit off. */
  RATE_LIMIT_PER_SECOND: z.coerce.number().min(0).default(50),
  RATE_LIMIT_BURST: z.coerce.number().int().min(1).default(200),
  /** Delay before the sandbox gateway reports a final status. */
  SANDBOX_DELIVERY_DELAY_MS: z.coerce.number().int().min(0).default(1000),
  /** How long now-playing data is shared between requests of one instance. */
  CHANNEL_CACHE_MS: z.coerce.number().int().min(0).default(1000),
  /** Run the cron loop (webhook dispatch, gateway events) in this process. */
  WORKER_ENABLED: bool.default(true),
  /** Serve Prometheus metrics at GET /metrics. */
  METRICS_ENABLED: bool.default(true),
  /** When set, /metrics requires `Authorization: Bearer <token>`. */
  METRICS_TOKEN: z.string().min(1).optional(),
})

export type Env = z.infer<typeof schema> & { PUBLIC_BASE_URL: string }

/** Parses the environment once. Throws an Error listing every problem. */
export function parseEnv(source: Record<string, string | undefined>): Env {
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''))
  const result = schema.safeParse(cleaned)
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`)
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`)
  }
  const env = result.data
  return { ...env, PUBLIC_BASE_URL: (env.PUBLIC_BASE_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, '') }
}

/** For entry points only (server, CLI): parse process.env or print the problems and exit. */
export function loadEnvOrExit(): Env {
  try {
    return parseEnv(process.env)
  } catch (error) {
    console.error((error as Error).message)
    process.exit(1)
  }
}
