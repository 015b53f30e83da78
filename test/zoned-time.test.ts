import { describe, expect, it } from 'vitest'
import { isoWithOffset, slotOccurrences, zonedToInstant } from '../src/channel/zoned-time.js'

const NY = 'America/New_York'
const BERLIN = 'Europe/Berlin'

describe('local wall times (RFC 5545)', () => {
  it.each([
    // zone, local date/time, expected instant
    [NY, [2026, 3, 7, 20, 0], '2026-03-08T01:00:00.000Z'],
    [NY, [2026, 3, 8, 1, 30], '2026-03-08T06:30:00.000Z'],
    // 02:30 does not exist on spring-forward day: moves forward by the gap to 03:30 EDT.
    [NY, [2026, 3, 8, 2, 30], '2026-03-08T07:30:00.000Z'],
    [NY, [2026, 3, 8, 3, 0], '2026-03-08T07:00:00.000Z'],
    // 01:30 happens twice on fall-back day: the first (EDT) is meant.
    [NY, [2026, 11, 1, 1, 30], '2026-11-01T05:30:00.000Z'],
    [NY, [2026, 11, 1, 2, 0], '2026-11-01T07:00:00.000Z'],
    [BERLIN, [2026, 3, 29, 2, 15], '2026-03-29T01:15:00.000Z'],
    [BERLIN, [2026, 3, 29, 3, 0], '2026-03-29T01:00:00.000Z'],
    [BERLIN, [2026, 10, 25, 2, 30], '2026-10-25T00:30:00.000Z'],
    [BERLIN, [2026, 10, 25, 3, 30], '2026-10-25T02:30:00.000Z'],
  ] as const)('%s %j -> %s', (zone, [y, mo, d, h, mi], expected) => {
    expect(zonedToInstant(y, mo, d, h, mi, zone).toISOString()).toBe(expected)
  })

  it('prints times with the zone offset in force', () => {
    expect(isoWithOffset(new Date('2026-03-08T06:30:00Z'), NY)).toBe('2026-03-08T01:30:00-05:00')
    expect(isoWithOffset(new Date('2026-03-08T07:30:00Z'), NY)).toBe('2026-03-08T03:30:00-04:00')
    expect(isoWithOffset(new Date('2026-10-25T00:30:00Z'), BERLIN)).toBe('2026-10-25T02:30:00+02:00')
    expect(isoWithOffset(new Date('2026-10-25T01:30:00Z'), BERLIN)).toBe('2026-10-25T02:30:00+01:00')
    expect(isoWithOffset(new Date('2026-01-01T00:00:00Z'), 'Asia/Kolkata')).toBe('2026-01-01T05:30:00+05:30')
  })
})

describe('weekly slot occurrences', () => {
  it('keeps local time across the spring-forward week (New York)', () => {
    const slot = { dayOfWeek: 0, startTime: '09:00', durationMinutes: 60 }
    const occ = slotOccurrences(slot, NY, new Date('2026-03-01T00:00:00Z'), new Date('2026-03-16T00:00:00Z'))
    expect(occ.map((o) => o.start.toISOString())).toEqual([
      '2026-03-01T14:00:00.000Z',
      '2026-03-08T13:00:00.000Z',
      '2026-03-15T13:00:00.000Z',
    ])
  })

  it('keeps local time across the fall-back week (Berlin), with absolute durations', () => {
    const slot = { dayOfWeek: 0, startTime: '02:30', durationMinutes: 60 }
    const occ = slotOccurrences(slot, BERLIN, new Date('2026-10-18T00:00:00Z'), new Date('2026-10-26T00:00:00Z'))
    expect(occ.map((o) => [o.start.toISOString(), o.end.toISOString()])).toEqual([
      ['2026-10-18T00:30:00.000Z', '2026-10-18T01:30:00.000Z'],
      ['2026-10-25T00:30:00.000Z', '2026-10-25T01:30:00.000Z'],
    ])
  })

  it('moves a slot in the spring-forward gap forward by the gap (Berlin)', () => {
    const slot = { dayOfWeek: 0, startTime: '02:30', durationMinutes: 30 }
    const [occ] = slotOccurrences(slot, BERLIN, new Date('2026-03-29T00:00:00Z'), new Date('2026-03-30T00:00:00Z'))
    expect(isoWithOffset(occ!.start, BERLIN)).toBe('2026-03-29T03:30:00+02:00')
  })

  it('finds a slot crossing midnight from the day after', () => {
    const slot = { dayOfWeek: 6, startTime: '23:30', durationMinutes: 90 }
    const occ = slotOccurrences(slot, NY, new Date('2026-06-07T04:00:00Z'), new Date('2026-06-07T04:01:00Z'))
    expect(occ.map((o) => isoWithOffset(o.start, NY))).toEqual(['2026-06-06T23:30:00-04:00'])
    expect(isoWithOffset(occ[0]!.end, NY)).toBe('2026-06-07T01:00:00-04:00')
  })
})
