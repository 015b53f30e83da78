// Program guides (XMLTV, iCalendar, M3U) and the channel API's import additions: on-demand
// availability and fallback content. XMLTV is validated against xmltv.dtd with xmllint; iCalendar is
// read by a strict unfolding parser here and by a real iCalendar library (Python's icalendar).
import { execFileSync, spawnSync } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit, fixedClock } from './kit/kit.js'
import { importChannel, parseChannelImport } from '../src/channel/import-channel.js'
import { publishChannelChanged } from '../src/live/channel-events.js'
import { zonedToInstant } from '../src/channel/zoned-time.js'
import { buildICalendar, foldLine } from '../src/channel/ical.js'
import { buildXmltv } from '../src/channel/xmltv.js'
import { createListener } from '../src/process/http-listener.js'
import type { GuideAiring, GuideChannel } from '../src/channel/guide-types.js'
import { graphql } from '../src/graphql/typed-documents.js'

const DTD = new URL('./fixtures/xmltv.dtd', import.meta.url).pathname
const CHANNEL = '0b7d4f7e-3c2a-4e55-9a41-5d1c2b3a4f60'
const OTHER = '1c8e5a8f-4d3b-4f66-8b52-6e2d3c4b5a71'
const PLAIN = '2d9f6b90-5e4c-4a77-9c63-7f3e4d5c6b82'
const NY = 'America/New_York'

const hasXmllint = spawnSync('xmllint', ['--version']).status === 0
/** A Python that has the icalendar library: pyenv's or Debian's (python3-icalendar). */
const python = ['python3', '/usr/bin/python3'].find((p) => spawnSync(p, ['-c', 'import icalendar']).status === 0)
// Under CI the tools are installed by .ci/run: a missing one fails there instead of skipping.
const needTools = !!process.env.CI

/** An instant from New York wall time. */
const ny = (y: number, m: number, d: number, h: number, min = 0) => zonedToInstant(y, m, d, h, min, NY)
const iso = (at: Date) => at.toISOString()

// The DST week: blocks at 00:00, 06:00, 12:00 and 18:00 local from Saturday 7 March 2026 to
// Sunday 15 March; clocks spring forward on Sunday 8 March at 02:00.
const BLOCK_HOURS = [0, 6, 12, 18]
const chainStarts: Date[] = []
for (let day = 7; day <= 14; day++) for (const h of BLOCK_HOURS) chainStarts.push(ny(2026, 3, day, h))
chainStarts.push(ny(2026, 3, 15, 0))
const chainEpisodes = chainStarts.slice(0, -1).map((start, i) => ({
  episode_number: i + 1,
  name: `Block ${i + 1}`,
  type: 'pre_recorded',
  airings: [{ starts_at: iso(start), duration_minutes: (chainStarts[i + 1]!.getTime() - start.getTime()) / 60_000 }],
}))

const TRICKY_NAME = `Rock & Roll <live> "quoted" 'apos'`
const TRICKY_SYNOPSIS = `Line one; two, three\\four\nLine two — ünïcödé ${'word '.repeat(30)}end`

function guideDocument() {
  return {
    channel: {
      uuid: CHANNEL,
      slug: 'guide-tv',
      name: 'Guide TV',
      timezone: NY,
      show_banner_url: 'https://cdn.example.com/guide/logo.png',
      stream_url: 'https://cdn.example.com/guide/live.m3u8',
      fallback: {
        name: 'Harbour Cam',
        description: 'The harbour, live, between shows',
        hls_url: 'https://cdn.example.com/guide/cam.m3u8',
        thumbnail: 'https://cdn.example.com/guide/cam.jpg',
      },
    },
    programs: [
      {
        slug: 'round-the-clock',
        name: 'Round the Clock',
        synopsis: 'Every six hours.',
        type: 'on_demand',
        status: 'active',
        episodes: chainEpisodes,
      },
      {
        slug: 'specials',
        name: 'Specials',
        synopsis: 'Now and then.',
        banner_url: 'https://cdn.example.com/guide/specials.jpg',
        type: 'live',
        status: 'active',
        episodes: [
          // Ended within the last day: in the guide. Ended earlier: not.
          {
            episode_number: 1,
            name: 'Yesterday',
            type: 'live',
            airings: [{ starts_at: iso(ny(2026, 3, 5, 20)), duration_minutes: 60, went_live_at: iso(ny(2026, 3, 5, 20)) }],
          },
          { episode_number: 2, name: 'Long ago', type: 'live', airings: [{ starts_at: iso(ny(2026, 3, 3, 20)), duration_minutes: 60 }] },
          {
            episode_number: 3,
            name: TRICKY_NAME,
            synopsis: TRICKY_SYNOPSIS,
            type: 'live',
            airings: [{ starts_at: iso(ny(2026, 3, 16, 10)), duration_minutes: 90 }],
          },
          {
            episode_number: 4,
            name: 'Called off',
            type: 'live',
            airings: [{ starts_at: iso(ny(2026, 3, 17, 10)), duration_minutes: 30, cancelled: true }],
          },
          {
            episode_number: 5,
            name: 'Not ready',
            type: 'live',
            status: 'draft',
            airings: [{ starts_at: iso(ny(2026, 3, 18, 10)), duration_minutes: 30 }],
          },
          // Past the 14 days ahead (now + 14 d = 20 March 12:00).
          { episode_number: 6, name: 'Too far', type: 'live', airings: [{ starts_at: iso(ny(2026, 3, 21, 10)), duration_minutes: 30 }] },
        ],
      },
      {
        // A weekly slot with no episode in it at "now": playback source fallback.
        slug: 'open-slot',
        name: 'Open Slot',
        type: 'live',
        status: 'active',
        slots: [{ day_of_week: 5, start_time: '11:00', duration_minutes: 120 }],
      },
      {
        slug: 'recorded',
        name: 'Recorded',
        type: 'on_demand',
        status: 'active',
        available_on_demand: true,
        slots: [{ day_of_week: 2, start_time: '10:00', duration_minutes: 60 }],
        episodes: [
          // Default: the end of the first airing (Tuesday 10 March 11:00).
          {
            episode_number: 1,
            name: 'After airing',
            type: 'pre_recorded',
            available_on_demand: true,
            on_demand: { hls_url: 'https://cdn.example.com/r/1.m3u8' },
            airings: [{ starts_at: iso(ny(2026, 3, 10, 10)), duration_minutes: 60 }],
          },
          // Explicit null: at once.
          {
            episode_number: 2,
            name: 'At once',
            type: 'pre_recorded',
            available_on_demand: true,
            on_demand: { hls_url: 'https://cdn.example.com/r/2.m3u8', available_at: null },
            airings: [{ starts_at: iso(ny(2026, 3, 24, 10)), duration_minutes: 60 }],
          },
          // Explicit time.
          {
            episode_number: 3,
            name: 'Embargoed',
            type: 'pre_recorded',
            available_on_demand: true,
            on_demand: { id: 77, duration: 3600, hls_url: 'https://cdn.example.com/r/3.m3u8', available_at: '2026-03-12T09:00:00-04:00' },
          },
          // No airing at all: at once.
          {
            episode_number: 4,
            name: 'Never aired',
            type: 'pre_recorded',
            available_on_demand: true,
            on_demand: { hls_url: 'https://cdn.example.com/r/4.m3u8' },
          },
          // The first airing was cancelled: the next one counts (Tuesday 17 March 11:00).
          {
            episode_number: 5,
            name: 'Second chance',
            type: 'pre_recorded',
            available_on_demand: true,
            on_demand: { hls_url: 'https://cdn.example.com/r/5.m3u8' },
            airings: [
              { starts_at: iso(ny(2026, 3, 17, 10)), duration_minutes: 60 },
              { starts_at: iso(ny(2026, 3, 10, 10)), duration_minutes: 60, cancelled: true },
            ],
          },
        ],
      },
    ],
  }
}

const otherDocument = {
  channel: {
    uuid: OTHER,
    slug: 'another-tv',
    name: 'Another "Quoted" TV',
    timezone: 'Africa/Nairobi',
    stream_url: 'https://cdn.example.com/another/live.m3u8',
  },
}
const plainDocument = {
  channel: { uuid: PLAIN, slug: 'plain-tv', name: 'Plain TV', timezone: 'Africa/Nairobi' },
  programs: [
    {
      slug: 'plain-show',
      name: 'Plain Show',
      type: 'live',
      status: 'active',
      slots: [{ day_of_week: 5, start_time: '19:00', duration_minutes: 60 }],
    },
  ],
}

// ---------------------------------------------------------------- readers used by the tests

/** `20260308060000 -0400` -> the instant. */
function xmltvInstant(text: string): Date {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2}) ([+-])(\d{2})(\d{2})$/.exec(text)
  if (!m) throw new Error(`not an XMLTV time: ${text}`)
  const [, y, mo, d, h, mi, s, sign, oh, om] = m
  const offset = (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om))
  return new Date(Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s!) - offset * 60_000)
}

function programmes(xml: string) {
  return [...xml.matchAll(/<programme start="([^"]+)" stop="([^"]+)" channel="([^"]+)">([\s\S]*?)<\/programme>/g)].map((m) => ({
    start: m[1]!,
    stop: m[2]!,
    channel: m[3]!,
    title: /<title>([^<]*)<\/title>/.exec(m[4]!)?.[1],
    body: m[4]!,
  }))
}

function xmllint(xml: string): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'xmltv-'))
  const file = join(dir, 'guide.xml')
  writeFileSync(file, xml)
  // The document's own DOCTYPE names xmltv.dtd beside it, as players expect; --dtdvalid checks against the same file.
  copyFileSync(DTD, join(dir, 'xmltv.dtd'))
  const r = spawnSync('xmllint', ['--noout', '--nonet', '--dtdvalid', DTD, file], { encoding: 'utf8' })
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` }
}

interface ContentLine {
  name: string
  params: Record<string, string>
  value: string
}
interface Component {
  name: string
  props: ContentLine[]
  children: Component[]
}

/**
 * A strict RFC 5545 reader: CRLF only, physical lines of at most 75 octets, unfolding, content
 * line grammar, BEGIN/END nesting. Throws on any departure.
 */
function parseICalendar(text: string): Component {
  if (!text.endsWith('\r\n')) throw new Error('does not end with CRLF')
  const physical = text.slice(0, -2).split('\r\n')
  for (const [i, line] of physical.entries()) {
    if (/[\r\n]/.test(line)) throw new Error(`bare CR or LF in line ${i + 1}`)
    if (Buffer.byteLength(line) > 75) throw new Error(`line ${i + 1} has ${Buffer.byteLength(line)} octets`)
  }
  const logical: string[] = []
  for (const line of physical) {
    if (line.startsWith(' ') || line.startsWith('\t')) {
      if (!logical.length) throw new Error('continuation before any line')
      logical[logical.length - 1] += line.slice(1)
    } else logical.push(line)
  }
  const root: Component = { name: '(root)', props: [], children: [] }
  const stack = [root]
  const grammar = /^([A-Za-z0-9-]+)((?:;[A-Za-z0-9-]+=(?:"[^"]*"|[^";:,]*)(?:,(?:"[^"]*"|[^";:,]*))*)*):(.*)$/
  for (const line of logical) {
    const m = grammar.exec(line)
    if (!m) throw new Error(`not a content line: ${line}`)
    const params: Record<string, string> = {}
    for (const p of m[2]!.split(';').slice(1)) {
      const [k, v] = p.split('=') as [string, string]
      params[k.toUpperCase()] = v
    }
    const name = m[1]!.toUpperCase()
    const value = m[3]!
    if (name === 'BEGIN') {
      const c: Component = { name: value, props: [], children: [] }
      stack.at(-1)!.children.push(c)
      stack.push(c)
    } else if (name === 'END') {
      if (stack.at(-1)!.name !== value) throw new Error(`END:${value} closes ${stack.at(-1)!.name}`)
      stack.pop()
    } else {
      if (stack.length === 1) throw new Error(`property ${name} outside a component`)
      stack.at(-1)!.props.push({ name, params, value })
    }
  }
  if (stack.length !== 1 || root.children.length !== 1) throw new Error('unbalanced BEGIN/END')
  return root.children[0]!
}

/** RFC 5545 TEXT: only \\ \; \, \n \N escapes, and no bare ; or ,. */
function unescapeText(value: string): string {
  let out = ''
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!
    if (c === ';' || c === ',') throw new Error(`unescaped ${c} in ${value}`)
    if (c !== '\\') {
      out += c
      continue
    }
    const next = value[++i]
    if (next === 'n' || next === 'N') out += '\n'
    else if (next === '\\' || next === ';' || next === ',') out += next
    else throw new Error(`bad escape \\${next} in ${value}`)
  }
  return out
}

const prop = (c: Component, name: string) => {
  const found = c.props.filter((p) => p.name === name)
  if (found.length !== 1) throw new Error(`${c.name} has ${found.length} ${name}`)
  return found[0]!
}

/** The calendar as Python's icalendar reads it: events with UTC times, and the VTIMEZONE's offsets at given local wall times (`2026-03-08T01:59`). */
function readWithIcalendar(ics: string, probes: string[] = []) {
  const script = `
import sys, json, datetime
from icalendar import Calendar
cal = Calendar.from_ical(sys.stdin.buffer.read())
utc = datetime.timezone.utc
events = []
for e in cal.walk('VEVENT'):
    events.append({'uid': str(e['UID']), 'start': e.decoded('DTSTART').astimezone(utc).isoformat(), 'end': e.decoded('DTEND').astimezone(utc).isoformat(),
                   'summary': str(e['SUMMARY']), 'description': str(e.get('DESCRIPTION', '')), 'status': str(e['STATUS'])})
zones = {}
for tz in cal.walk('VTIMEZONE'):
    t = tz.to_tz()
    zones[str(tz['TZID'])] = [t.utcoffset(datetime.datetime.fromisoformat(p)).total_seconds() / 60 for p in json.loads(sys.argv[1])]
print(json.dumps({'version': str(cal['VERSION']), 'prodid': str(cal['PRODID']), 'events': events, 'zones': zones}))
`
  const out = execFileSync(python!, ['-c', script, JSON.stringify(probes)], { input: ics, encoding: 'utf8' })
  return JSON.parse(out) as {
    version: string
    prodid: string
    events: { uid: string; start: string; end: string; summary: string; description: string; status: string }[]
    zones: Record<string, number[]>
  }
}

const pyUtc = (at: Date) => at.toISOString().replace('.000Z', '+00:00')

// ---------------------------------------------------------------- the service, on each database

describe.each(targets)('program guides on $name', (target) => {
  // Friday 6 March 2026 12:00 in New York (EST): the guide runs from Thursday 12:00 to Friday 20 March 12:00.
  const NOW = '2026-03-06T12:00:00-05:00'
  const clock = fixedClock(NOW)
  const kit = useKit(target, { clock, env: { CHANNEL_CACHE_MS: '1000', PUBLIC_BASE_URL: 'https://tv.example.com' } })
  const get = (path: string, headers: Record<string, string> = {}) => kit.rest('GET', `/api${path}`, { headers })
  let server: Server
  let base: string

  beforeAll(async () => {
    await importChannel(kit.deps, guideDocument())
    await importChannel(kit.deps, otherDocument)
    await importChannel(kit.deps, plainDocument)
    server = createServer(createListener(kit.app, kit.deps))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }, 60_000)
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('XMLTV: content type, channel, programmes with offsets, texts escaped, cancelled/draft/out-of-window left out', async () => {
    clock.set(NOW)
    const res = await get(`/channels/${CHANNEL}/xmltv`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/xml; charset=utf-8')
    const xml = res.body as string
    expect(xml).toContain('<!DOCTYPE tv SYSTEM "xmltv.dtd">')
    expect(xml).toContain(
      '  <channel id="guide-tv.tv.example.com">\n    <display-name>Guide TV</display-name>\n    <icon src="https://cdn.example.com/guide/logo.png"/>\n  </channel>',
    )
    const list = programmes(xml)
    expect(new Set(list.map((p) => p.channel))).toEqual(new Set(['guide-tv.tv.example.com']))
    const specials = list.filter((p) => p.title === 'Specials')
    // Yesterday (ended within the day) and the tricky one; not Long ago, Called off, Not ready or Too far.
    expect(specials.map((p) => p.start)).toEqual(['20260305200000 -0500', '20260316100000 -0400'])
    expect(xml).not.toMatch(/Long ago|Called off|Not ready|Too far/)
    const tricky = specials[1]!
    expect(tricky.stop).toBe('20260316113000 -0400')
    expect(tricky.body).toBe(
      [
        '',
        '    <title>Specials</title>',
        '    <sub-title>Rock &amp; Roll &lt;live&gt; &quot;quoted&quot; &apos;apos&apos;</sub-title>',
        `    <desc>Line one; two, three\\four&#10;Line two — ünïcödé ${'word '.repeat(30)}end</desc>`,
        '    <category lang="en">Live</category>',
        '    <icon src="https://cdn.example.com/guide/specials.jpg"/>',
        '    <episode-num system="xmltv_ns">.2.</episode-num>',
        '    <episode-num system="onscreen">E3</episode-num>',
        '  ',
      ].join('\n'),
    )
    // Chain blocks, Recorded airings in the window (10, 17 March; the 24th is past it).
    expect(list.filter((p) => p.title === 'Round the Clock')).toHaveLength(32)
    expect(list.filter((p) => p.title === 'Recorded').map((p) => p.start)).toEqual(['20260310100000 -0400', '20260317100000 -0400'])
  })

  it.skipIf(!hasXmllint && !needTools)(
    'XMLTV is valid against xmltv.dtd (xmllint), and the check does catch an invalid document',
    async () => {
      clock.set(NOW)
      const xml = (await get(`/channels/${CHANNEL}/xmltv`)).body as string
      const valid = xmllint(xml)
      expect(valid.output).toBe('')
      expect(valid.ok).toBe(true)
      // A channel with no programmes and no icon is valid too.
      expect(xmllint((await get(`/channels/${OTHER}/xmltv`)).body).ok).toBe(true)
      // Control: a programme without its title, or with elements out of the DTD's order, is refused.
      const untitled = xmllint(xml.replace('<title>Specials</title>', ''))
      expect(untitled.ok).toBe(false)
      expect(untitled.output).toMatch(/programme/)
      const reordered = xml.replace(
        '    <category lang="en">Live</category>\n    <icon src="https://cdn.example.com/guide/specials.jpg"/>',
        '    <icon src="https://cdn.example.com/guide/specials.jpg"/>\n    <category lang="en">Live</category>',
      )
      expect(reordered).not.toBe(xml)
      expect(xmllint(reordered).ok).toBe(false)
    },
  )

  it('across the spring-forward week: local block times kept, offsets change, no gap and no overlap (XMLTV and iCalendar)', async () => {
    clock.set(NOW)
    const chain = programmes((await get(`/channels/${CHANNEL}/xmltv`)).body).filter((p) => p.title === 'Round the Clock')
    expect(chain).toHaveLength(32)
    for (const [i, p] of chain.entries()) {
      // Every block starts at its local time, whatever the offset.
      expect(p.start.slice(8, 14), p.start).toBe(['000000', '060000', '120000', '180000'][i % 4])
      expect(p.start.slice(-5), p.start).toBe(xmltvInstant(p.start) < new Date('2026-03-08T07:00:00Z') ? '-0500' : '-0400')
      if (i > 0) expect(p.start, `block ${i + 1}`).toBe(chain[i - 1]!.stop)
      expect(xmltvInstant(p.stop) > xmltvInstant(p.start)).toBe(true)
    }
    // The block over the change is five hours long, the week 191 hours.
    expect(chain[4]).toMatchObject({ start: '20260308000000 -0500', stop: '20260308060000 -0400' })
    expect(xmltvInstant(chain[4]!.stop).getTime() - xmltvInstant(chain[4]!.start).getTime()).toBe(5 * 3_600_000)
    expect(xmltvInstant(chain.at(-1)!.stop).getTime() - xmltvInstant(chain[0]!.start).getTime()).toBe(191 * 3_600_000)

    const cal = parseICalendar((await get(`/channels/${CHANNEL}/schedule.ics`)).body)
    const events = cal.children.filter((c) => c.name === 'VEVENT' && unescapeText(prop(c, 'SUMMARY').value).startsWith('Round the Clock'))
    expect(events).toHaveLength(32)
    for (const [i, e] of events.entries()) {
      const start = prop(e, 'DTSTART')
      expect(start.params.TZID).toBe(NY)
      expect(start.value.slice(9)).toBe(['000000', '060000', '120000', '180000'][i % 4])
      if (i > 0) expect(start.value).toBe(prop(events[i - 1]!, 'DTEND').value)
    }
  })

  it('iCalendar: strict structure, VTIMEZONE, stable UIDs, escaped and folded text, cancelled airings', async () => {
    clock.set(NOW)
    const res = await get(`/channels/${CHANNEL}/schedule.ics`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/calendar; charset=utf-8')
    const text = res.body as string
    const cal = parseICalendar(text)
    expect(cal.name).toBe('VCALENDAR')
    expect(prop(cal, 'VERSION').value).toBe('2.0')
    expect(prop(cal, 'PRODID').value).toBe('-//sms-channel-gateway//Channel guide//EN')
    expect(prop(cal, 'X-WR-TIMEZONE').value).toBe(NY)
    const [tz, ...rest] = cal.children
    expect(tz!.name).toBe('VTIMEZONE')
    expect(prop(tz!, 'TZID').value).toBe(NY)
    // The standard time in force at the start, then the spring-forward at 02:00 local on 8 March.
    expect(tz!.children.map((o) => [o.name, prop(o, 'DTSTART').value, prop(o, 'TZOFFSETFROM').value, prop(o, 'TZOFFSETTO').value])).toEqual(
      [
        ['STANDARD', '19700101T000000', '-0500', '-0500'],
        ['DAYLIGHT', '20260308T020000', '-0500', '-0400'],
      ],
    )
    const events = rest.filter((c) => c.name === 'VEVENT')
    expect(events.length).toBe(rest.length)
    // Chain 32 + Yesterday + tricky + Called off (cancelled, kept) + Recorded 3 (one cancelled).
    expect(events).toHaveLength(38)
    const uids = events.map((e) => prop(e, 'UID').value)
    expect(new Set(uids).size).toBe(uids.length)
    for (const uid of uids) expect(uid).toMatch(/^airing-\d+@tv\.example\.com$/)
    for (const e of events) {
      expect(prop(e, 'DTSTAMP').value).toBe('20260306T170000Z')
      for (const p of e.props.filter((p) => ['SUMMARY', 'DESCRIPTION'].includes(p.name))) unescapeText(p.value)
    }
    const bySummary = (s: string) => events.find((e) => unescapeText(prop(e, 'SUMMARY').value) === s)!
    const tricky = bySummary(`Specials: ${TRICKY_NAME}`)
    expect(unescapeText(prop(tricky, 'DESCRIPTION').value)).toBe(TRICKY_SYNOPSIS)
    expect(prop(tricky, 'DTSTART')).toEqual({ name: 'DTSTART', params: { TZID: NY }, value: '20260316T100000' })
    expect(prop(tricky, 'DTEND').value).toBe('20260316T113000')
    expect(prop(tricky, 'STATUS').value).toBe('CONFIRMED')
    // The long description was folded, and only between characters.
    expect(text).toMatch(/\r\n [^\r]/)
    expect(prop(bySummary('Specials: Called off'), 'STATUS').value).toBe('CANCELLED')
    expect(events.some((e) => /Not ready|Long ago|Too far/.test(prop(e, 'SUMMARY').value))).toBe(false)

    // UIDs are the airings' ids: the same on the next request, an hour later.
    clock.advance(3_600_000)
    const later = parseICalendar((await get(`/channels/${CHANNEL}/schedule.ics`)).body)
    expect(later.children.filter((c) => c.name === 'VEVENT').map((e) => prop(e, 'UID').value)).toEqual(uids)
  })

  it.skipIf(!python && !needTools)(
    'iCalendar is read by a real iCalendar library (Python icalendar) with the same instants and texts',
    async () => {
      clock.set(NOW)
      const ics = (await get(`/channels/${CHANNEL}/schedule.ics`)).body as string
      const read = readWithIcalendar(ics, ['2026-03-08T01:59', '2026-03-08T03:00', '2026-03-20T12:00'])
      expect(read.version).toBe('2.0')
      // The VTIMEZONE as the library turns it into a tzinfo: -5 h before the change, -4 h from it.
      expect(read.zones).toEqual({ [NY]: [-300, -240, -240] })
      const block = (n: number) => read.events.find((e) => e.summary === `Round the Clock: Block ${n}`)!
      expect(block(5)).toMatchObject({ start: pyUtc(ny(2026, 3, 8, 0)), end: pyUtc(ny(2026, 3, 8, 6)), status: 'CONFIRMED' })
      expect(block(5).start).toBe('2026-03-08T05:00:00+00:00')
      expect(block(5).end).toBe('2026-03-08T10:00:00+00:00')
      const tricky = read.events.find((e) => e.summary === `Specials: ${TRICKY_NAME}`)!
      expect(tricky).toMatchObject({ description: TRICKY_SYNOPSIS, start: '2026-03-16T14:00:00+00:00', end: '2026-03-16T15:30:00+00:00' })
      expect(read.events.find((e) => e.summary === 'Specials: Called off')!.status).toBe('CANCELLED')
    },
  )

  it('M3U: channels with a stream URL, by name, tvg-id matching the XMLTV channel id', async () => {
    const res = await get('/channels.m3u')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('audio/x-mpegurl; charset=utf-8')
    expect(res.body).toBe(
      [
        '#EXTM3U',
        `#EXTINF:-1 tvg-id="another-tv.tv.example.com" tvg-name="Another 'Quoted' TV" group-title="Channels",Another "Quoted" TV`,
        'https://cdn.example.com/another/live.m3u8',
        '#EXTINF:-1 tvg-id="guide-tv.tv.example.com" tvg-name="Guide TV" tvg-logo="https://cdn.example.com/guide/logo.png" group-title="Channels",Guide TV',
        'https://cdn.example.com/guide/live.m3u8',
        '',
      ].join('\n'),
    )
    expect(res.body).not.toContain('Plain TV')
  })

  it('every guide: Cache-Control, ETag and 304, CORS and preflight, HEAD; unknown channel 404 {error}', async () => {
    clock.set(NOW)
    for (const path of [`/channels/${CHANNEL}/xmltv`, `/channels/${CHANNEL}/schedule.ics`, '/channels.m3u']) {
      const res = await get(path)
      expect(res.status, path).toBe(200)
      expect(res.headers.get('cache-control'), path).toBe('public, max-age=300')
      expect(res.headers.get('access-control-allow-origin'), path).toBe('*')
      expect(res.headers.get('access-control-expose-headers'), path).toBe('ETag, X-Request-Id, Link, X-Total-Count')
      const etag = res.headers.get('etag')!
      expect(etag, path).toMatch(/^"[\w-]+"$/)
      const again = await get(path, { 'if-none-match': etag })
      expect(again.status, path).toBe(304)
      expect(again.body, path).toBeNull()
      expect(again.headers.get('etag'), path).toBe(etag)
      expect((await get(path, { 'if-none-match': '"other"' })).status, path).toBe(200)
      const head = await kit.app.fetch(new Request(`http://localhost/api${path}`, { method: 'HEAD' }))
      expect(head.status, path).toBe(200)
      expect(head.headers.get('content-type'), path).toBe(res.headers.get('content-type'))
      expect(await head.text(), path).toBe('')
      const preflight = await kit.rest('OPTIONS', `/api${path}`, {
        headers: { origin: 'https://player.example', 'access-control-request-method': 'GET' },
      })
      expect(preflight.status, path).toBe(204)
      expect(preflight.headers.get('access-control-allow-origin'), path).toBe('*')
      expect((await kit.rest('POST', `/api${path}`, { body: {} })).status, path).toBe(405)
    }
    // /channels.m3u is a channel path for every layer: errors are {error}, and Idempotency-Key (messaging only) is not read.
    const { key } = await kit.seed().account('Guide poster')
    const post = await kit.rest('POST', '/api/channels.m3u', { key, body: {}, headers: { 'idempotency-key': 'x'.repeat(300) } })
    expect([post.status, post.body]).toEqual([405, { error: 'POST is not allowed on /channels.m3u' }])
    expect(await get('/channels.xyz')).toMatchObject({ status: 404, body: { error: 'No route for /channels.xyz' } })
    for (const path of [
      '/channels/3e0a7b10-0000-4000-8000-000000000000/xmltv',
      '/channels/3e0a7b10-0000-4000-8000-000000000000/schedule.ics',
      '/channels/guide-tv/xmltv',
      '/channels/guide-tv/schedule.ics',
    ]) {
      const res = await get(path)
      expect(res.status, path).toBe(404)
      expect(res.body, path).toEqual({ error: 'Channel not found' })
      expect(res.headers.get('content-type'), path).toBe('application/json; charset=utf-8')
      expect(res.headers.get('access-control-allow-origin'), path).toBe('*')
    }
  })

  it('the guides change with the data: a new ETag after a re-import', async () => {
    clock.set('2026-03-06T12:00:07-05:00')
    const before = await get(`/channels/${OTHER}/xmltv`)
    const renamed = await importChannel(kit.deps, { channel: { ...otherDocument.channel, name: 'Another TV Renamed' } })
    // Guides are kept for a minute, unless their channel changes: the change event (what the CLI and
    // the importChannel mutation publish) drops them at once.
    await publishChannelChanged(kit.deps, renamed.id)
    clock.advance(1000)
    await new Promise((r) => setTimeout(r, 1100)) // past CHANNEL_CACHE_MS (the channel lookup)
    const after = await get(`/channels/${OTHER}/xmltv`, { 'if-none-match': before.headers.get('etag')! })
    expect(after.status).toBe(200)
    expect(after.body).toContain('<display-name>Another TV Renamed</display-name>')
    await importChannel(kit.deps, otherDocument)
    await publishChannelChanged(kit.deps, renamed.id)
  })

  it('without a change event a guide is kept for its minute', async () => {
    clock.set('2026-03-06T12:10:07-05:00')
    const before = await get(`/channels/${OTHER}/xmltv`)
    await importChannel(kit.deps, { channel: { ...otherDocument.channel, name: 'Another TV Quietly' } })
    clock.advance(1000)
    await new Promise((r) => setTimeout(r, 1100))
    const same = await get(`/channels/${OTHER}/xmltv`)
    expect(same.headers.get('etag')).toBe(before.headers.get('etag'))
    expect(same.body).not.toContain('Another TV Quietly')
    const restored = await importChannel(kit.deps, otherDocument)
    await publishChannelChanged(kit.deps, restored.id)
  })

  it('the microcache replays a guide over real HTTP with its own content type, ETag and 304', async () => {
    clock.set('2026-03-06T12:00:30-05:00')
    const url = `${base}/api/channels/${CHANNEL}/schedule.ics`
    const first = await fetch(url)
    const body = await first.text()
    expect(first.headers.get('content-type')).toBe('text/calendar; charset=utf-8')
    // Same second: answered from the microcache by the listener.
    const replay = await fetch(url)
    expect(replay.status).toBe(200)
    expect(replay.headers.get('content-type')).toBe('text/calendar; charset=utf-8')
    expect(replay.headers.get('cache-control')).toBe('public, max-age=300')
    expect(await replay.text()).toBe(body)
    const notModified = await fetch(url, { headers: { 'if-none-match': first.headers.get('etag')! } })
    expect(notModified.status).toBe(304)
  })

  it('on-demand assets show from their availability time: REST episodes and GraphQL Episode.onDemand', async () => {
    const episodes = async () => {
      const res = await get('/programs/recorded/episodes')
      expect(res.status).toBe(200)
      return Object.fromEntries(res.body.episodes.map((e: any) => [e.name, e.on_demand && e.on_demand.hls_url]))
    }
    clock.set('2026-03-10T10:59:59-04:00')
    expect(await episodes()).toEqual({
      'Second chance': null,
      'Never aired': 'https://cdn.example.com/r/4.m3u8',
      Embargoed: null,
      'At once': 'https://cdn.example.com/r/2.m3u8',
      'After airing': null,
    })
    clock.set('2026-03-10T11:00:00-04:00')
    expect((await episodes())['After airing']).toBe('https://cdn.example.com/r/1.m3u8')
    clock.set('2026-03-12T09:00:00-04:00')
    const rest = await get('/programs/recorded/episodes')
    expect(rest.body.episodes.find((e: any) => e.name === 'Embargoed').on_demand).toEqual({
      id: 77,
      duration: 3600,
      hls_url: 'https://cdn.example.com/r/3.m3u8',
      thumbnail_url: null,
    })
    expect((await episodes())['Second chance']).toBeNull()
    clock.set('2026-03-17T11:00:00-04:00')
    expect((await episodes())['Second chance']).toBe('https://cdn.example.com/r/5.m3u8')

    clock.set('2026-03-10T10:30:00-04:00')
    const data = await kit.gql(graphql(`{ program(id: "recorded") { episodes { nodes { name onDemand { hlsUrl availableAt } } } } }`))
    expect(Object.fromEntries(data.program!.episodes.nodes.map((e: any) => [e.name, e.onDemand]))).toEqual({
      'Second chance': null,
      'Never aired': { hlsUrl: 'https://cdn.example.com/r/4.m3u8', availableAt: null },
      Embargoed: null,
      'At once': { hlsUrl: 'https://cdn.example.com/r/2.m3u8', availableAt: null },
      'After airing': null,
    })
    clock.set('2026-03-17T12:00:00-04:00')
    const later = await kit.gql(graphql(`{ program(id: "recorded") { episodes { nodes { name onDemand { availableAt } } } } }`))
    expect(Object.fromEntries(later.program!.episodes.nodes.map((e: any) => [e.name, e.onDemand?.availableAt]))).toEqual({
      'Second chance': '2026-03-17T15:00:00.000Z',
      'Never aired': null,
      Embargoed: '2026-03-12T13:00:00.000Z',
      'At once': null,
      'After airing': '2026-03-10T15:00:00.000Z',
    })
  })

  it('fallback content: described on the channel, shown on OnAir only while the fallback plays; REST programs/current keeps its shape', async () => {
    const query = `query($id: String!) { channel(id: $id) { streamUrl fallback { name description hlsUrl thumbnail } onAir { status playbackSource fallback { name hlsUrl } } } }`
    const harbour = {
      name: 'Harbour Cam',
      description: 'The harbour, live, between shows',
      hlsUrl: 'https://cdn.example.com/guide/cam.m3u8',
      thumbnail: 'https://cdn.example.com/guide/cam.jpg',
    }
    // Friday 12:00: the Open Slot is open with no episode.
    clock.set(NOW)
    const open = await kit.gql(query, { id: CHANNEL })
    expect(open.channel).toEqual({
      streamUrl: 'https://cdn.example.com/guide/live.m3u8',
      fallback: harbour,
      onAir: {
        status: 'ON_AIR',
        playbackSource: 'FALLBACK',
        fallback: { name: 'Harbour Cam', hlsUrl: 'https://cdn.example.com/guide/cam.m3u8' },
      },
    })
    const current = await get(`/channels/${CHANNEL}/programs/current`)
    expect(current.body).toMatchObject({ status: 'on_air', playback_source: 'fallback', program: { name: 'Open Slot' } })
    expect(Object.keys(current.body).sort()).toEqual([
      'banner_url',
      'channel_name',
      'ends_at',
      'episode',
      'playback_source',
      'program',
      'started_at',
      'status',
    ])
    // Tuesday 10:30: Recorded's episode airs in its slot: no fallback.
    clock.set('2026-03-10T10:30:00-04:00')
    expect((await kit.gql(query, { id: CHANNEL })).channel.onAir).toEqual({
      status: 'ON_AIR',
      playbackSource: 'PRE_RECORDED',
      fallback: null,
    })
    // Off air: none either.
    clock.set('2026-03-07T12:00:00-05:00')
    expect((await kit.gql(query, { id: CHANNEL })).channel.onAir).toEqual({ status: 'OFF_AIR', playbackSource: null, fallback: null })
    // A channel that does not describe its fallback: null even while it plays.
    clock.set('2026-03-06T19:30:00+03:00')
    expect((await kit.gql(query, { id: PLAIN })).channel).toEqual({
      streamUrl: null,
      fallback: null,
      onAir: { status: 'ON_AIR', playbackSource: 'FALLBACK', fallback: null },
    })
  })

  it('a re-import without the new fields clears them', async () => {
    await importChannel(kit.deps, {
      channel: {
        uuid: PLAIN,
        slug: 'plain-tv',
        name: 'Plain TV',
        timezone: 'Africa/Nairobi',
        stream_url: 'https://x.example/s.m3u8',
        fallback: { name: 'Card' },
      },
    })
    const row = await kit.db.channel.findUniqueOrThrow({ where: { id: PLAIN } })
    expect(row).toMatchObject({
      streamUrl: 'https://x.example/s.m3u8',
      fallbackName: 'Card',
      fallbackDescription: '',
      fallbackHlsUrl: null,
      fallbackThumbnail: null,
    })
    await importChannel(kit.deps, plainDocument)
    expect(await kit.db.channel.findUniqueOrThrow({ where: { id: PLAIN } })).toMatchObject({
      streamUrl: null,
      fallbackName: null,
      fallbackDescription: null,
    })
  })
})

// ---------------------------------------------------------------- the import format

describe('import format: stream_url, fallback, on_demand.available_at', () => {
  const base = { channel: { slug: 'x', name: 'X', timezone: 'UTC' } }
  const problems = (doc: unknown) => {
    try {
      parseChannelImport(doc)
      return []
    } catch (error: any) {
      return error.details.map((d: any) => d.field)
    }
  }
  it('refuses bad values with the field named, and accepts good ones', () => {
    expect(problems({ channel: { ...base.channel, stream_url: 42 } })).toEqual(['channel.stream_url'])
    expect(problems({ channel: { ...base.channel, fallback: { description: 'no name' } } })).toEqual(['channel.fallback.name'])
    expect(problems({ channel: { ...base.channel, fallback: { name: 'x'.repeat(201) } } })).toEqual(['channel.fallback.name'])
    const episode = (available_at: unknown) => ({
      ...base,
      programs: [
        {
          slug: 'p',
          name: 'P',
          type: 'live',
          status: 'active',
          episodes: [
            { episode_number: 1, name: 'E', type: 'live', on_demand: { hls_url: 'https://cdn.example.com/h.m3u8', available_at } },
          ],
        },
      ],
    })
    expect(problems(episode('2026-03-12 09:00'))).toEqual(['programs.0.episodes.0.on_demand.available_at'])
    expect(problems(episode('2026-03-12T09:00:00'))).toEqual(['programs.0.episodes.0.on_demand.available_at'])
    expect(problems(episode('2026-03-12T09:00:00Z'))).toEqual([])
    expect(problems(episode(null))).toEqual([])
    expect(problems({ channel: { ...base.channel, stream_url: null, fallback: null } })).toEqual([])
  })
})

// ---------------------------------------------------------------- the builders alone: fall back, other zones

describe('guide builders', () => {
  const channel: GuideChannel = { id: 'c', slug: 'c', name: 'C', timezone: NY, iconUrl: null, streamUrl: null }
  const airing = (id: number, start: Date, minutes: number): GuideAiring => ({
    id,
    startsAt: start,
    endsAt: new Date(start.getTime() + minutes * 60_000),
    cancelled: false,
    programName: 'P',
    programSynopsis: '',
    programType: 'live',
    episodeNumber: id,
    episodeName: `E${id}`,
    episodeSynopsis: null,
    bannerUrl: null,
  })
  // Sunday 1 November 2026: 01:00-02:00 EDT, then 01:00-02:00 EST again.
  const first = new Date('2026-11-01T05:00:00Z') // 01:00 EDT
  const fallBack = [
    airing(1, new Date('2026-11-01T04:00:00Z'), 60),
    airing(2, first, 30),
    airing(3, new Date('2026-11-01T05:30:00Z'), 60),
    airing(4, new Date('2026-11-01T06:30:00Z'), 30),
  ]
  const options = {
    host: 'h.example',
    now: new Date('2026-10-31T12:00:00Z'),
    window: { from: new Date('2026-10-30T12:00:00Z'), to: new Date('2026-11-14T12:00:00Z') },
    prodId: '-//t//t//EN',
  }

  it('fall back: the repeated hour is written in UTC, where a local time would be ambiguous; the VTIMEZONE has the change', () => {
    const cal = parseICalendar(buildICalendar(channel, fallBack, options))
    const times = (name: string) =>
      cal.children.filter((c) => c.name === 'VEVENT').map((e) => `${prop(e, name).params.TZID ?? 'UTC'} ${prop(e, name).value}`)
    // 01:00-01:59 local happens twice (EDT, then EST): those instants are written in UTC.
    expect(times('DTSTART')).toEqual([`${NY} 20261101T000000`, 'UTC 20261101T050000Z', 'UTC 20261101T053000Z', 'UTC 20261101T063000Z'])
    expect(times('DTEND')).toEqual(['UTC 20261101T050000Z', 'UTC 20261101T053000Z', 'UTC 20261101T063000Z', `${NY} 20261101T020000`])
    const tz = cal.children[0]!
    expect(
      tz.children.map((o) => [
        o.name,
        prop(o, 'DTSTART').value,
        prop(o, 'TZOFFSETFROM').value,
        prop(o, 'TZOFFSETTO').value,
        prop(o, 'TZNAME').value,
      ]),
    ).toEqual([
      ['DAYLIGHT', '19700101T000000', '-0400', '-0400', 'EDT'],
      ['STANDARD', '20261101T020000', '-0400', '-0500', 'EST'],
    ])
    // XMLTV: the offset says which 01:30 it is; the programmes chain without a gap.
    const xml = buildXmltv(channel, fallBack, { publicBaseUrl: 'https://h.example', generator: 'g' })
    expect(programmes(xml).map((p) => `${p.start}/${p.stop}`)).toEqual([
      '20261101000000 -0400/20261101010000 -0400',
      '20261101010000 -0400/20261101013000 -0400',
      '20261101013000 -0400/20261101013000 -0500',
      '20261101013000 -0500/20261101020000 -0500',
    ])
  })

  it.skipIf(!python && !needTools)(
    'fall back: the library reads every instant back exactly, and the zone offsets from the VTIMEZONE',
    () => {
      const read = readWithIcalendar(buildICalendar(channel, fallBack, options), [
        '2026-10-31T23:59',
        '2026-11-01T00:59',
        '2026-11-01T02:00',
        '2026-11-10T12:00',
      ])
      expect(read.events.map((e) => [e.start, e.end])).toEqual(fallBack.map((a) => [pyUtc(a.startsAt), pyUtc(a.endsAt)]))
      expect(read.zones[NY]).toEqual([-240, -240, -300, -300])
    },
  )

  it('a zone without DST: one observance; a half-hour zone prints its offset', () => {
    const kolkata = { ...channel, timezone: 'Asia/Kolkata' }
    const cal = parseICalendar(buildICalendar(kolkata, [airing(1, new Date('2026-03-10T04:30:00Z'), 60)], options))
    expect(cal.children[0]!.children.map((o) => [o.name, prop(o, 'TZOFFSETTO').value])).toEqual([['STANDARD', '+0530']])
    expect(
      programmes(
        buildXmltv(kolkata, [airing(1, new Date('2026-03-10T04:30:00Z'), 60)], { publicBaseUrl: 'https://h.example', generator: 'g' }),
      )[0]!.start,
    ).toBe('20260310100000 +0530')
  })

  it('folds at 75 octets without splitting a UTF-8 character', () => {
    const line = `DESCRIPTION:${'é'.repeat(100)}`
    const folded = foldLine(line)
    for (const part of folded.split('\r\n')) expect(Buffer.byteLength(part)).toBeLessThanOrEqual(75)
    expect(
      folded
        .split('\r\n')
        .map((p, i) => (i ? p.slice(1) : p))
        .join(''),
    ).toBe(line)
    expect(foldLine('SHORT:x')).toBe('SHORT:x')
  })
})
