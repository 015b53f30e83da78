// Wall-clock arithmetic in IANA zones with Intl only. Local times follow RFC 5545: a time that
// does not exist (spring forward) moves forward by the gap; an ambiguous one (fall back) means
// its first occurrence.

export interface LocalParts {
  year: number
  month: number
  day: number
  hour: number
  minute: number
  second: number
}

const formatters = new Map<string, Intl.DateTimeFormat>()
function formatter(timeZone: string) {
  let f = formatters.get(timeZone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
    formatters.set(timeZone, f)
  }
  return f
}

function formattedParts(t: number, timeZone: string): LocalParts {
  const out: Record<string, number> = {}
  for (const p of formatter(timeZone).formatToParts(t)) if (p.type !== 'literal') out[p.type] = Number(p.value)
  return { year: out.year!, month: out.month!, day: out.day!, hour: out.hour! % 24, minute: out.minute!, second: out.second! }
}

// Zone offsets change only at transitions, which fall on quarter hours of UTC: one Intl call per
// zone and quarter hour, then plain arithmetic.
const QUARTER = 15 * 60_000
const offsets = new Map<string, number>()

/** The zone's offset from UTC at an instant, in minutes (east positive). */
export function offsetMinutes(at: Date | number, timeZone: string): number {
  const t = typeof at === 'number' ? at : at.getTime()
  const bucket = Math.floor(t / QUARTER) * QUARTER
  const key = `${timeZone}|${bucket}`
  let offset = offsets.get(key)
  if (offset === undefined) {
    const p = formattedParts(bucket, timeZone)
    offset = Math.round((Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - bucket) / 60_000)
    if (offsets.size > 200_000) offsets.clear()
    offsets.set(key, offset)
  }
  return offset
}

export function localParts(at: Date | number, timeZone: string): LocalParts {
  const t = typeof at === 'number' ? at : at.getTime()
  const local = new Date(t + offsetMinutes(t, timeZone) * 60_000)
  return {
    year: local.getUTCFullYear(),
    month: local.getUTCMonth() + 1,
    day: local.getUTCDate(),
    hour: local.getUTCHours(),
    minute: local.getUTCMinutes(),
    second: local.getUTCSeconds(),
  }
}

/** The instant of a local wall time (RFC 5545 rules for gaps and overlaps). */
export function zonedToInstant(year: number, month: number, day: number, hour: number, minute: number, timeZone: string): Date {
  const wall = Date.UTC(year, month - 1, day, hour, minute)
  const before = offsetMinutes(wall - 86_400_000, timeZone)
  const after = offsetMinutes(wall + 86_400_000, timeZone)
  const candidates = [...new Set([before, after])]
    .map((offset) => wall - offset * 60_000)
    .filter((t) => {
      const p = localParts(t, timeZone)
      return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute) === wall
    })
    .sort((a, b) => a - b)
  // No candidate: the wall time falls in a gap. Read it with the offset in force before the gap,
  // which lands the same distance past the gap's end.
  return new Date(candidates[0] ?? wall - before * 60_000)
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0')

/** `2026-03-08T01:59:00-05:00` */
export function isoWithOffset(at: Date, timeZone: string): string {
  const p = localParts(at, timeZone)
  const off = offsetMinutes(at, timeZone)
  const sign = off < 0 ? '-' : '+'
  const abs = Math.abs(off)
  return `${p.year}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
}

/** `2026-03-08T06:59:00.000000Z` */
export const isoUtcMicros = (at: Date) => at.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')

/** `HH:MM` local */
export function localHourMinute(at: Date, timeZone: string): string {
  const p = localParts(at, timeZone)
  return `${pad(p.hour)}:${pad(p.minute)}`
}

export interface WeeklySlotRule {
  dayOfWeek: number
  startTime: string
  durationMinutes: number
}

export interface Occurrence {
  start: Date
  end: Date
}

/** Occurrences of a weekly local-time slot that overlap [from, to), in start order. */
export function slotOccurrences(slot: WeeklySlotRule, timeZone: string, from: Date, to: Date): Occurrence[] {
  const [hh, mm] = slot.startTime.split(':').map(Number) as [number, number]
  const first = localParts(from.getTime() - (slot.durationMinutes + 1440) * 60_000, timeZone)
  const last = localParts(to, timeZone)
  const out: Occurrence[] = []
  for (let d = Date.UTC(first.year, first.month - 1, first.day); d <= Date.UTC(last.year, last.month - 1, last.day); d += 86_400_000) {
    const date = new Date(d)
    if (date.getUTCDay() !== slot.dayOfWeek) continue
    const start = zonedToInstant(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), hh, mm, timeZone)
    const end = new Date(start.getTime() + slot.durationMinutes * 60_000)
    if (end > from && start < to) out.push({ start, end })
  }
  return out
}

export const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']
