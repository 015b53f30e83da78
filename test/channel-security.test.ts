// Issue 20, items 9, 10, 11 and 13: bounded imports that never hold the database long, guides whose
// cost is bounded and whose cache no query string gets past, no 5xx for any date a client sends,
// and no line break or non-http(s) URL in a guide.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit, fixedClock, type TestKit } from './kit/kit.js'
import { fingerprint } from './kit/fingerprint.js'
import { IMPORT_LIMITS } from '../src/channel/import-schema.js'
import { GUIDE_MAX_AIRINGS } from '../src/channel/queries.js'

const run = promisify(execFile)
const SAMPLE = JSON.parse(readFileSync(new URL('../docs/channel-sample.json', import.meta.url), 'utf8'))
const IMPORT = 'mutation($d: String!) { importChannel(document: $d) { id } }'
const NOW = '2026-03-06T12:00:00Z'
/** Every line break a reader may split on. */
const ANY_BREAK = /\r\n|[\n\r\u000B\u000C\u0085\u2028\u2029]/

async function cli(url: string, ...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      env: { ...process.env, DATABASE_URL: url },
    })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

/** A channel of `programs` programs with `episodes` episodes each and `airings` airings each, back to back from `start`, `minutes` long. */
function bigChannel(
  slug: string,
  uuid: string,
  {
    programs,
    episodes,
    airings,
    minutes = 5,
    start = Date.parse(NOW) - 3_600_000,
  }: { programs: number; episodes: number; airings: number; minutes?: number; start?: number },
) {
  let at = start
  return {
    channel: { uuid, slug, name: `Big ${slug}`, timezone: 'Africa/Nairobi', stream_url: `https://cdn.example.com/${slug}/live.m3u8` },
    programs: Array.from({ length: programs }, (_, p) => ({
      slug: `${slug}-p${p}`,
      name: `Program ${p}`,
      type: 'live',
      status: 'active',
      slots: [{ day_of_week: p % 7, start_time: '10:00', duration_minutes: 60 }],
      episodes: Array.from({ length: episodes }, (_, e) => ({
        episode_number: e + 1,
        name: `Episode ${e + 1}`,
        type: 'live',
        airings: Array.from({ length: airings }, () => {
          const starts_at = new Date(at).toISOString()
          at += minutes * 60_000
          return { starts_at, duration_minutes: minutes }
        }),
      })),
    })),
  }
}

async function importError(kit: TestKit, document: string, key: string) {
  const res = await kit.graphql(IMPORT, { d: document }, key)
  expect(res.data?.importChannel ?? null).toBeNull()
  return res.errors![0]!
}

describe.each(targets)('channel hardening on $name', (target) => {
  const clock = fixedClock(NOW)
  const kit = useKit(target, { clock, env: { CHANNEL_CACHE_MS: '1000', PUBLIC_BASE_URL: 'https://tv.example.com' } })
  let key = ''
  let accountId = ''

  beforeAll(async () => {
    const s = await kit.seed().account('Operator')
    key = s.key
    accountId = s.account.id
    await kit.gql(IMPORT, { d: JSON.stringify(SAMPLE) }, key)
  })

  // ------------------------------------------------------------------ item 11: dates out of range

  const EXTREME_DATES = [
    '0000-01-01T00:00:00Z',
    '0000-01-01',
    '0001-01-01',
    '0099-12-31',
    '1899-12-31T23:59:59Z',
    '-000001-01-01T00:00:00Z',
    '-271821-04-20T00:00:00Z',
    '+275760-09-13T00:00:00Z',
    '275760-09-13',
    '9999-12-31T23:59:59Z',
    '999999999999',
    '-1',
    '-62198755200',
    '8640000000000',
    'NaN',
    'Infinity',
    '1e309',
    '2026-02-30',
    '2026-13-01T00:00:00Z',
    '2026-01-01T25:00:00Z',
  ]

  it('every channel route answers 400 {error} to an out-of-range or junk date, never a 5xx', async () => {
    const program = SAMPLE.programs[0].slug
    const paths = [
      '/api/channels/city-tv/programs/upcoming',
      `/api/channels/${SAMPLE.channel.uuid}/programs/upcoming`,
      `/api/programs/${program}/episodes`,
    ]
    const answers: string[] = []
    for (const path of paths) {
      for (const name of ['from', 'to']) {
        for (const value of EXTREME_DATES) {
          const res = await kit.rest('GET', `${path}?${name}=${encodeURIComponent(value)}`)
          answers.push(`${path} ${name}=${value} -> ${res.status} ${Object.keys(res.body ?? {}).join(',')}`)
        }
      }
    }
    expect(answers).toEqual(answers.map((a) => a.replace(/-> .*$/, '-> 400 error')))
  })

  it('every GraphQL date argument answers BAD_REQUEST to them', async () => {
    const codes: string[] = []
    for (const value of EXTREME_DATES) {
      for (const name of ['from', 'to']) {
        const upcoming = await kit.graphql(`query($v: String) { channel(id: "city-tv") { upcomingAirings(${name}: $v) { id } } }`, {
          v: value,
        })
        const episodes = await kit.graphql(
          `query($v: String) { program(id: "${SAMPLE.programs[0].slug}") { episodes(${name}: $v) { total } } }`,
          { v: value },
        )
        codes.push(
          `upcoming ${name}=${value}: ${upcoming.errors?.[0]?.extensions?.code}`,
          `episodes ${name}=${value}: ${episodes.errors?.[0]?.extensions?.code}`,
        )
      }
    }
    expect(codes).toEqual(codes.map((c) => c.replace(/: .*$/, ': BAD_REQUEST')))
  })

  it('dates at the ends of the range are answered', async () => {
    for (const value of ['1900-01-01T00:00:00Z', '1900-01-02', '9999-11-30T00:00:00Z', '0']) {
      const res = await kit.rest('GET', `/api/channels/city-tv/programs/upcoming?from=${encodeURIComponent(value)}`)
      expect([value, res.status]).toEqual([value, 200])
    }
  })

  it('an import with an instant outside the years 1900-9999 is a 422 naming the field, not INTERNAL', async () => {
    const doc = structuredClone(SAMPLE)
    doc.channel = { ...doc.channel, uuid: undefined, slug: 'old-times' }
    doc.live_broadcasts = [{ title: 'Old', started_at: '0000-01-01T00:00:00Z' }]
    const before = await fingerprint(kit)
    const error = await importError(kit, JSON.stringify(doc), key)
    expect(error.extensions).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ field: 'live_broadcasts.0.started_at', message: 'must be between the years 1900 and 9999' }],
    })
    expect(await fingerprint(kit)).toEqual(before)
  })

  // ------------------------------------------------------------------ item 13: line breaks and URLs

  it('refuses a URL field that is not http(s), or holds a line break, naming the field; nothing is written', async () => {
    const cases: [string, (doc: any) => void][] = [
      ['channel.show_banner_url', (d) => (d.channel.show_banner_url = 'javascript:alert(1)')],
      ['channel.stream_url', (d) => (d.channel.stream_url = 'data:text/html,<script>alert(1)</script>')],
      ['channel.stream_url', (d) => (d.channel.stream_url = 'https://cdn.example.com/a.m3u8\n#EXTINF:-1,Injected')],
      ['channel.stream_url', (d) => (d.channel.stream_url = 'https://cdn.example.com/a.m3u8\u2028#EXTINF:-1,Injected')],
      ['channel.fallback.thumbnail', (d) => (d.channel.fallback.thumbnail = 'file:///etc/passwd')],
      ['programs.0.banner_url', (d) => (d.programs[0].banner_url = 'vbscript:msgbox')],
      ['programs.0.episodes.0.on_demand.hls_url', (d) => (d.programs[0].episodes[0].on_demand = { hls_url: 'ftp://x/y' })],
      ['videos.0.hls_url', (d) => (d.videos[0].hls_url = '//cdn.example.com/relative.m3u8')],
    ]
    const before = await fingerprint(kit)
    const found = []
    for (const [field, spoil] of cases) {
      const doc = structuredClone(SAMPLE)
      spoil(doc)
      const error = await importError(kit, JSON.stringify(doc), key)
      found.push({ code: error.extensions.code, details: error.extensions.details })
      expect(found.at(-1), field).toEqual({
        code: 'VALIDATION_FAILED',
        details: [{ field, message: 'must be an http or https URL without spaces or line breaks' }],
      })
    }
    expect(await fingerprint(kit)).toEqual(before)
  })

  it('guides hold no line break of any kind from the data: M3U, XMLTV and iCalendar', async () => {
    const name = 'Line\r\nBreak\rTV\u000Bone\u000Ctwo\u0085three\u2028#EXTINF:-1 tvg-name="x",Injected\u2029http://evil.example.com/\nend'
    const uuid = '3e0a7c01-6f5d-4b88-9d74-8a4f5e6d7c93'
    const doc = bigChannel('breaks-tv', uuid, { programs: 1, episodes: 1, airings: 1, minutes: 60 })
    doc.channel.name = name
    const episode: any = doc.programs[0]!.episodes[0]!
    episode.name = name
    episode.synopsis = name
    ;(doc.programs[0] as any).synopsis = name
    await kit.gql(IMPORT, { d: JSON.stringify(doc) }, key)
    clock.advance(60_000)

    const m3u = await kit.rest('GET', '/api/channels.m3u')
    const flat = "Line Break TV one two three #EXTINF:-1 tvg-name='x',Injected http://evil.example.com/ end"
    expect(m3u.body.split(ANY_BREAK)).toEqual([
      '#EXTM3U',
      '#EXTINF:-1 tvg-id="city-tv.tv.example.com" tvg-name="City TV" tvg-logo="https://cdn.example.com/city-tv/banner.jpg" group-title="Channels",City TV',
      'https://cdn.example.com/city-tv/live.m3u8',
      `#EXTINF:-1 tvg-id="breaks-tv.tv.example.com" tvg-name="${flat}" group-title="Channels",${flat.replace(/'/g, '"')}`,
      'https://cdn.example.com/breaks-tv/live.m3u8',
      '',
    ])

    const xmltv: string = (await kit.rest('GET', `/api/channels/${uuid}/xmltv`)).body
    // The document's own line ends are LF only, between elements; the data's breaks are &#10;.
    expect(xmltv).not.toMatch(/[\r\u000B\u000C\u0085\u2028\u2029]/)
    const escaped =
      'Line&#10;Break&#10;TV&#10;one&#10;two&#10;three&#10;#EXTINF:-1 tvg-name=&quot;x&quot;,Injected&#10;http://evil.example.com/&#10;end'
    expect(xmltv.split('\n').filter((l) => /<(display-name|sub-title|desc)>/.test(l))).toEqual([
      `    <display-name>${escaped}</display-name>`,
      `    <sub-title>${escaped}</sub-title>`,
      `    <desc>${escaped}</desc>`,
    ])

    const ics: string = (await kit.rest('GET', `/api/channels/${uuid}/schedule.ics`)).body
    // Every line ends in CRLF and holds no other break; the data's breaks are escaped \n.
    expect(ics.endsWith('\r\n')).toBe(true)
    expect(
      ics
        .slice(0, -2)
        .split('\r\n')
        .filter((line) => ANY_BREAK.test(line)),
    ).toEqual([])
    const unfolded = ics.replace(/\r\n /g, '')
    expect(unfolded.split('\r\n').find((l) => l.startsWith('X-WR-CALNAME'))).toBe(
      'X-WR-CALNAME:Line\\nBreak\\nTV\\none\\ntwo\\nthree\\n#EXTINF:-1 tvg-name="x"\\,Injected\\nhttp://evil.example.com/\\nend',
    )
    await kit.db.channel.delete({ where: { id: uuid } })
  })

  it('guides never write a non-http(s) URL stored before imports checked them', async () => {
    const uuid = '4f1b8d12-7a6e-4c99-8e85-9b5a6f7e8da4'
    await kit.gql(IMPORT, { d: JSON.stringify(bigChannel('legacy-tv', uuid, { programs: 1, episodes: 1, airings: 1, minutes: 60 })) }, key)
    await kit.db.channel.update({ where: { id: uuid }, data: { showBannerUrl: 'javascript:alert(1)' } })
    await kit.db.program.updateMany({ where: { channelId: uuid }, data: { bannerUrl: 'javascript:alert(2)' } })
    clock.advance(60_000)
    await new Promise((r) => setTimeout(r, 1100)) // past CHANNEL_CACHE_MS (the channel lookup)
    const m3u: string = (await kit.rest('GET', '/api/channels.m3u')).body
    expect(m3u.split('\n').filter((l) => l.includes('legacy-tv'))).toEqual([
      '#EXTINF:-1 tvg-id="legacy-tv.tv.example.com" tvg-name="Big legacy-tv" group-title="Channels",Big legacy-tv',
      'https://cdn.example.com/legacy-tv/live.m3u8',
    ])
    const xmltv: string = (await kit.rest('GET', `/api/channels/${uuid}/xmltv`)).body
    expect(xmltv).toContain('<programme ')
    expect(xmltv).not.toContain('<icon')

    // A stream URL that is not http(s) leaves the channel out of the playlist.
    await kit.db.channel.update({ where: { id: uuid }, data: { streamUrl: 'javascript:alert(3)' } })
    clock.advance(60_000)
    const after: string = (await kit.rest('GET', '/api/channels.m3u')).body
    expect(after.split('\n').filter((l) => l.includes('legacy-tv') || l.includes('javascript'))).toEqual([])
    await kit.db.channel.delete({ where: { id: uuid } })
  })

  // ------------------------------------------------------------------ item 9: bounded imports

  it('an import beyond a bound is a 422 naming the bound, before any write (GraphQL)', async () => {
    const before = await fingerprint(kit)
    const tooMany = bigChannel('too-many', '5a2c9e23-8b7f-4daa-9f96-ac6b7a8f9eb5', {
      programs: 1,
      episodes: 1,
      airings: IMPORT_LIMITS.airings + 1,
    })
    expect((await importError(kit, JSON.stringify(tooMany), key)).extensions).toEqual({
      code: 'VALIDATION_FAILED',
      details: [{ field: 'programs.0.episodes.0.airings', message: 'at most 3,000 airings are allowed' }],
    })
    // Spread over episodes, the total counts.
    const spread = bigChannel('spread', '6b3daf34-9c80-4ebb-8aa7-bd7c8b9a0fc6', { programs: 10, episodes: 51, airings: 10 })
    expect((await importError(kit, JSON.stringify(spread), key)).extensions).toEqual({
      code: 'VALIDATION_FAILED',
      details: [{ field: 'programs', message: 'the document has 5100 airings; at most 3,000 airings are allowed' }],
    })
    const programs = bigChannel('programs', '7c4eb045-ad91-4fcc-9bb8-ce8d9cab1ad7', {
      programs: IMPORT_LIMITS.programs + 1,
      episodes: 0,
      airings: 0,
    })
    expect((await importError(kit, JSON.stringify(programs), key)).extensions).toEqual({
      code: 'VALIDATION_FAILED',
      details: [{ field: 'programs', message: 'at most 100 programs are allowed' }],
    })
    // Over the size bound: refused before it is parsed.
    const padded = { ...SAMPLE, channel: { ...SAMPLE.channel, slug: 'padded' }, pad: ' '.repeat(IMPORT_LIMITS.documentBytes) }
    const text = JSON.stringify(padded)
    expect((await importError(kit, text, key)).extensions).toEqual({
      code: 'VALIDATION_FAILED',
      details: [{ field: '(document)', message: `the document is ${Buffer.byteLength(text)} bytes; at most 1048576 bytes are allowed` }],
    })
    expect(await fingerprint(kit)).toEqual(before)
  })

  it('the CLI channel:import refuses the same, exit 1 with the bound named, nothing written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'channel-import-'))
    const file = join(dir, 'big.json')
    writeFileSync(
      file,
      JSON.stringify(
        bigChannel('cli-big', '8d5fc156-bea2-4add-8cd9-dfae0dbc2be8', { programs: 1, episodes: 1, airings: IMPORT_LIMITS.airings + 1 }),
      ),
    )
    const before = await fingerprint(kit)
    const res = await cli(kit.url, 'channel:import', file, '--account', accountId)
    expect([res.code, res.stdout]).toEqual([1, ''])
    expect(res.stderr).toContain('at most 3,000 airings are allowed')
    expect(res.stderr).not.toContain('INTERNAL')
    expect(await fingerprint(kit)).toEqual(before)
  }, 60_000)

  it('an import at the bounds is one transaction of a bounded number of statements, and a re-import keeps every id', async () => {
    const uuid = '9e6a0267-cfb3-4bee-9dda-e0bf1ecd3cf9'
    // 100 programs, 1,000 episodes, 3,000 airings.
    const doc = bigChannel('at-bound', uuid, { programs: 100, episodes: 10, airings: 3 })
    const text = JSON.stringify(doc)
    kit.statements.length = 0
    await kit.gql(IMPORT, { d: text }, key)
    const fresh = kit.statements.length
    // Batched inserts (Prisma splits them further on SQLite, about 140 airings a statement), not
    // one or more statements per row: before, this import sent more than 10,000.
    expect(fresh).toBeLessThanOrEqual(100)
    const ids = await kit.db.airing.findMany({
      where: { episode: { program: { channelId: uuid } } },
      select: { id: true, startsAt: true },
      orderBy: { id: 'asc' },
    })
    expect(ids).toHaveLength(3000)

    // Unchanged: no row is written again.
    kit.statements.length = 0
    await kit.gql(IMPORT, { d: text }, key)
    expect(kit.statements.length).toBeLessThanOrEqual(fresh)

    // Every airing changed: still chunks, and every airing keeps its id.
    for (const p of doc.programs) for (const e of p.episodes) for (const a of e.airings) (a as any).cancelled = true
    kit.statements.length = 0
    await kit.gql(IMPORT, { d: JSON.stringify(doc) }, key)
    expect(kit.statements.length).toBeLessThanOrEqual(100)
    const after = await kit.db.airing.findMany({
      where: { episode: { program: { channelId: uuid } } },
      select: { id: true, startsAt: true, cancelled: true },
      orderBy: { id: 'asc' },
    })
    expect(after.map(({ id, startsAt }) => ({ id, startsAt }))).toEqual(ids)
    expect(new Set(after.map((a) => a.cancelled))).toEqual(new Set([true]))
    await kit.db.channel.delete({ where: { id: uuid } })
  }, 60_000)

  // ------------------------------------------------------------------ item 10: guide cost and cache key

  it('guide requests differing only in query strings share one cache entry, and concurrent ones one computation', async () => {
    clock.advance(60_000)
    for (const path of [
      `/api/channels/${SAMPLE.channel.uuid}/xmltv`,
      `/api/channels/${SAMPLE.channel.uuid}/schedule.ics`,
      '/api/channels.m3u',
    ]) {
      kit.statements.length = 0
      const first = await kit.rest('GET', path)
      const perGeneration = kit.statements.length
      expect([path, perGeneration > 0]).toEqual([path, true])
      const others = []
      for (let i = 0; i < 5; i++) others.push(await kit.rest('GET', `${path}?cb=${Math.random()}&limit=${i}&from=0000-01-01`))
      expect([path, kit.statements.length]).toEqual([path, perGeneration])
      expect(others.map((r) => [r.status, r.headers.get('etag'), r.body])).toEqual(
        others.map(() => [200, first.headers.get('etag'), first.body]),
      )
    }

    // Eight clients at once, each with its own query string, at a new minute: one computation.
    clock.advance(60_000)
    await new Promise((r) => setTimeout(r, 1100)) // past CHANNEL_CACHE_MS: the channel lookup is not shared either
    const path = `/api/channels/${SAMPLE.channel.uuid}/xmltv`
    kit.statements.length = 0
    const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => kit.rest('GET', `${path}?client=${i}-${Math.random()}`)))
    const burstStatements = kit.statements.length
    clock.advance(60_000)
    await new Promise((r) => setTimeout(r, 1100))
    kit.statements.length = 0
    await kit.rest('GET', path)
    expect(burstStatements).toBe(kit.statements.length)
    expect(new Set(burst.map((r) => r.status))).toEqual(new Set([200]))
  })

  it('parameters a route documents still make their own entry; others do not', async () => {
    const upcoming = '/api/channels/city-tv/programs/upcoming'
    kit.statements.length = 0
    const one = await kit.rest('GET', `${upcoming}?limit=1&junk=1`)
    const computed = kit.statements.length
    const same = await kit.rest('GET', `${upcoming}?junk=2&limit=1&other=3`)
    expect([computed > 0, kit.statements.length - computed, same.body]).toEqual([true, 0, one.body])
    await kit.rest('GET', `${upcoming}?limit=2`)
    expect(kit.statements.length).toBeGreaterThan(computed)
  })

  it(`a guide holds at most ${GUIDE_MAX_AIRINGS} airings, whatever the channel books`, async () => {
    const uuid = 'af7b1378-d0c4-4cff-8eeb-f1c02fde4d0a'
    // 2,100 airings of 5 minutes from an hour ago: all inside the guide's window.
    await kit.gql(IMPORT, { d: JSON.stringify(bigChannel('dense-tv', uuid, { programs: 3, episodes: 7, airings: 100 })) }, key)
    expect(await kit.db.airing.count({ where: { episode: { program: { channelId: uuid } } } })).toBe(2100)
    clock.advance(60_000)
    const xmltv: string = (await kit.rest('GET', `/api/channels/${uuid}/xmltv`)).body
    const ics: string = (await kit.rest('GET', `/api/channels/${uuid}/schedule.ics`)).body
    expect([xmltv.split('<programme ').length - 1, ics.split('BEGIN:VEVENT').length - 1]).toEqual([GUIDE_MAX_AIRINGS, GUIDE_MAX_AIRINGS])
    await kit.db.channel.delete({ where: { id: uuid } })
  }, 60_000)
})
