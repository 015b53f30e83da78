import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { beforeAll, describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit, fixedClock } from './kit/kit.js'
import { importChannel } from '../src/channel/import-channel.js'
import { graphql } from '../src/graphql/typed-documents.js'

const run = promisify(execFile)
const SAMPLE = readFileSync(new URL('../docs/channel-sample.json', import.meta.url), 'utf8')
const UUID = '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f'

describe.each(targets)('REST channel API on $name', (target) => {
  const clock = fixedClock('2026-03-03T12:30:00-05:00')
  const kit = useKit(target, { clock, env: { CHANNEL_CACHE_MS: '0' } })
  const get = (path: string, headers: Record<string, string> = {}) => kit.rest('GET', `/api${path}`, { headers })

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'channel-import-'))
    const file = join(dir, 'channel.json')
    writeFileSync(file, SAMPLE)
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'channel:import', file], {
      env: { ...process.env, DATABASE_URL: kit.url },
    })
    expect(JSON.parse(stdout)).toEqual({ channel: { uuid: UUID, slug: 'city-tv' } })
  }, 60_000)

  it('now playing: a scheduled broadcast, with Cache-Control, ETag, 304 and CORS', async () => {
    clock.set('2026-03-03T12:30:00-05:00')
    const res = await get(`/channels/${UUID}/status`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      channel_name: 'City TV',
      is_live: false,
      current_video: {
        id: expect.any(Number),
        name: 'Harbour Lights',
        description: 'A documentary about the port',
        location: '',
        thumbnail: 'https://cdn.example.com/city-tv/doc.jpg',
        start_time: '2026-03-03T12:00:00-05:00',
        end_time: '2026-03-03T13:00:00-05:00',
        remaining_time: 1800,
        remaining_time_human: '30:00',
      },
      estimated_end_at: '2026-03-03T13:00:00-05:00',
    })
    expect(res.headers.get('cache-control')).toBe('public, max-age=1800')
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    const etag = res.headers.get('etag')!
    expect(etag).toMatch(/^"[\w-]+"$/)
    const again = await get(`/channels/${UUID}/status`, { 'if-none-match': etag })
    expect(again.status).toBe(304)
    expect(again.body).toBeNull()
    expect(again.headers.get('etag')).toBe(etag)
    clock.advance(1000)
    const later = await get(`/channels/${UUID}/status`, { 'if-none-match': etag })
    expect(later.status).toBe(200)
    expect(later.body.current_video.remaining_time).toBe(1799)
  })

  it('now playing and programs/current during a live episode waiting for its feed', async () => {
    clock.set('2026-03-03T07:30:00-05:00')
    const status = await get(`/channels/${UUID}/status`)
    expect(status.body).toEqual({
      channel_name: 'City TV',
      is_live: false,
      current_video: {
        name: 'Tuesday',
        description: 'Live from the studio every weekday.',
        location: '',
        thumbnail: 'https://cdn.example.com/city-tv/morning.jpg',
        start_time: '2026-03-03T07:00:00-05:00',
        end_time: '2026-03-03T09:00:00-05:00',
        remaining_time: 5400,
        remaining_time_human: '01:30:00',
      },
      estimated_end_at: '2026-03-03T09:00:00-05:00',
    })
    const current = await get('/channels/city-tv/programs/current')
    expect(current.body).toEqual({
      channel_name: 'City TV',
      program: { id: expect.any(Number), name: 'Morning Show', type: 'live', status: 'active' },
      episode: { id: expect.any(Number), episode_number: 2, name: 'Tuesday', type: 'live', status: 'on_air' },
      status: 'on_air',
      started_at: '2026-03-03T07:00:00-05:00',
      ends_at: '2026-03-03T09:00:00-05:00',
      playback_source: 'trailer',
      banner_url: 'https://cdn.example.com/city-tv/morning.jpg',
    })
  })

  it('now playing during a live broadcast, a time belt, the rotation and its logo sting', async () => {
    clock.set('2026-03-03T15:30:00-05:00')
    const live = await get(`/channels/${UUID}/status`)
    expect(live.body.is_live).toBe(true)
    expect(live.body.current_video).toEqual({
      name: 'City Marathon',
      description: 'Live from the finish line',
      location: 'Central Park',
      thumbnail: 'https://cdn.example.com/city-tv/banner.jpg',
      start_time: null,
      end_time: null,
      remaining_time: 0,
      remaining_time_human: 'Live',
    })
    expect(live.headers.get('cache-control')).toBe('public, max-age=60')

    clock.set('2026-03-03T20:30:00-05:00')
    const belt = await get(`/channels/${UUID}/status`)
    expect(belt.body.current_video).toMatchObject({
      name: 'City TV Rotation',
      start_time: '2026-03-03T20:00:00-05:00',
      end_time: '2026-03-03T21:00:00-05:00',
    })

    // The rotation (240 + 10 + 60 + 10 s) started 1 March 00:00 local; 2 days = 540 cycles exactly.
    clock.set('2026-03-03T00:04:05-05:00')
    const sting = await get(`/channels/${UUID}/status`)
    expect(sting.body.current_video).toMatchObject({
      name: 'City TV',
      description: 'Loading video...',
      remaining_time: 5,
      remaining_time_human: '00:05',
    })
    clock.set('2026-03-03T00:01:00-05:00')
    const music = await get(`/channels/${UUID}/status`)
    expect(music.body.current_video).toMatchObject({
      name: 'City Sounds',
      start_time: '2026-03-03T00:00:00-05:00',
      end_time: '2026-03-03T00:04:00-05:00',
    })
    const off = await get('/channels/city-tv/programs/current')
    expect(off.body).toEqual({
      channel_name: 'City TV',
      program: null,
      episode: null,
      status: 'off_air',
      started_at: null,
      ends_at: null,
      playback_source: null,
    })
  })

  it('schedule: ended within two hours or to come, by start, without program episodes', async () => {
    clock.set('2026-03-03T12:30:00-05:00')
    const res = await get(`/channels/${UUID}/schedule`)
    expect(res.body).toEqual({
      channel_name: 'City TV',
      schedule_count: 3,
      schedule: [
        {
          id: expect.any(Number),
          start_time: '2026-03-03T17:00:00.000000Z',
          end_time: '2026-03-03T18:00:00.000000Z',
          status: 'live',
          video: {
            name: 'Harbour Lights',
            description: 'A documentary about the port',
            thumbnail: 'https://cdn.example.com/city-tv/doc.jpg',
          },
        },
        {
          id: expect.any(Number),
          start_time: '2026-03-03T23:00:00.000000Z',
          end_time: '2026-03-03T23:30:00.000000Z',
          status: 'pending',
          video: { name: 'Evening News', description: 'The day in the city', thumbnail: 'https://cdn.example.com/city-tv/news.jpg' },
        },
        {
          id: expect.any(Number),
          start_time: '2026-03-04T00:00:00.000000Z',
          end_time: '2026-03-04T00:30:00.000000Z',
          status: 'cancelled',
          video: expect.any(Object),
        },
      ],
    })
    clock.set('2026-03-03T14:59:00-05:00')
    expect((await get(`/channels/${UUID}/schedule`)).body.schedule[0].status).toBe('completed')
    clock.set('2026-03-03T15:00:01-05:00')
    expect((await get(`/channels/${UUID}/schedule`)).body.schedule_count).toBe(2)
  })

  it('catchups: newest first, 15 a page', async () => {
    const res = await get(`/channels/${UUID}/catchups`)
    expect(res.body).toMatchObject({ channel_name: 'City TV', catchup_count: 3, current_page: 1, last_page: 1, per_page: 15 })
    expect(res.body.catchups.map((c: any) => c.title)).toEqual(['Evening News, 2 March', 'Evening News, 1 March', 'Harbour Lights'])
    expect(res.body.catchups[0]).toEqual({
      id: expect.any(Number),
      title: 'Evening News, 2 March',
      description: 'Monday edition',
      start_time: '2026-03-02T23:00:00.000000Z',
      end_time: '2026-03-02T23:30:00.000000Z',
      duration: 1800,
      video: {
        id: expect.any(Number),
        name: 'Evening News',
        thumbnail: 'https://cdn.example.com/city-tv/news.jpg',
        hls_url: 'https://cdn.example.com/city-tv/news.m3u8',
        resolution: '1080p',
      },
    })
    const past = await get(`/channels/${UUID}/catchups?page=2`)
    expect(past.body).toMatchObject({ current_page: 2, last_page: 1, catchups: [] })
    expect(await get(`/channels/${UUID}/catchups?page=two`)).toMatchObject({
      status: 400,
      body: { error: 'page must be a whole number from 1' },
    })
  })

  it('programs: active and paused only, by name, with filters and per_page clamped', async () => {
    const res = await get('/channels/city-tv/programs')
    expect(res.body.programs.map((p: any) => p.slug)).toEqual(['late-talk', 'morning-show', 'weekend-movies'])
    expect(res.body.meta).toEqual({ total: 3, current_page: 1, last_page: 1, per_page: 15 })
    expect(res.body.programs[2]).toEqual({
      id: expect.any(Number),
      name: 'Weekend Movies',
      slug: 'weekend-movies',
      synopsis: 'A film to end the week.',
      banner_url: null,
      trailer_url: null,
      type: 'on_demand',
      status: 'active',
      available_on_demand: false,
      episodes_count: 1,
      schedule: [{ id: expect.any(Number), day_of_week: 6, day: 'Saturday', start_time: '23:30', duration_minutes: 150 }],
    })
    expect((await get(`/channels/${UUID}/programs?status=paused`)).body.programs.map((p: any) => p.slug)).toEqual(['late-talk'])
    expect((await get('/channels/city-tv/programs?type=on_demand')).body.programs.map((p: any) => p.slug)).toEqual(['weekend-movies'])
    const paged = await get('/channels/city-tv/programs?per_page=2&page=2')
    expect(paged.body.meta).toEqual({ total: 3, current_page: 2, last_page: 2, per_page: 2 })
    expect((await get('/channels/city-tv/programs?per_page=500')).body.meta.per_page).toBe(50)
    expect(await get('/channels/city-tv/programs?status=archived')).toMatchObject({
      status: 400,
      body: { error: 'status must be one of active, paused' },
    })
    expect((await get('/channels/city-tv/programs?per_page=-1')).status).toBe(400)
  })

  it('next and upcoming airings: soonest first, the one on air on top, limit, from and to', async () => {
    clock.set('2026-03-03T07:30:00-05:00')
    const next = await get('/channels/city-tv/programs/next')
    expect(next.body).toEqual({
      channel_name: 'City TV',
      next: {
        id: expect.any(Number),
        program: { id: expect.any(Number), name: 'Morning Show' },
        episode: { id: expect.any(Number), episode_number: 3, name: 'Wednesday' },
        starts_at: '2026-03-04T07:00:00-05:00',
        ends_at: '2026-03-04T09:00:00-05:00',
        start_time: '07:00',
        duration_minutes: 120,
        episode_type: 'live',
        state: 'upcoming',
        went_live_at: null,
        banner_url: 'https://cdn.example.com/city-tv/morning.jpg',
      },
    })
    const upcoming = await get('/channels/city-tv/programs/upcoming')
    expect(upcoming.body.upcoming.map((a: any) => [a.episode.name, a.state])).toEqual([
      ['Tuesday', 'on_air'],
      ['Wednesday', 'upcoming'],
      ['Thursday', 'cancelled'],
      ['The Long Night', 'upcoming'],
    ])
    expect(upcoming.body.count).toBe(4)
    expect((await get('/channels/city-tv/programs/upcoming?limit=2')).body.count).toBe(2)
    expect((await get('/channels/city-tv/programs/next/1')).body.upcoming.map((a: any) => a.episode.name)).toEqual(['Tuesday'])
    const fromDate = await get('/channels/city-tv/programs/upcoming?from=2026-03-05&to=2026-03-07T23:30:00-05:00')
    expect(fromDate.body.upcoming.map((a: any) => a.episode.name)).toEqual(['Thursday', 'The Long Night'])
    const fromUnix = await get(`/channels/city-tv/programs/upcoming?from=${Date.parse('2026-03-04T06:00:00-05:00') / 1000}&limit=1`)
    expect(fromUnix.body.upcoming[0].episode.name).toBe('Wednesday')
    const preShow = (clock.set('2026-03-04T06:50:00-05:00'), await get('/channels/city-tv/programs/next'))
    expect(preShow.body.next.state).toBe('pre_show')
    expect(await get('/channels/city-tv/programs/upcoming?from=yesterday')).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^from must be/) },
    })
    expect((await get('/channels/city-tv/programs/upcoming?limit=0')).status).toBe(400)
    expect((await get('/channels/city-tv/programs/next/x')).status).toBe(400)
    expect((await get('/channels/city-tv/programs/upcoming?limit=999')).body.count).toBeLessThanOrEqual(50)
  })

  it('episodes: highest number first, status filter on the fetched page, airing filters', async () => {
    clock.set('2026-03-03T12:30:00-05:00')
    const res = await get('/programs/morning-show/episodes')
    expect(res.body.program).toEqual({ id: expect.any(Number), name: 'Morning Show' })
    expect(res.body.episodes.map((e: any) => [e.episode_number, e.status])).toEqual([
      [5, 'draft'],
      [4, 'cancelled'],
      [3, 'scheduled'],
      [2, 'missed'],
      [1, 'completed'],
    ])
    expect(res.body.episodes[4]).toEqual({
      id: expect.any(Number),
      episode_number: 1,
      name: 'Monday',
      synopsis: 'Opening week',
      banner_url: 'https://cdn.example.com/city-tv/ep1.jpg',
      trailer_url: null,
      type: 'live',
      status: 'completed',
      available_on_demand: true,
      on_demand: {
        id: 9001,
        duration: 7140,
        hls_url: 'https://cdn.example.com/city-tv/ep1.m3u8',
        thumbnail_url: 'https://cdn.example.com/city-tv/ep1-thumb.jpg',
      },
      broadcasts: [
        expect.objectContaining({
          starts_at: '2026-03-02T07:00:00-05:00',
          state: 'ended',
          went_live_at: '2026-03-02T07:01:30-05:00',
          banner_url: 'https://cdn.example.com/city-tv/ep1.jpg',
        }),
      ],
    })
    // Rule 4: the filter applies to the page already fetched.
    const filtered = await get('/programs/morning-show/episodes?per_page=2&status=missed')
    expect(filtered.body.episodes).toEqual([])
    expect(filtered.body.meta).toEqual({ total: 5, current_page: 1, last_page: 3, per_page: 2 })
    const page2 = await get('/programs/morning-show/episodes?per_page=2&page=2&status=missed')
    expect(page2.body.episodes.map((e: any) => e.episode_number)).toEqual([2])
    const ranged = await get('/programs/morning-show/episodes?from=2026-03-03&to=2026-03-04T07:00:00-05:00')
    expect(ranged.body.episodes.map((e: any) => e.episode_number)).toEqual([3, 2])
    const byId = await get(`/programs/${res.body.program.id}/episodes?per_page=1`)
    expect(byId.body.episodes.map((e: any) => e.episode_number)).toEqual([5])
    expect((await get('/programs/late-talk/episodes')).body.episodes).toEqual([])
    expect((await get('/programs/morning-show/episodes?status=bogus')).status).toBe(400)
  })

  it('answers 404 {error} for unknown channels and programs, draft and archived ones included', async () => {
    for (const path of [
      '/channels/00000000-0000-4000-8000-000000000000/status',
      '/channels/city-tv/status',
      '/channels/no-such/programs',
      '/channels/no-such/programs/current',
      '/programs/old-show/episodes',
      '/programs/next-season/episodes',
      '/programs/999999/episodes',
    ]) {
      const res = await get(path)
      expect(res.status, path).toBe(404)
      expect(Object.keys(res.body), path).toEqual(['error'])
      expect(res.headers.get('access-control-allow-origin')).toBe('*')
    }
    expect((await get('/channels/x/nope')).body).toEqual({ error: 'No route for /channels/x/nope' })
  })

  it('answers CORS preflight', async () => {
    const res = await kit.rest('OPTIONS', `/api/channels/${UUID}/status`, {
      headers: { origin: 'https://tv.example', 'access-control-request-method': 'GET' },
    })
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('access-control-allow-methods')).toContain('GET')
  })

  it('re-importing updates the channel instead of duplicating it', async () => {
    const doc = JSON.parse(SAMPLE)
    doc.channel.name = 'City TV One'
    doc.programs[0].episodes[2].name = 'Wednesday Special'
    const before = { programs: await kit.db.program.count(), episodes: await kit.db.episode.count(), airings: await kit.db.airing.count() }
    const ids = (await kit.db.episode.findMany({ orderBy: { id: 'asc' }, select: { id: true } })).map((e) => e.id)
    await importChannel(kit.deps, doc)
    expect({
      programs: await kit.db.program.count(),
      episodes: await kit.db.episode.count(),
      airings: await kit.db.airing.count(),
    }).toEqual(before)
    expect((await kit.db.episode.findMany({ orderBy: { id: 'asc' }, select: { id: true } })).map((e) => e.id)).toEqual(ids)
    expect(await kit.db.channel.count()).toBe(1)
    clock.set('2026-03-03T12:30:00-05:00')
    expect((await get(`/channels/${UUID}/status`)).body.channel_name).toBe('City TV One')
    expect((await get('/channels/city-tv/programs/next')).body.next.episode.name).toBe('Wednesday Special')
    await importChannel(kit.deps, SAMPLE)
  })

  it('refuses an invalid import document with every problem and changes nothing', async () => {
    const doc = JSON.parse(SAMPLE)
    doc.channel.timezone = 'Mars/Olympus'
    doc.scheduled_broadcasts[0].video = 'missing'
    doc.programs[1].episodes[0].airings[0].starts_at = '2026-03-07 23:30'
    await expect(importChannel(kit.deps, doc)).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: expect.arrayContaining([
        { field: 'channel.timezone', message: 'must be an IANA time zone such as Africa/Nairobi' },
        { field: 'programs.1.episodes.0.airings.0.starts_at', message: 'must be an ISO 8601 date-time with an offset or Z' },
      ]),
    })
    await expect(importChannel(kit.deps, '{not json')).rejects.toMatchObject({ code: 'BAD_REQUEST' })
    expect((await get(`/channels/${UUID}/status`)).body.channel_name).toBe('City TV')
  })
})

describe.each(targets)('channel management over GraphQL on $name', (target) => {
  const clock = fixedClock('2026-03-03T10:00:00-05:00')
  const kit = useKit(target, { clock, env: { CHANNEL_CACHE_MS: '0' } })

  it('lets the operator import, go live and end it; others get 404', async () => {
    const op = await kit.seed().account('Operator')
    const other = await kit.seed().account('Other')
    const imported = await kit.gql(
      graphql(`mutation($d: String!) { importChannel(document: $d) { id: uuid slug } }`),
      { d: SAMPLE },
      op.key,
    )
    expect(imported.importChannel).toEqual({ id: UUID, slug: 'city-tv' })
    const hijack = await kit.graphql(graphql(`mutation($d: String!) { importChannel(document: $d) { id } }`), { d: SAMPLE }, other.key)
    expect(hijack.errors?.[0]?.extensions?.code).toBe('NOT_FOUND')

    const start = `mutation { startLiveBroadcast(channel: "city-tv", title: "Breaking", location: "City Hall") { id endedAt } }`
    expect((await kit.graphql(start, {}, other.key)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND')
    const live = await kit.gql(start, {}, op.key)
    expect((await kit.graphql(start, {}, op.key)).errors?.[0]?.extensions?.code).toBe('CONFLICT')
    const status = await kit.rest('GET', `/api/channels/${UUID}/status`)
    expect(status.body).toMatchObject({
      is_live: true,
      current_video: { name: 'Breaking', location: 'City Hall', remaining_time_human: 'Live' },
    })
    await kit.gql(graphql(`mutation($id: Int!) { endLiveBroadcast(id: $id) { endedAt } }`), { id: live.startLiveBroadcast.id }, op.key)
    expect((await kit.rest('GET', `/api/channels/${UUID}/status`)).body.is_live).toBe(false)

    // A live episode's feed: trailer while waiting, livestream once it arrives.
    clock.set('2026-03-04T07:10:00-05:00')
    expect((await kit.rest('GET', '/api/channels/city-tv/programs/current')).body.playback_source).toBe('trailer')
    const airing = await kit.db.airing.findFirstOrThrow({ where: { episode: { name: 'Wednesday' } } })
    const fed = await kit.gql(graphql(`mutation($id: Int!) { startEpisodeFeed(airingId: $id) { wentLiveAt } }`), { id: airing.id }, op.key)
    expect(fed.startEpisodeFeed.wentLiveAt).toBe('2026-03-04T12:10:00.000Z')
    const current = await kit.rest('GET', '/api/channels/city-tv/programs/current')
    expect(current.body).toMatchObject({ playback_source: 'livestream', episode: { status: 'on_air' } })
    expect((await kit.rest('GET', `/api/channels/${UUID}/status`)).body.is_live).toBe(true)
    await kit.gql(graphql(`mutation($id: Int!) { endEpisodeFeed(airingId: $id) { liveEndedAt } }`), { id: airing.id }, op.key)
    expect((await kit.rest('GET', '/api/channels/city-tv/programs/current')).body.playback_source).toBe('trailer')
    const notLive = await kit.db.airing.findFirstOrThrow({ where: { episode: { name: 'The Long Night' } } })
    expect(
      (await kit.graphql(graphql(`mutation($id: Int!) { startEpisodeFeed(airingId: $id) { id } }`), { id: notLive.id }, op.key)).errors?.[0]
        ?.extensions?.code,
    ).toBe('VALIDATION_FAILED')
    expect(
      (await kit.graphql(graphql(`mutation($id: Int!) { cancelAiring(airingId: $id) { id } }`), { id: notLive.id }, other.key)).errors?.[0]
        ?.extensions?.code,
    ).toBe('NOT_FOUND')
    await kit.gql(graphql(`mutation($id: Int!) { cancelAiring(airingId: $id) { cancelled } }`), { id: notLive.id }, op.key)
    const upcoming = await kit.rest('GET', '/api/channels/city-tv/programs/upcoming')
    expect(upcoming.body.upcoming.find((a: any) => a.episode.name === 'The Long Night').state).toBe('cancelled')
  })

  it('carries the same information as typed GraphQL queries', async () => {
    clock.set('2026-03-03T12:30:00-05:00')
    const data = await kit.gql(
      graphql(`{ channel(id: "city-tv") {
      name timezone nowPlaying { isLive cacheSeconds currentVideo { videoId name remainingTimeHuman } }
      onAir { status } schedule { status } catchups { total lastPage } programs(status: ACTIVE) { nodes { slug episodesCount } }
      upcomingAirings(limit: 1) { state episode { name } }
    } }`),
    )
    expect(data.channel).toEqual({
      name: 'City TV',
      timezone: 'America/New_York',
      nowPlaying: {
        isLive: false,
        cacheSeconds: 1800,
        currentVideo: { videoId: expect.any(Number), name: 'Harbour Lights', remainingTimeHuman: '30:00' },
      },
      onAir: { status: 'OFF_AIR' },
      schedule: [{ status: 'LIVE' }, { status: 'PENDING' }, { status: 'CANCELLED' }],
      catchups: { total: 3, lastPage: 1 },
      programs: {
        nodes: [
          { slug: 'morning-show', episodesCount: 5 },
          { slug: 'weekend-movies', episodesCount: 1 },
        ],
      },
      upcomingAirings: [{ state: 'UPCOMING', episode: { name: 'Wednesday' } }],
    })
  })
})
