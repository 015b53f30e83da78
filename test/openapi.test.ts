import { describe, expect, it } from 'vitest'
import { Validator } from '@seriousme/openapi-schema-validator'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { ResponseContract } from './kit/response-contract.js'
import { restRoutes } from '../rest-compat/routes.js'
import { buildOpenApiDocument, openApiPath, scopesOf, type OpenApiDocument } from '../rest-compat/openapi/build-document.js'
import { documentationGaps } from '../rest-compat/openapi/documentation-gaps.js'
import { ASSETS_PATH } from '../src/web/swagger-ui-assets.js'
import { GRAPHIQL_HEADERS } from '../src/web/graphiql.js'

const document = buildOpenApiDocument(restRoutes, { version: '0.0.0' })
const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ path, method, op: op as any })),
)

describe('the OpenAPI document (generated from the route table)', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(document) as any)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(document.openapi).toBe('3.1.0')
    // The validator does refuse a broken one: a response without its description.
    const broken = structuredClone(document) as any
    delete broken.paths['/contacts'].get.responses['200'].description
    expect((await new Validator().validate(broken)).valid).toBe(false)
  })

  it('documents every route of the REST router, and nothing else', () => {
    expect(documentationGaps(restRoutes)).toEqual([])
    expect(operations.map((o) => `${o.method.toUpperCase()} ${o.path}`).sort()).toEqual(
      restRoutes.map((r) => `${r.method} ${openApiPath(r.path)}`).sort(),
    )
    expect(operations).toHaveLength(28) // 13 messaging, 2 sending, 1 delivery report, 9 channel, 3 guides
    expect(new Set(operations.map((o) => o.op.operationId)).size).toBe(operations.length)
  })

  it('reports a route without a schema, so such a route fails the test above', () => {
    const route = restRoutes.find((r) => r.path === '/contact/save')!
    const { openapi, ...undocumented } = route
    expect(documentationGaps([undocumented])).toEqual(['POST /contact/save: no openapi entry'])
    expect(documentationGaps([{ ...route, openapi: { ...openapi!, response: { ...openapi!.response, schema: {} } } }])).toEqual([
      'POST /contact/save: no response schema',
    ])
    expect(documentationGaps([{ ...route, openapi: { ...openapi!, requestBody: undefined } }])).toEqual([
      'POST /contact/save: reads a body but has no request body schema',
      'POST /contact/save: no request body example',
    ])
    // The undocumented route still appears, marked, rather than vanishing from the document.
    expect(buildOpenApiDocument([undocumented], { version: '0' }).paths['/contact/save']!.post!.summary).toMatch(/undocumented/)
  })

  it('refuses a route whose documented path parameters differ from its path', () => {
    const route = restRoutes.find((r) => r.path === '/contact/:id')!
    expect(() => buildOpenApiDocument([{ ...route, openapi: { ...route.openapi!, params: {} } }], { version: '0' })).toThrow(
      'OpenAPI for GET /contact/:id: path parameters are id, documented none',
    )
  })

  it('gives messaging routes the Bearer scheme and their error answers; channel routes are public with {error}', () => {
    expect(document.components.securitySchemes).toEqual({ bearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }) })
    for (const { path, method, op } of operations) {
      const statuses = Object.keys(op.responses).map(Number)
      const route = restRoutes.find((r) => openApiPath(r.path) === path && r.method.toLowerCase() === method)!
      if (route.api === 'messaging') {
        // The API key scopes of the GraphQL fields the route runs (test/api-key-scopes.test.ts).
        expect(op.security, path).toEqual([{ bearerAuth: scopesOf(route) }])
        expect(scopesOf(route).length, path).toBeGreaterThan(0)
        expect(statuses, path).toEqual(expect.arrayContaining([200, 401, 404, 405, 429, 500, 503]))
        if (route.body) expect(statuses, path).toEqual(expect.arrayContaining([400, 413, 415, 422]))
        if (method === 'post') expect(statuses, path).toEqual(expect.arrayContaining([409, 422]))
        expect(op.responses[401].$ref).toBe('#/components/responses/MessagingError401')
      } else {
        expect(op.security, path).toEqual([])
        expect(statuses, path).toEqual(expect.arrayContaining([200, 304, 404]))
        expect(op.responses[404].$ref).toBe('#/components/responses/ChannelError404')
      }
    }
    const listing = document.paths['/contact/groups']!.get!
    expect(Object.keys(listing.responses)).toContain('422')
    expect(Object.keys(document.paths['/contact/group/{id}/update']!.patch!.responses)).toContain('409')
    expect(Object.keys(document.paths['/channels/{channel}/programs/upcoming']!.get!.responses)).toContain('400')
  })

  it('has examples that match their own schemas', () => {
    const contract = new ResponseContract(document)
    for (const { path, method, op } of operations) {
      const ok = Object.values(op.responses[200].content)[0] as any
      expect(ok.example, `${method} ${path}`).toBeDefined()
      expect(
        contract.check(
          method,
          `/api${path.replace(/\{(\w+)\}/g, (_: string, n: string) => op.parameters.find((p: any) => p.name === n).example)}`,
          200,
          ok.example,
          true,
        ),
      ).toBeNull()
    }
    for (const [name, response] of Object.entries(document.components.responses as Record<string, any>)) {
      const { example } = response.content['application/json']
      const path = name.startsWith('Channel') ? '/api/channels/x/nowhere' : '/api/nowhere'
      expect(contract.check('GET', path, Number(name.slice(-3)), example, true), name).toBeNull()
    }
  })

  it('checks answers: a drifted body or an unlisted status is reported with the route, the status and what is wrong', () => {
    const contract = new ResponseContract(document)
    const ok = {
      data: [{ uuid: 'not-a-uuid', name: 'A', description: 'x', extra: 1 }],
      meta: { search: '', total: 1, skipped: 0, perPage: 25, page: 1, pageCount: 1 },
    }
    const drift = contract.check('GET', '/api/contact/groups?page=1', 200, ok, true)!
    expect(drift).toContain('GET /contact/groups (request GET /api/contact/groups?page=1) answered 200 with a body that does not match')
    expect(drift).toContain('body/data/0/uuid must match format "uuid"')
    expect(drift).toContain('body/data/0 must NOT have additional properties')
    expect(contract.check('GET', '/api/contact/groups', 418, {}, true)).toMatch(/answered 418, which the OpenAPI document does not list/)
    expect(contract.check('GET', '/api/channels/city-tv/programs', 404, { error: 'x', code: 'NOT_FOUND' }, true)).toMatch(
      /must NOT have additional properties/,
    )
    expect(contract.check('GET', '/api/nope', 404, { error: 'No route for /nope', code: 'NOT_FOUND' }, true)).toBeNull()
    expect(contract.check('GET', '/graphql', 200, 'anything', true)).toBeNull()
  })
})

describe.each(targets)('docs pages on $name', (target) => {
  const kit = useKit(target)
  const get = (path: string, headers: Record<string, string> = {}) => kit.app.fetch(new Request(`http://localhost${path}`, { headers }))

  it('serves the generated document at /api/openapi.json, with an ETag and CORS', async () => {
    const res = await get('/api/openapi.json')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    const served = (await res.json()) as OpenApiDocument
    expect({ ...served, info: { ...served.info, version: '0.0.0' } }).toEqual(document)
    expect((await get('/api/openapi.json', { 'if-none-match': res.headers.get('etag')! })).status).toBe(304)
  })

  it('serves the home page linking every face of the service', async () => {
    const res = await get('/')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    const html = await res.text()
    for (const href of ['/graphql', '/api/docs', '/api/openapi.json', '/healthz', '/readyz', '/metrics'])
      expect(html).toContain(`href="${href}"`)
  })

  it('serves the API reference with Swagger UI from the service itself, no CDN', async () => {
    const html = await (await get('/api/docs')).text()
    expect(html).toContain(`${ASSETS_PATH}/swagger-ui-bundle.js`)
    expect(html).toContain("url: '/api/openapi.json'")
    expect(html).toContain('validatorUrl: null')
    expect(html).not.toMatch(/(src|href)="https?:/)
    for (const [file, type] of [
      ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
      ['swagger-ui.css', 'text/css; charset=utf-8'],
    ]) {
      const res = await get(`${ASSETS_PATH}/${file}`)
      expect(res.status, file).toBe(200)
      expect(res.headers.get('content-type')).toBe(type)
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(100_000)
    }
    // Other files of the package, and other versions, are not served.
    expect((await get(`${ASSETS_PATH}/package.json`)).status).toBe(404)
    expect((await get('/api/docs/assets/0.0.1/swagger-ui.css')).status).toBe(404)
  })

  it('redirects /api and /docs to the reference; other methods on the pages are not served', async () => {
    for (const path of ['/api', '/api/', '/docs', '/docs/']) {
      const res = await get(path)
      expect(res.status, path).toBe(302)
      expect(res.headers.get('location')).toBe('/api/docs')
    }
    const post = await kit.app.fetch(new Request('http://localhost/api/openapi.json', { method: 'POST' }))
    expect(post.status).toBe(404)
  })

  it('serves GraphiQL bundled (no CDN), with the Authorization header preset and a default query', async () => {
    const res = await get('/graphql', { accept: 'text/html' })
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('Gateway GraphQL')
    expect(html).not.toMatch(/unpkg\.com|cdn\.jsdelivr|esm\.sh|<script[^>]+src="https?:|<link[^>]+href="https?:/)
    expect(html).toContain(JSON.stringify(GRAPHIQL_HEADERS))
    expect(html).toContain('query Overview')
  })
})
