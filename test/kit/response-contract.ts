// Checks REST answers against the OpenAPI document the service serves, so no route can drift from
// its documentation: every answer the suite receives under /api is validated (test/kit/kit.ts).
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import type { OpenApiDocument } from '../../rest-compat/openapi/build-document.js'

type Json = Record<string, any>

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
// RFC 3339 date-time, any number of fraction digits (the legacy shapes print microseconds).
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

/** `#/components/schemas/X` -> `#/$defs/X`, so each schema compiles alone with the shared ones as $defs. */
function toDefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toDefs)
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        k === '$ref' && typeof v === 'string' ? v.replace('#/components/schemas/', '#/$defs/') : toDefs(v),
      ]),
    )
  }
  return value
}

export class ResponseContract {
  private readonly ajv: Ajv2020
  private readonly defs: Json
  private readonly compiled = new Map<string, ValidateFunction>()
  private readonly templates: { template: string; pattern: RegExp; specificity: number }[]

  constructor(readonly document: OpenApiDocument) {
    this.ajv = new Ajv2020({
      allErrors: true,
      allowUnionTypes: true,
      formats: { uuid: UUID, 'date-time': DATE_TIME, uri: (s: string) => URL.canParse(s) },
    })
    this.defs = toDefs(document.components.schemas) as Json
    this.templates = Object.keys(document.paths)
      .map((template) => {
        const segments = template.split('/')
        const source = segments.map((s) => (s.startsWith('{') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')
        const params = segments.filter((s) => s.startsWith('{')).length
        return { template, pattern: new RegExp(`^${source}/?$`), specificity: (segments.length - params) * 10 - params }
      })
      .sort((a, b) => b.specificity - a.specificity)
  }

  /** A schema (which may $ref the shared ones), compiled once. */
  private validator(key: string, schema: unknown): ValidateFunction {
    let validate = this.compiled.get(key)
    if (!validate) {
      validate = this.ajv.compile({ ...(toDefs(schema) as Json), $defs: this.defs })
      this.compiled.set(key, validate)
    }
    return validate
  }

  private resolve<T>(node: any): T {
    if (!node?.$ref) return node
    const [, kind, name] = /^#\/components\/(\w+)\/(.+)$/.exec(node.$ref)!
    return this.document.components[kind!]![name!] as T
  }

  /**
   * Why this answer does not match the document, or null when it does. `path` is the request path
   * with its query; answers outside the REST paths are not checked.
   */
  check(method: string, path: string, status: number, body: unknown, hasBody: boolean, contentType?: string | null): string | null {
    const pathname = path.split('?')[0]!
    if (!pathname.startsWith('/api/') || pathname === '/api/openapi.json' || pathname.startsWith('/api/docs')) return null
    method = method.toUpperCase()
    // HEAD and preflight answers have no body; HEAD is the GET it mirrors.
    if (method === 'OPTIONS' || method === 'HEAD') return null
    const rest = pathname.slice('/api'.length)
    const hit = this.templates.find((t) => t.pattern.test(rest))
    const operation = hit && this.document.paths[hit.template]![method.toLowerCase()]
    // The channel API: /channels and /programs paths, /channels.m3u included.
    const channel = /^\/(channels|programs)([/.]|$)/.test(rest)
    const where = `${method} ${hit?.template ?? '(no documented path)'} (request ${method} ${path})`
    if (!operation) {
      // Unknown paths (404) and wrong methods (405) answer in the error shape of the API.
      const schema = { $ref: `#/components/schemas/${channel ? 'ChannelError' : 'MessagingError'}` }
      return this.validate(`error:${channel}`, schema, body, where, status)
    }
    const response = this.resolve<Json | undefined>(operation.responses[status])
    if (!response)
      return `${where} answered ${status}, which the OpenAPI document does not list for it (listed: ${Object.keys(operation.responses).join(', ')})\nbody: ${JSON.stringify(body)}`
    const content: Record<string, { schema?: unknown }> = response.content ?? {}
    const types = Object.keys(content)
    if (!types.length) return hasBody ? `${where} answered ${status} with a body, but the document says it has none` : null
    // The answer's media type must be one the document lists; without one (a check of an example)
    // the first listed is meant.
    const type = contentType ?? types[0]!
    const media = types.find((t) => mediaType(t) === mediaType(type))
    if (!media) return `${where} answered ${status} as ${type}, but the document lists ${types.join(', ')}`
    if (mediaType(media) !== 'application/json') {
      // Not JSON: the body is text; its schema (a string) is checked here, its format by the route's own tests.
      if (typeof body !== 'string' || !hasBody) return `${where} answered ${status} with no ${media} text`
    }
    return this.validate(`${hit!.template} ${method} ${status} ${media}`, content[media]!.schema, body, where, status)
  }

  private validate(key: string, schema: unknown, body: unknown, where: string, status: number): string | null {
    const validate = this.validator(key, schema)
    if (validate(body)) return null
    return `${where} answered ${status} with a body that does not match the OpenAPI document:\n  ${this.ajv.errorsText(validate.errors, { separator: '\n  ', dataVar: 'body' })}\nbody: ${JSON.stringify(body, null, 2)}`
  }
}

/** `Text/Calendar; charset=utf-8` -> `text/calendar` */
const mediaType = (contentType: string) => contentType.split(';')[0]!.trim().toLowerCase()
