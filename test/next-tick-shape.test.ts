import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { debugPrintOf } from './kit/v8-print.js'
import { keptTickEntry } from '../src/process/next-tick-shape.js'

// What V8 remembers about process.nextTick's queue-entry literal after full collections that run
// while no entry is alive (as V8's memory reducer runs them when the process goes quiet). A child
// process sets the feedback with many ticks, collects six times from a timer, and ticks again, three
// times over (one such round loses the maps in about 97 runs of 100 on node 20 and 22; three rounds
// made the control fail in none of 120), and prints V8's own description of nextTick (its feedback
// slots) with %DebugPrint.
function literalFeedback(withModule: boolean): string[] {
  const script = `
    import v8 from 'node:v8'
    v8.setFlagsFromString('--allow-natives-syntax')
    if (${withModule}) await import('./src/process/next-tick-shape.ts')
    const spin = (n) => new Promise((resolve) => {
      let left = n
      const step = () => (--left === 0 ? resolve() : process.nextTick(step))
      process.nextTick(step)
    })
    for (let round = 0; round < 3; round++) {
      await spin(10_000)
      await new Promise((resolve) => setTimeout(resolve, 10))
      for (let i = 0; i < 6; i++) globalThis.gc()
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    await spin(10_000)
    new Function('f', '%DebugPrint(f)')(process.nextTick)`
  const out = debugPrintOf(script)
  return [...out.matchAll(/slot #\d+ DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]!)
}

describe('process.nextTick’s queue-entry shape (src/process/next-tick-shape.ts)', () => {
  it('is imported by the server’s entry before anything else runs but the V8 settings', () => {
    const imports = readFileSync(new URL('../src/process/server.ts', import.meta.url), 'utf8').match(/^import .*$/gm)!
    expect(imports.slice(0, 2)).toEqual(["import './heap-settings.js'", "import './next-tick-shape.js'"])
  })

  it('keeps one of nextTick’s own queue entries', async () => {
    await new Promise((resolve) => setImmediate(resolve))
    const entry = keptTickEntry() as Record<PropertyKey, unknown>
    expect(typeof entry.callback).toBe('function')
    expect(Object.getOwnPropertySymbols(entry).map(String)).toEqual(
      expect.arrayContaining(['Symbol(async_id_symbol)', 'Symbol(trigger_async_id_symbol)']),
    )
  })

  it('without it, collections while no entry is alive leave the literal’s definitions megamorphic', () => {
    // The control: if this node no longer loses the feedback, the module can go.
    const states = literalFeedback(false)
    expect(states.length).toBeGreaterThanOrEqual(4)
    expect(states).toContain('MEGAMORPHIC')
  })

  it('with it, the same collections leave every definition monomorphic', () => {
    const states = literalFeedback(true)
    expect(states.length).toBeGreaterThanOrEqual(4)
    expect(states.every((state) => state === 'MONOMORPHIC')).toBe(true)
  })
})
