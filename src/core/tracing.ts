// OpenTelemetry traces, off unless OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/operations.md, "Traces").
// When off, none of the SDK is loaded: the code that makes spans uses @opentelemetry/api alone,
// whose tracer is a no-op until a provider registers.
import { context, propagation, trace, type Context, type Link, type Span, type SpanOptions } from '@opentelemetry/api'
import type { ReadableSpan, Sampler, Span as SdkSpan, SpanProcessor } from '@opentelemetry/sdk-trace-node'
import type { Env } from './env.js'

/** The root span of one pass of the worker's loop (src/process/worker.ts). */
export const WORKER_TICK = 'worker tick'
/** Set on a worker tick that found nothing to do: its spans are not exported (WorkerTickFilter). */
const IDLE = 'worker.idle'

/** The one tracer of the service's own spans (the REST route's GraphQL operation, webhook attempts). */
export const tracer = trace.getTracer('sms-channel-gateway')

/** True once startTracing has registered a provider: hot paths skip even no-op spans until then. */
export let tracingEnabled = false

export interface Tracing {
  /** Yoga's envelop plugin for /graphql: a span per parse, validate and execution. */
  graphqlPlugin: unknown
  /** Exports what is still buffered and stops. */
  shutdown(): Promise<void>
}

/**
 * Registers the tracer provider (W3C trace context and baggage propagation), the OTLP exporter
 * of OTEL_EXPORTER_OTLP_PROTOCOL and the maintained instrumentations: node:http (server spans that
 * continue an incoming `traceparent`, client spans that send one) and Prisma (a span per query and
 * per SQL statement). The GraphQL execution of /graphql is traced by Yoga's envelop plugin
 * (graphqlTracingPlugin). Returns null when tracing is off.
 */
export async function startTracing(env: Env): Promise<Tracing | null> {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT) return null
  const [
    { NodeTracerProvider, BatchSpanProcessor, ParentBasedSampler, SamplingDecision },
    { resourceFromAttributes },
    { registerInstrumentations },
    { HttpInstrumentation },
    prisma,
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/instrumentation'),
    import('@opentelemetry/instrumentation-http'),
    import('@prisma/instrumentation'),
  ])
  const url = new URL(
    'v1/traces',
    env.OTEL_EXPORTER_OTLP_ENDPOINT.endsWith('/') ? env.OTEL_EXPORTER_OTLP_ENDPOINT : `${env.OTEL_EXPORTER_OTLP_ENDPOINT}/`,
  ).toString()
  const { OTLPTraceExporter } =
    env.OTEL_EXPORTER_OTLP_PROTOCOL === 'http/json'
      ? await import('@opentelemetry/exporter-trace-otlp-http')
      : await import('@opentelemetry/exporter-trace-otlp-proto')
  /**
   * A query that belongs to no request, no worker tick and no other span of the service: a probe's
   * or a scrape's (their HTTP requests are not traced), the breaker's. Nobody asked for a trace of
   * it, so it starts none (and its statements, its children, are not recorded either).
   */
  const noOrphanQueries: Sampler = {
    shouldSample: (_context, _traceId, name) => ({
      decision: name.startsWith('prisma:') ? SamplingDecision.NOT_RECORD : SamplingDecision.RECORD_AND_SAMPLED,
    }),
    toString: () => 'NoOrphanQueries',
  }
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME }),
    sampler: new ParentBasedSampler({ root: noOrphanQueries }),
    spanProcessors: [
      new WorkerTickFilter(new BatchSpanProcessor(new OTLPTraceExporter({ url }), { scheduledDelayMillis: env.OTEL_BSP_SCHEDULE_DELAY })),
    ],
  })
  provider.register()
  const unregister = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      // Probes and scrapes are not requests anyone traces. (The exporter's own POSTs are not traced: it suppresses that itself.)
      new HttpInstrumentation({ ignoreIncomingRequestHook: (request) => /^\/(healthz|readyz|metrics)(\?|$)/.test(request.url ?? '') }),
      new prisma.PrismaInstrumentation(),
    ],
  })
  tracingEnabled = true
  const { useOpenTelemetry } = await import('@envelop/opentelemetry')
  return {
    graphqlPlugin: useOpenTelemetry({ resolvers: false, variables: false, result: false, document: true }, provider),
    async shutdown() {
      unregister()
      await provider.shutdown()
    },
  }
}

/** The W3C `traceparent` of the active span, for work that runs later in another context (a webhook delivery). */
export function currentTraceparent(): string | null {
  const carrier: Record<string, string> = {}
  propagation.inject(context.active(), carrier)
  return carrier.traceparent ?? null
}

/** A link to the span that a stored `traceparent` names (none when there is none or it is malformed). */
export function linkTo(traceparent: string | null | undefined): Link[] {
  if (!traceparent) return []
  const spanContext = trace.getSpanContext(propagation.extract(context.active(), { traceparent }))
  return spanContext && trace.isSpanContextValid(spanContext) ? [{ context: spanContext }] : []
}

/** Runs `work` inside a new active span, ending it (with the error recorded) when `work` settles. */
export async function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, options, async (span) => {
    try {
      return await work(span)
    } catch (error) {
      span.recordException(error as Error)
      span.setStatus({ code: 2 })
      throw error
    } finally {
      span.end()
    }
  })
}

/**
 * Runs one worker tick inside a root span, marked idle when `didWork` says it found nothing: the
 * idle tick's span and its polling queries are then dropped (WorkerTickFilter), so an idle instance
 * exports nothing, while a tick that did work exports it all, its polling included. A tick that
 * fails is exported too.
 */
export async function inWorkerTick<T>(work: () => Promise<T>, didWork: (result: T) => boolean): Promise<T> {
  if (!tracingEnabled) return work()
  return inSpan(WORKER_TICK, { root: true }, async (span) => {
    const result = await work()
    span.setAttribute(IDLE, !didWork(result))
    return result
  })
}

/** How many decisions about ended ticks are kept, for their spans that end later (a webhook's record). */
const DECISIONS_KEPT = 1000

/**
 * Holds the spans of a worker tick until the tick ends, then passes them on to `next` (the batch
 * exporter), or drops them all when the tick was idle. Every other span passes straight on.
 */
class WorkerTickFilter implements SpanProcessor {
  private readonly held = new Map<string, ReadableSpan[]>()
  private readonly decided = new Map<string, boolean>()

  constructor(private readonly next: SpanProcessor) {}

  onStart(span: SdkSpan, parentContext: Context): void {
    if (span.name === WORKER_TICK && !span.parentSpanContext) this.held.set(span.spanContext().traceId, [])
    this.next.onStart(span, parentContext)
  }

  onEnd(span: ReadableSpan): void {
    const traceId = span.spanContext().traceId
    const held = this.held.get(traceId)
    if (held && (span.name !== WORKER_TICK || span.parentSpanContext)) {
      held.push(span)
    } else if (held) {
      this.held.delete(traceId)
      const keep = span.attributes[IDLE] !== true
      this.decided.set(traceId, keep)
      if (this.decided.size > DECISIONS_KEPT) this.decided.delete(this.decided.keys().next().value!)
      if (keep) for (const s of [...held, span]) this.next.onEnd(s)
    } else if (this.decided.get(traceId) !== false) {
      this.next.onEnd(span)
    }
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush()
  }

  shutdown(): Promise<void> {
    this.held.clear()
    return this.next.shutdown()
  }
}
