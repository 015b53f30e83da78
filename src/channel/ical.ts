// iCalendar (RFC 5545) feed of one channel's guide: a VTIMEZONE built from the IANA zone for the
// guide's window, VEVENTs in the channel's local time, CRLF lines folded at 75 octets.
import { localParts, offsetMinutes } from './zoned-time.js'
import { LINE_BREAKS, printable, type GuideAiring, type GuideChannel } from './guide-types.js'

const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0')
const HOUR = 3_600_000
const QUARTER = 15 * 60_000

/** RFC 5545 3.3.11: backslash, semicolon, comma and newline escaped; every kind of line break is a newline. */
export const escapeText = (text: string) =>
  printable(text.replace(LINE_BREAKS, '\n'))
    .replace(/[\\;,]/g, (c) => `\\${c}`)
    .replace(/\n/g, '\\n')

/** RFC 5545 3.1: lines of at most 75 octets, continued with CRLF and one space; never inside a UTF-8 sequence. */
export function foldLine(line: string): string {
  if (line.length <= 25 || Buffer.byteLength(line) <= 75) return line // a UTF-16 unit is at most 3 octets
  const out: string[] = []
  let current = ''
  let octets = 0
  for (const ch of line) {
    const size = Buffer.byteLength(ch)
    const limit = out.length ? 74 : 75 // a continuation line starts with the space
    if (octets + size > limit) {
      out.push(current)
      current = ''
      octets = 0
    }
    current += ch
    octets += size
  }
  out.push(current)
  return out.join('\r\n ')
}

const utcStamp = (at: Date) =>
  at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z')
const localStamp = (p: { year: number; month: number; day: number; hour: number; minute: number; second: number }) =>
  `${pad(p.year, 4)}${pad(p.month)}${pad(p.day)}T${pad(p.hour)}${pad(p.minute)}${pad(p.second)}`
const offsetText = (minutes: number) => `${minutes < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(minutes) / 60))}${pad(Math.abs(minutes) % 60)}`

/** The wall time of `at` read with a given offset (for an observance's DTSTART, in its TZOFFSETFROM). */
function wallAt(at: number, offset: number) {
  const d = new Date(at + offset * 60_000)
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
  }
}

/** Offset changes of the zone in [from, to): found hour by hour, then to the quarter hour. */
export function offsetTransitions(timeZone: string, from: Date, to: Date): { at: number; from: number; to: number }[] {
  const found: { at: number; from: number; to: number }[] = []
  let t = Math.floor(from.getTime() / QUARTER) * QUARTER
  let offset = offsetMinutes(t, timeZone)
  for (; t < to.getTime(); t += HOUR) {
    const next = offsetMinutes(t + HOUR, timeZone)
    if (next === offset) continue
    let q = t + QUARTER
    while (offsetMinutes(q, timeZone) === offset) q += QUARTER
    found.push({ at: q, from: offset, to: offsetMinutes(q, timeZone) })
    offset = offsetMinutes(q, timeZone)
  }
  return found
}

const shortName = (at: number, timeZone: string) =>
  new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'short' }).formatToParts(at).find((p) => p.type === 'timeZoneName')?.value ??
  'LMT'

/** Daylight when the offset is above the lower of January's and July's that year. */
function isDaylight(at: number, offset: number, timeZone: string) {
  const year = new Date(at).getUTCFullYear()
  return offset > Math.min(offsetMinutes(Date.UTC(year, 0, 1), timeZone), offsetMinutes(Date.UTC(year, 6, 1), timeZone))
}

/**
 * A VTIMEZONE exact over [from, to): the offset in force at `from` (as an observance from 1970)
 * and one observance per change inside. Enough for every event of the feed, with no RRULE to guess.
 */
export function vtimezone(timeZone: string, from: Date, to: Date): string[] {
  const start = from.getTime()
  const initial = offsetMinutes(start, timeZone)
  const observance = (at: number, fromOffset: number, toOffset: number, dtstart: string) => {
    const kind = isDaylight(at, toOffset, timeZone) ? 'DAYLIGHT' : 'STANDARD'
    return [
      `BEGIN:${kind}`,
      `DTSTART:${dtstart}`,
      `TZOFFSETFROM:${offsetText(fromOffset)}`,
      `TZOFFSETTO:${offsetText(toOffset)}`,
      `TZNAME:${escapeText(shortName(at, timeZone))}`,
      `END:${kind}`,
    ]
  }
  return [
    'BEGIN:VTIMEZONE',
    `TZID:${timeZone}`,
    ...observance(start, initial, initial, '19700101T000000'),
    ...offsetTransitions(timeZone, from, to).flatMap((c) => observance(c.at, c.from, c.to, localStamp(wallAt(c.at, c.from)))),
    'END:VTIMEZONE',
  ]
}

/**
 * `DTSTART;TZID=zone:local` when that local time happens once; in the repeated hour of a fall-back
 * change, UTC. RFC 5545 reads an ambiguous local time as its first occurrence, but readers differ
 * (Python's icalendar takes the second), and UTC leaves nothing to read wrong.
 */
function timeProperty(name: string, at: Date, timeZone: string): string {
  const p = localParts(at, timeZone)
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second)
  const instants = new Set(
    [offsetMinutes(at.getTime() - 86_400_000, timeZone), offsetMinutes(at, timeZone), offsetMinutes(at.getTime() + 86_400_000, timeZone)]
      .map((offset) => wall - offset * 60_000)
      .filter((t) => {
        const q = localParts(t, timeZone)
        return Date.UTC(q.year, q.month - 1, q.day, q.hour, q.minute, q.second) === wall
      }),
  )
  return instants.size === 1 ? `${name};TZID=${timeZone}:${localStamp(p)}` : `${name}:${utcStamp(at)}`
}

export function buildICalendar(
  channel: GuideChannel,
  airings: GuideAiring[],
  options: { host: string; now: Date; window: { from: Date; to: Date }; prodId: string },
): string {
  const tz = channel.timezone
  // DTSTAMP is the hour, not the second: the feed (and its ETag) only changes when its content does.
  const stamp = utcStamp(new Date(Math.floor(options.now.getTime() / HOUR) * HOUR))
  const lastEnd = Math.max(options.window.to.getTime(), ...airings.map((a) => a.endsAt.getTime()))
  const firstStart = Math.min(options.window.from.getTime(), ...airings.map((a) => a.startsAt.getTime()))
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    `PRODID:${options.prodId}`,
    'CALSCALE:GREGORIAN',
    'METHOD:PUBLISH',
    `X-WR-CALNAME:${escapeText(channel.name)}`,
    `X-WR-TIMEZONE:${tz}`,
    ...vtimezone(tz, new Date(firstStart), new Date(lastEnd + HOUR)),
  ]
  for (const a of airings) {
    const description = a.episodeSynopsis?.trim() || a.programSynopsis.trim()
    lines.push(
      'BEGIN:VEVENT',
      `UID:airing-${a.id}@${options.host}`,
      `DTSTAMP:${stamp}`,
      timeProperty('DTSTART', a.startsAt, tz),
      timeProperty('DTEND', a.endsAt, tz),
      `SUMMARY:${escapeText(a.episodeName.trim() ? `${a.programName}: ${a.episodeName}` : a.programName)}`,
      ...(description ? [`DESCRIPTION:${escapeText(description)}`] : []),
      `STATUS:${a.cancelled ? 'CANCELLED' : 'CONFIRMED'}`,
      'TRANSP:TRANSPARENT',
      'END:VEVENT',
    )
  }
  lines.push('END:VCALENDAR')
  return lines.map(foldLine).join('\r\n') + '\r\n'
}
