// src/db/time-ordered-id.ts: UUID version 7, strictly increasing within a process.
import { describe, expect, it } from 'vitest'
import { timeOrderedId } from '../src/db/time-ordered-id.js'

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const timeOf = (id: string) => parseInt(id.slice(0, 8) + id.slice(9, 13), 16)
const counterOf = (id: string) => parseInt(id.slice(15, 18), 16)

describe('timeOrderedId', () => {
  it('is a UUID version 7 (RFC 9562 variant) carrying the millisecond it was made in', () => {
    const before = Date.now()
    const id = timeOrderedId()
    expect(id).toMatch(V7)
    expect(timeOf(id)).toBeGreaterThanOrEqual(before)
    expect(timeOf(id)).toBeLessThanOrEqual(Date.now())
    const later = Date.now() + 60_000
    expect(timeOf(timeOrderedId(later))).toBe(later)
  })

  it('increases strictly within one millisecond, past the 12-bit counter, by moving the time on', () => {
    const at = Date.now() + 120_000
    const ids = Array.from({ length: 20_000 }, () => timeOrderedId(at))
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) expect(id).toMatch(V7)
    // The counter starts at a random value under 2,048; the first millisecond holds the ids up to
    // 4,095, each next one 4,096 (its counter from 0).
    expect(timeOf(ids[0]!)).toBe(at)
    const start = counterOf(ids[0]!)
    expect(start).toBeLessThan(2048)
    const moved = Math.ceil((ids.length - (4096 - start)) / 4096)
    expect(timeOf(ids.at(-1)!) - at).toBe(moved)
    expect(counterOf(ids.at(-1)!)).toBe((ids.length - (4096 - start) - 1) % 4096)
  })

  it('keeps increasing when the clock steps back', () => {
    const at = Date.now() + 180_000
    const first = timeOrderedId(at)
    const second = timeOrderedId(at - 5_000)
    expect(second > first).toBe(true)
    expect(timeOf(second)).toBe(at)
  })

  it('draws the last 62 bits at random: ids of one millisecond differ beyond the counter', () => {
    const at = Date.now() + 240_000
    const tails = new Set(Array.from({ length: 1000 }, () => timeOrderedId(at).slice(19)))
    expect(tails.size).toBe(1000)
  })
})
