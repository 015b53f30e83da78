import { readFileSync } from 'node:fs'
import { beforeAll, describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { importChannel } from '../src/channel/import-channel.js'
import type { Seeded } from './kit/seed.js'

const SAMPLE = JSON.parse(readFileSync(new URL('../docs/channel-sample.json', import.meta.url), 'utf8')) as unknown
const UUID = '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f'
const BASE = 'https://gw.example.com/edge'

/** `Link` as a map of rel to URL (every link must have the `<url>; rel="name"` form). */
function links(header: string | null): Record<string, string> {
  expect(header).not.toBeNull()
  const parts = header!.split(', ')
  const out: Record<string, string> = {}
  for (const part of parts) {
    const m = /^<([^>]+)>; rel="(first|prev|next|last)"$/.exec(part)
    expect(m, part).not.toBeNull()
    out[m![2]!] = m![1]!
  }
  return out
}

type ServedDocument = {
  paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>
  components: { headers: Record<string, { description: string }> }
}

describe.each(targets)('REST paging headers on $name', (target) => {
  const kit = useKit(target, { env: { PUBLIC_BASE_URL: BASE, CHANNEL_CACHE_MS: '0' } })
  let s: Seeded

  beforeAll(async () => {
    s = await kit.seed().account()
    for (const name of ['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo'])
      await kit.rest('POST', '/api/contact/group/create', { key: s.key, body: { name } })
    await importChannel(kit.deps, SAMPLE)
  })

  it('groups: Link keeps the other query parameters, X-Total-Count is meta.total, the body is the legacy JSON byte for byte', async () => {
    const raw = await kit.app.fetch(
      new Request('http://localhost/api/contact/groups?perPage=2&page=2&search=&x=1', { headers: { authorization: `Bearer ${s.key}` } }),
    )
    expect(raw.status).toBe(200)
    const text = await raw.text()
    // The documented body, built without the service: the headers changed nothing in it.
    const groups = await kit.db.group.findMany({ where: { accountId: s.account.id }, orderBy: { name: 'asc' } })
    const expected = {
      data: groups.slice(2, 4).map((g) => ({ uuid: g.id, name: g.name, description: g.description })),
      meta: { search: '', total: 5, skipped: 2, perPage: 2, page: 2, pageCount: 3 },
    }
    expect(text).toBe(JSON.stringify(expected))
    expect(raw.headers.get('x-total-count')).toBe('5')
    expect(links(raw.headers.get('link'))).toEqual({
      first: `${BASE}/api/contact/groups?perPage=2&page=1&search=&x=1`,
      prev: `${BASE}/api/contact/groups?perPage=2&page=1&search=&x=1`,
      next: `${BASE}/api/contact/groups?perPage=2&page=3&search=&x=1`,
      last: `${BASE}/api/contact/groups?perPage=2&page=3&search=&x=1`,
    })
  })

  it('first page has no prev, last page no next; a list without page gets it appended; past the end prev is the last page', async () => {
    const first = await kit.rest('GET', '/api/contact/groups?perPage=2&search=a', { key: s.key })
    // search "a": Alpha, Bravo, Charlie, Delta (Echo has none)
    expect(first.body.meta).toMatchObject({ total: 4, pageCount: 2, page: 1 })
    expect(links(first.headers.get('link'))).toEqual({
      first: `${BASE}/api/contact/groups?perPage=2&search=a&page=1`,
      next: `${BASE}/api/contact/groups?perPage=2&search=a&page=2`,
      last: `${BASE}/api/contact/groups?perPage=2&search=a&page=2`,
    })
    const last = await kit.rest('GET', '/api/contact/groups?perPage=2&search=a&page=2', { key: s.key })
    expect(Object.keys(links(last.headers.get('link')))).toEqual(['first', 'prev', 'last'])
    const beyond = await kit.rest('GET', '/api/contact/groups?page=9&page=10&perPage=2', { key: s.key })
    expect(beyond.body.data).toEqual([])
    expect(links(beyond.headers.get('link'))).toEqual({
      first: `${BASE}/api/contact/groups?page=1&perPage=2`,
      prev: `${BASE}/api/contact/groups?page=3&perPage=2`,
      last: `${BASE}/api/contact/groups?page=3&perPage=2`,
    })
  })

  it('an empty list has one page: first and last only, X-Total-Count 0', async () => {
    const empty = await kit.rest('GET', '/api/contacts?search=nobody-has-this', { key: s.key })
    expect(empty.body.meta).toMatchObject({ total: 0, pageCount: 0 })
    expect(empty.headers.get('x-total-count')).toBe('0')
    expect(links(empty.headers.get('link'))).toEqual({
      first: `${BASE}/api/contacts?search=nobody-has-this&page=1`,
      last: `${BASE}/api/contacts?search=nobody-has-this&page=1`,
    })
  })

  it('group contacts carry them too; errors and non-list routes do not', async () => {
    const g = await kit.seed().account().group().contacts(3)
    const res = await kit.rest('GET', `/api/contact/group/${g.group.id}/contacts?perPage=1&page=2`, { key: g.key })
    expect(res.headers.get('x-total-count')).toBe('3')
    expect(Object.keys(links(res.headers.get('link')))).toEqual(['first', 'prev', 'next', 'last'])
    const bad = await kit.rest('GET', '/api/contact/groups?page=0', { key: s.key })
    expect(bad.status).toBe(422)
    expect(bad.headers.get('link')).toBeNull()
    expect(bad.headers.get('x-total-count')).toBeNull()
    const details = await kit.rest('GET', `/api/contact/group/${g.group.id}`, { key: g.key })
    expect(details.headers.get('link')).toBeNull()
    // The messaging API sends no CORS headers (it is for servers).
    expect(res.headers.get('access-control-expose-headers')).toBeNull()
  })

  it('channel lists: Link keeps only the parameters the route documents (its cached answer is shared), and CORS exposes both headers', async () => {
    const res = await kit.rest('GET', '/api/channels/city-tv/programs?per_page=1&utm=x&page=2&status=active')
    expect(res.status).toBe(200)
    expect(res.headers.get('x-total-count')).toBe(String(res.body.meta.total))
    expect(links(res.headers.get('link'))).toMatchObject({
      first: `${BASE}/api/channels/city-tv/programs?per_page=1&page=1&status=active`,
      prev: `${BASE}/api/channels/city-tv/programs?per_page=1&page=1&status=active`,
    })
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    const exposed = res.headers.get('access-control-expose-headers')!.split(/,\s*/)
    expect(exposed).toEqual(expect.arrayContaining(['Link', 'X-Total-Count', 'ETag']))
    // A 304 keeps them, as it keeps the ETag.
    const again = await kit.rest('GET', '/api/channels/city-tv/programs?per_page=1&utm=x&page=2&status=active', {
      headers: { 'if-none-match': res.headers.get('etag')! },
    })
    expect(again.status).toBe(304)
    expect(again.headers.get('link')).toBe(res.headers.get('link'))

    const catchups = await kit.rest('GET', `/api/channels/${UUID}/catchups`)
    expect(catchups.headers.get('x-total-count')).toBe(String(catchups.body.catchup_count))
    expect(links(catchups.headers.get('link'))).toEqual({
      first: `${BASE}/api/channels/${UUID}/catchups?page=1`,
      last: `${BASE}/api/channels/${UUID}/catchups?page=${catchups.body.last_page}`,
      ...(catchups.body.last_page > 1 ? { next: `${BASE}/api/channels/${UUID}/catchups?page=2` } : {}),
    })
    const episodes = await kit.rest('GET', '/api/programs/morning-show/episodes?per_page=1')
    expect(episodes.status).toBe(200)
    expect(episodes.headers.get('x-total-count')).toBe(String(episodes.body.meta.total))
    expect(links(episodes.headers.get('link')).first).toBe(`${BASE}/api/programs/morning-show/episodes?per_page=1&page=1`)
  })

  it('the OpenAPI document describes both headers on every paged list', async () => {
    const doc = (await (await kit.app.fetch(new Request('http://localhost/api/openapi.json'))).json()) as ServedDocument
    for (const [path, method] of [
      ['/contact/groups', 'get'],
      ['/contacts', 'get'],
      ['/contact/group/{id}/contacts', 'get'],
      ['/channels/{uuid}/catchups', 'get'],
      ['/channels/{channel}/programs', 'get'],
      ['/programs/{program}/episodes', 'get'],
    ]) {
      const headers = doc.paths[path!]![method!]!.responses[200]!.headers
      expect(headers, path).toMatchObject({
        Link: { $ref: '#/components/headers/Link' },
        'X-Total-Count': { $ref: '#/components/headers/X-Total-Count' },
      })
    }
    expect(doc.paths['/contact/group/{id}']!.get!.responses[200]!.headers!.Link).toBeUndefined()
    expect(doc.components.headers.Link!.description).toContain('rel="next"')
  })
})
