// The GraphQL limits run once per document text (src/graphql/limits/graphql-limits-plugin.ts).
import { describe, expect, it } from 'vitest'
import { createYoga } from 'graphql-yoga'
import { schema } from '../src/graphql/schema.js'
import { graphqlLimitsPlugin } from '../src/graphql/limits/graphql-limits-plugin.js'
import { graphqlLimits } from '../src/graphql/limits/limits.js'

/** The real limits, counting how often the scan (maxDocumentLength) and the shape check (maxDefinitions) read them. */
function countingLimits() {
  const reads = { scan: 0, check: 0 }
  const limits = new Proxy(graphqlLimits, {
    get(target, key, receiver) {
      if (key === 'maxDocumentLength') reads.scan++
      if (key === 'maxDefinitions') reads.check++
      return Reflect.get(target, key, receiver)
    },
  })
  return { limits, reads }
}

function post(yoga: ReturnType<typeof createYoga>, query: string) {
  return yoga.fetch(
    new Request('http://localhost/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query }),
    }),
  )
}

describe('GraphQL limits per document text', () => {
  it('scans and checks a repeated document once (Yoga parser cache + per-document check), a new text again', async () => {
    const { limits, reads } = countingLimits()
    const yoga = createYoga({ schema, logging: false, plugins: [graphqlLimitsPlugin(limits)] })
    const query = '{ __typename }'
    for (let i = 0; i < 3; i++) expect(await (await post(yoga, query)).json()).toEqual({ data: { __typename: 'Query' } })
    const afterOne = { ...reads }
    expect(afterOne.check).toBe(1)
    expect(afterOne.scan).toBeGreaterThan(0)
    await post(yoga, '{ a: __typename }')
    expect(reads.check).toBe(2)
    expect(reads.scan).toBe(afterOne.scan * 2)
  })

  it('refuses a repeated over-limit document every time, with its 400 and message', async () => {
    const yoga = createYoga({ schema, logging: false, plugins: [graphqlLimitsPlugin()] })
    const deep = `{ ${Array.from({ length: 31 }, (_, i) => `a${i}: __typename`).join(' ')} }` // 31 aliases, over 30
    const bodies = []
    for (let i = 0; i < 3; i++) {
      const response = await post(yoga, deep)
      expect(response.status).toBe(400)
      bodies.push(await response.json())
    }
    expect(bodies[0].errors[0].extensions.code).toBe('BAD_REQUEST')
    expect(bodies[0].errors[0].message).toMatch(/aliases/)
    expect(bodies[1]).toEqual(bodies[0])
    expect(bodies[2]).toEqual(bodies[0])
  })
})
