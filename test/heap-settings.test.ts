import { describe, expect, it } from 'vitest'
import { debugPrintOf } from './kit/v8-print.js'

// What V8 does with a property read that has seen six hidden classes, in a child process, with and
// without the service's V8 settings (src/process/heap-settings.ts), read from the function's
// feedback slot with %DebugPrint.
function readFeedback(withSettings: boolean): string[] {
  const script = `
    import v8 from 'node:v8'
    v8.setFlagsFromString('--allow-natives-syntax')
    if (${withSettings}) await import('./src/process/heap-settings.ts')
    function read(o) { return o.x }
    const shapes = [{ x: 1 }, { x: 1, a: 1 }, { x: 1, b: 1 }, { x: 1, c: 1 }, { x: 1, d: 1 }, { x: 1, e: 1 }]
    for (let i = 0; i < 1000; i++) for (const shape of shapes) read(shape)
    new Function('f', '%DebugPrint(f)')(read)`
  return [...debugPrintOf(script).matchAll(/slot #\d+ LoadProperty (\w+)/g)].map((m) => m[1]!)
}

describe('V8 settings of the service process (src/process/heap-settings.ts)', () => {
  it('without them, a read that has seen six shapes goes megamorphic (V8’s limit is four)', () => {
    // The control: if this node keeps more shapes by default, the setting can go.
    expect(readFeedback(false)).toEqual(['MEGAMORPHIC'])
  })

  it('with them, the same read stays polymorphic', () => {
    expect(readFeedback(true)).toEqual(['POLYMORPHIC'])
  })
})
