// The service's icon: every page it renders links it, and /favicon.ico (which browsers ask for on
// their own) answers it, so no page load ends in a 404.
import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'

describe.each(targets)('the icon on $name', (target) => {
  const kit = useKit(target)
  const get = (path: string, headers: Record<string, string> = {}) => kit.app.fetch(new Request(`http://localhost${path}`, { headers }))

  it('answers /favicon.svg and /favicon.ico with one SVG, cacheable, with an ETag a repeat can send back', async () => {
    const svg = await get('/favicon.svg')
    expect(svg.status).toBe(200)
    expect(svg.headers.get('content-type')).toBe('image/svg+xml')
    expect(svg.headers.get('cache-control')).toBe('public, max-age=86400')
    const body = await svg.text()
    expect(body).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/)
    const ico = await get('/favicon.ico')
    expect(ico.status).toBe(200)
    expect(await ico.text()).toBe(body)
    const again = await get('/favicon.svg', { 'if-none-match': svg.headers.get('etag')! })
    expect(again.status).toBe(304)
  })

  it('is linked from the home page, the console and the API reference', async () => {
    for (const path of ['/', '/console', '/api/docs']) {
      const html = await (await get(path)).text()
      expect(html, path).toContain('<link rel="icon" type="image/svg+xml" href="/favicon.svg" />')
    }
  })

  it('answers GET and HEAD only; other methods fall through to the API (404)', async () => {
    const head = await kit.app.fetch(new Request('http://localhost/favicon.ico', { method: 'HEAD' }))
    expect(head.status).toBe(200)
    expect(await head.text()).toBe('')
    const post = await kit.app.fetch(new Request('http://localhost/favicon.ico', { method: 'POST' }))
    expect(post.status).toBe(404)
  })
})
