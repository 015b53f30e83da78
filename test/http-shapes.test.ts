import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { debugPrintOf } from './kit/v8-print.js'

/** What V8 says of an object: the size of its instances (24 bytes: no in-object field) and its mode. */
interface Shape {
  size: number
  mode: 'Fast' | 'Dictionary'
}

// The start-up of a server whose first requests come one at a time with full collections between
// them (a load balancer's readiness probes while the start-up allocates): a child process serves
// ten requests on one kept-alive connection, collecting after each once its response is gone, then
// an eleventh, and prints V8's own description (%DebugPrint) of that last request and response.
function lastExchange(withModule: boolean): { res: Shape; req: Shape } {
  const script = `
    import v8 from 'node:v8'
    v8.setFlagsFromString('--allow-natives-syntax')
    if (${withModule}) await import('./src/process/http-shapes.ts')
    const http = await import('node:http')
    let last
    const server = http.createServer((req, res) => {
      last = [res, req]
      res.end('ok')
    })
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    const get = () => new Promise((resolve, reject) =>
      http.get({ host: '127.0.0.1', port: server.address().port, agent }, (res) => res.resume().on('end', resolve)).on('error', reject))
    for (let i = 0; i < 10; i++) {
      await get()
      last = undefined
      await new Promise((resolve) => setImmediate(resolve))
      globalThis.gc()
    }
    await get()
    const print = new Function('o', '%DebugPrint(o)')
    print(last[0])
    print(last[1])
    agent.destroy()
    server.close()`
  const out = debugPrintOf(script)
  // Each object's own line: ` - map: 0x… <Map[376](HOLEY_ELEMENTS)> [FastProperties]`.
  const shapes = [...out.matchAll(/^ - map: \S+ <Map\[(\d+)\]\(\w+\)> \[(Fast|Dictionary)Properties\]/gm)].map((m): Shape => ({
    size: Number(m[1]),
    mode: m[2] as Shape['mode'],
  }))
  expect(shapes).toHaveLength(2)
  return { res: shapes[0]!, req: shapes[1]! }
}

/** A pointer's size: V8 on x86-64 and arm64 without pointer compression, as node builds it. */
const FIELD = 8
const HEADER = 24

describe('node’s request and response objects (src/process/http-shapes.ts)', () => {
  it('is imported by the server’s entry before anything else runs but the V8 settings and nextTick’s shape', () => {
    const imports = readFileSync(new URL('../src/process/server.ts', import.meta.url), 'utf8').match(/^import .*$/gm)!
    expect(imports.slice(0, 3)).toEqual(["import './heap-settings.js'", "import './next-tick-shape.js'", "import './http-shapes.js'"])
  })

  it('without it, a start-up whose first responses die before the next leaves every response a dictionary', () => {
    // The control: if this node no longer sizes them so, the module can go.
    const { res, req } = lastExchange(false)
    expect(res).toEqual({ size: HEADER, mode: 'Dictionary' })
    expect(req.size).toBe(HEADER)
  })

  it('with it, the same start-up keeps their fields in the objects and the response fast', () => {
    const { res, req } = lastExchange(true)
    expect(res.mode).toBe('Fast')
    // 43 of a response's 44 properties and 26 of a request's 27 (node 20 and 22).
    expect(res.size).toBeGreaterThanOrEqual(HEADER + 43 * FIELD)
    expect(req.size).toBeGreaterThanOrEqual(HEADER + 26 * FIELD)
  })
})
