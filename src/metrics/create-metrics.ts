import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import { routeTemplate } from './route-template.js'

/** Seconds; covers a cached read (sub-millisecond) up to a request near the 10 s shutdown grace. */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const QUERY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5]
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/**
 * One registry per app (tests build many apps in one process, so nothing is global). The server
 * creates it before opening the database, because query timings are reported by the Prisma client.
 */
export function createMetrics() {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })

  const httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered by app.fetch, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  })
  const httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving an HTTP request to having its response, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: REQUEST_BUCKETS,
    registers: [registry],
  })
  // Replays are counted with a plain increment on the hot path and handed to prom-client at scrape.
  let replays = 0
  // prom-client registers a metric when it is made; this one is read through its collect().
  // oxlint-disable-next-line no-new
  new Counter({
    name: 'http_microcache_replays_total',
    help: 'Public channel answers replayed from the microcache by the HTTP listener (not in http_requests_total: they never reach app.fetch)',
    registers: [registry],
    collect() {
      if (replays > 0) this.inc(replays)
      replays = 0
    },
  })
  const graphqlOperations = new Counter({
    name: 'graphql_operations_total',
    help: 'GraphQL operations executed at /graphql, by operation name and type and outcome (ok, error)',
    labelNames: ['operation_name', 'operation_type', 'outcome'] as const,
    registers: [registry],
  })
  const graphqlDuration = new Histogram({
    name: 'graphql_operation_duration_seconds',
    help: 'Execution time of GraphQL operations at /graphql, by operation name and type',
    labelNames: ['operation_name', 'operation_type'] as const,
    buckets: REQUEST_BUCKETS,
    registers: [registry],
  })
  const graphqlFastLane = new Counter({
    name: 'graphql_fast_lane_answers_total',
    help: 'Queries at /graphql answered by the fast lane (a known document run compiled without Yoga; docs/graphql.md)',
    registers: [registry],
  })
  const graphqlErrors = new Counter({
    name: 'graphql_errors_total',
    help: 'GraphQL requests or operations that failed, by phase (parse, validate, execute)',
    labelNames: ['phase'] as const,
    registers: [registry],
  })
  const queryDuration = new Histogram({
    name: 'db_query_duration_seconds',
    help: 'Time of SQL statements sent by the Prisma client, by statement kind',
    labelNames: ['statement'] as const,
    buckets: QUERY_BUCKETS,
    registers: [registry],
  })

  return {
    registry,
    graphqlOperations,
    graphqlDuration,
    graphqlErrors,
    graphqlFastLane,
    observeRequest(method: string, pathname: string, status: number, seconds: number) {
      const m = method.toUpperCase()
      const labels = { method: METHODS.has(m) ? m : 'OTHER', route: routeTemplate(m, pathname), status: String(status) }
      httpRequests.inc(labels)
      httpDuration.observe(labels, seconds)
    },
    /** One answer replayed by the HTTP listener (src/process/http-listener.ts); per hit, so only a counter. */
    observeReplay() {
      replays++
    },
    /** For `openDatabase(url, { onQueryEvent })`: Prisma reports `duration` in milliseconds. */
    observeQuery(event: { query: string; duration: number }) {
      queryDuration.observe({ statement: statementKind(event.query) }, event.duration / 1000)
    },
  }
}

export type Metrics = ReturnType<typeof createMetrics>

function statementKind(sql: string): string {
  const word = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase()
  switch (word) {
    case 'SELECT':
    case 'INSERT':
    case 'UPDATE':
    case 'DELETE':
      return word.toLowerCase()
    case 'BEGIN':
    case 'COMMIT':
    case 'ROLLBACK':
      return 'transaction'
    default:
      return 'other'
  }
}
