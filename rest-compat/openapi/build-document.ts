// Builds the OpenAPI 3.1 document of the REST layer from the route table: each route's `openapi`
// entry gives its operation; the error answers, security and shared schemas are added here, so the
// document cannot list a path the router does not serve or miss one it does.
import { Kind, type OperationDefinitionNode } from 'graphql'
import type { RestRoute } from '../route.js'
import { schema } from '../../src/graphql/schema.js'
import { channelSchemas } from './channel-schemas.js'
import { errorResponseName, errorResponses, errorSchemas, errorStatusesOf, responseHeaders } from './error-responses.js'
import { messagingSchemas } from './messaging-schemas.js'
import { smsSchemas } from './sms-schemas.js'

export type OpenApiDocument = {
  openapi: string
  info: Record<string, unknown>
  paths: Record<string, Record<string, Operation>>
  components: Record<string, Record<string, unknown>>
  [key: string]: unknown
}

/** A response, or a `$ref` to one in `components.responses`. */
export type ResponseObject =
  | { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema: unknown; example?: unknown }> }
  | { $ref: string }

export type Operation = {
  operationId: string
  responses: Record<string, ResponseObject>
  [key: string]: unknown
}

/** `/contact/group/:id` -> `/contact/group/{id}` */
export const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}')

const TAGS = [
  { name: 'Groups', description: 'Contact groups of the account (messaging API: Bearer key).' },
  { name: 'Contacts', description: 'Contacts keyed by mobile number (messaging API: Bearer key).' },
  { name: 'Sending', description: 'Sending an SMS to a number or to every contact of a group (messaging API: Bearer key).' },
  { name: 'Delivery reports', description: 'Polling the delivery report of a sent SMS (messaging API: Bearer key).' },
  { name: 'Channel', description: 'Now playing, schedule and catchups of a channel (public, no key).' },
  { name: 'Programs', description: 'Programs, episodes and airings of a channel (public, no key).' },
  { name: 'Guides', description: 'Program guides for players and calendars: XMLTV, iCalendar, M3U (public, no key).' },
]

export function buildOpenApiDocument(routes: RestRoute[], options: { version: string }): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {}
  for (const route of routes) {
    const path = openApiPath(route.path)
    paths[path] ??= {}
    paths[path][route.method.toLowerCase()] = operationOf(route)
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'sms-channel-gateway REST API',
      version: options.version,
      description: [
        'The legacy REST interfaces of the gateway, each path answering with its exact documented JSON.',
        '',
        '- **Messaging API** (groups, contacts, delivery reports): every request carries `Authorization: Bearer <API key>`.',
        '  Create an account and its first key with `npm run cli -- account:create --name "Acme"`.',
        '  Errors are `{error, code, details?}`.',
        '- **Channel API** (channels, programs, episodes): public and read-only, CORS open; errors are `{error}`.',
        '',
        'The same data has a GraphQL API at `/graphql` (GraphiQL in a browser).',
      ].join('\n'),
    },
    servers: [{ url: '/api', description: 'This service' }],
    tags: TAGS,
    paths,
    components: {
      schemas: { ...messagingSchemas, ...smsSchemas, ...channelSchemas, ...errorSchemas },
      responses: errorResponses(),
      headers: responseHeaders,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API key of the account (`gk_…`), created with `npm run cli -- account:create` or `apikey:create`. Each operation lists the key scopes it needs; a key without one gets 403 FORBIDDEN.',
        },
      },
    },
  }
}

function operationOf(route: RestRoute): Operation {
  const doc = route.openapi
  const name = `${route.method} ${route.path}`
  if (!doc) {
    // Kept in the document so the path is visible; test/openapi.test.ts fails for it.
    return { operationId: name, summary: `${name} (undocumented)`, responses: { 200: { description: 'Not documented' } } }
  }
  const pathParams = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!)
  const documented = Object.keys(doc.params)
  if (pathParams.join() !== documented.join()) {
    throw new Error(
      `OpenAPI for ${name}: path parameters are ${pathParams.join(', ') || 'none'}, documented ${documented.join(', ') || 'none'}`,
    )
  }
  const parameters = [
    ...Object.entries(doc.params).map(([n, p]) => ({
      name: n,
      in: 'path',
      required: true,
      description: p.description,
      schema: p.schema,
      ...example(p.example),
    })),
    ...Object.entries(doc.query ?? {}).map(([n, p]) => ({
      name: n,
      in: 'query',
      required: false,
      description: p.description,
      schema: p.schema,
      ...example(p.example),
    })),
    ...(route.api === 'messaging' && route.method === 'POST'
      ? [
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            description:
              'Up to 255 printable ASCII characters. A repeat within 24 h gets the first answer again (Idempotency-Replayed: true).',
            schema: { type: 'string', minLength: 1, maxLength: 255 },
          },
        ]
      : []),
  ]
  const okHeaders: Record<string, unknown> = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } }
  if (route.etag) okHeaders.ETag = { $ref: '#/components/headers/ETag' }
  if (route.headers) okHeaders['Cache-Control'] = { $ref: '#/components/headers/Cache-Control' }
  if (route.paging) {
    okHeaders.Link = { $ref: '#/components/headers/Link' }
    okHeaders['X-Total-Count'] = { $ref: '#/components/headers/X-Total-Count' }
  }
  const responses: Operation['responses'] = {
    200: {
      description: doc.response.description,
      headers: okHeaders,
      content: { [doc.response.contentType ?? 'application/json']: { schema: doc.response.schema, example: doc.response.example } },
    },
  }
  if (route.etag) responses[304] = { description: 'Not modified: the If-None-Match ETag still matches.' }
  for (const status of errorStatusesOf(route))
    responses[status] = { $ref: `#/components/responses/${errorResponseName(route.api, status)}` }
  const scopes = route.api === 'messaging' ? scopesOf(route) : []
  // The sentence GraphQL fields end with too (src/graphql/plugins/field-scopes.ts), so a reader of
  // the reference sees it; renderers do not all show a bearer scheme's scopes.
  const scopeText =
    route.api === 'messaging' ? `Scope: ${scopes.map((s) => `\`${s}\``).join(' and ')}.` : 'Scope: public (no API key needed).'
  return {
    operationId: doc.operationId,
    tags: [doc.tag],
    summary: doc.summary,
    description: doc.description ? `${doc.description}\n\n${scopeText}` : scopeText,
    ...(parameters.length ? { parameters } : {}),
    ...(doc.requestBody
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: doc.requestBody.schema, example: doc.requestBody.example } },
          },
        }
      : {}),
    responses,
    // Channel routes are public: an empty list overrides nothing but says so explicitly. A messaging
    // route needs the scopes of the GraphQL fields its document runs (src/graphql/plugins/field-scopes.ts).
    security: route.api === 'messaging' ? [{ bearerAuth: scopes }] : [],
  }
}

/** The API key scopes a route needs: those of the root fields its GraphQL document selects. */
export function scopesOf(route: Pick<RestRoute, 'document'>): string[] {
  const operation = route.document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
  const root = operation?.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType()
  const scopes = (operation?.selectionSet.selections ?? []).flatMap((selection) => {
    const scope = selection.kind === Kind.FIELD ? root?.getFields()[selection.name.value]?.extensions.scope : undefined
    return typeof scope === 'string' && scope !== 'public' && scope !== 'connector' ? [scope] : []
  })
  return [...new Set(scopes)]
}

const example = (value: unknown) => (value === undefined ? {} : { example: value })
