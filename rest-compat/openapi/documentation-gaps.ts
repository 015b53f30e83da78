// What a route still lacks for the OpenAPI document; test/openapi.test.ts requires none.
import type { RestRoute } from '../route.js'

const isSchema = (schema: unknown) => typeof schema === 'object' && schema !== null && Object.keys(schema).length > 0

export function documentationGaps(routes: RestRoute[]): string[] {
  return routes.flatMap((route) => {
    const name = `${route.method} ${route.path}`
    const doc = route.openapi
    if (!doc) return [`${name}: no openapi entry`]
    const gaps: string[] = []
    if (!isSchema(doc.response?.schema)) gaps.push(`${name}: no response schema`)
    if (doc.response?.example === undefined) gaps.push(`${name}: no response example`)
    if (route.body && !isSchema(doc.requestBody?.schema)) gaps.push(`${name}: reads a body but has no request body schema`)
    if (route.body && doc.requestBody?.example === undefined) gaps.push(`${name}: no request body example`)
    if (!route.body && doc.requestBody) gaps.push(`${name}: documents a body it does not read`)
    return gaps
  })
}
