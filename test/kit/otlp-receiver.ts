// A real OTLP/HTTP trace receiver (node:http on 127.0.0.1): what the service's exporter POSTs to
// <endpoint>/v1/traces. http/json bodies are decoded into spans; http/protobuf bodies are kept raw.
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number
  attributes: Record<string, unknown>
  links: { traceId: string; spanId: string }[]
  service: string
}

interface OtlpValue {
  stringValue?: string
  intValue?: string | number
  boolValue?: boolean
  doubleValue?: number
}
interface OtlpAttribute {
  key: string
  value: OtlpValue
}

const valueOf = (v: OtlpValue) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue))
const attributesOf = (list: OtlpAttribute[] = []) => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]))

export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = []
  const protobufBodies: Buffer[] = []
  const contentTypes: string[] = []
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const type = req.headers['content-type'] ?? ''
      contentTypes.push(`${req.method} ${req.url} ${type}`)
      if (req.url !== '/v1/traces') {
        res.writeHead(404).end()
        return
      }
      if (type.startsWith('application/json')) {
        const data = JSON.parse(body.toString('utf8')) as {
          resourceSpans: {
            resource: { attributes: OtlpAttribute[] }
            scopeSpans: {
              spans: (Omit<ReceivedSpan, 'attributes' | 'links' | 'service'> & {
                attributes?: OtlpAttribute[]
                links?: { traceId: string; spanId: string }[]
              })[]
            }[]
          }[]
        }
        for (const rs of data.resourceSpans) {
          const service = String(attributesOf(rs.resource.attributes)['service.name'])
          for (const ss of rs.scopeSpans)
            for (const span of ss.spans)
              spans.push({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? '',
                name: span.name,
                kind: span.kind,
                attributes: attributesOf(span.attributes),
                links: (span.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
                service,
              })
        }
      } else protobufBodies.push(body)
      res.writeHead(200, { 'content-type': type || 'application/json' }).end(type.startsWith('application/json') ? '{}' : '')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    protobufBodies,
    contentTypes,
    close: () => new Promise((resolve) => server.close(resolve)),
  }
}
