import { readFileSync } from 'node:fs'
import { buildSchema } from 'graphql'
import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'

const COMMITTED = readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8')

describe.each(targets)('the SDL at /graphql/schema.graphql on $name', (target) => {
  const kit = useKit(target)
  const get = (path: string, init: RequestInit = {}) => kit.app.fetch(new Request(`http://localhost${path}`, init))

  it('is the printed schema, the text of schema.graphql, as text/plain with an ETag, no key needed', async () => {
    const res = await get('/graphql/schema.graphql')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(res.headers.get('cache-control')).toBe('no-cache')
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('etag')).toMatch(/^"[\w-]+"$/)
    const text = await res.text()
    expect(text).toBe(COMMITTED)
    // What codegen tools do with it: build a schema.
    expect(buildSchema(text).getQueryType()?.name).toBe('Query')
  })

  it('answers 304 to a matching If-None-Match (also among others, or weak), 200 to a stale one; HEAD has no body', async () => {
    const etag = (await get('/graphql/schema.graphql')).headers.get('etag')!
    for (const inm of [etag, `"stale", ${etag}`, `W/${etag}`, '*']) {
      const again = await get('/graphql/schema.graphql', { headers: { 'if-none-match': inm } })
      expect(again.status, inm).toBe(304)
      expect(await again.text()).toBe('')
      expect(again.headers.get('etag')).toBe(etag)
    }
    const stale = await get('/graphql/schema.graphql', { headers: { 'if-none-match': '"stale"' } })
    expect(stale.status).toBe(200)
    expect(await stale.text()).toBe(COMMITTED)
    const head = await get('/graphql/schema.graphql', { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(await head.text()).toBe('')
  })

  it('other methods are not served there, and only that path serves it', async () => {
    const post = await get('/graphql/schema.graphql', { method: 'POST', body: 'x' })
    expect(post.status).toBe(404)
    expect(await post.text()).not.toContain('type Query')
    expect((await get('/graphql/schema.graphqlx')).status).toBe(404)
  })

  it('is linked from the home page', async () => {
    const html = await (await get('/')).text()
    expect(html).toContain('href="/graphql/schema.graphql"')
  })
})
