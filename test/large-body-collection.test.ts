import { createServer, type Server } from 'node:http'
import { PerformanceObserver, constants } from 'node:perf_hooks'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LARGE_BODY_BYTES, largeBodyCollection } from '../src/process/large-body-collection.js'

// The collection after the answer to a large body (src/process/large-body-collection.ts), on a
// real node:http server: the collector is counted instead of run.
describe('a full collection after the answer to a large body', () => {
  let collections = 0
  let server: Server
  let base: string
  beforeAll(async () => {
    const watch = largeBodyCollection(() => collections++)
    server = createServer((req, res) => {
      watch(req, res)
      let size = 0
      req.on('data', (chunk: Buffer) => (size += chunk.length))
      req.on('end', () => res.end(String(size)))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise((resolve) => server.close(resolve)))

  const post = async (bytes: number) => {
    const res = await fetch(base, { method: 'POST', body: 'x'.repeat(bytes) })
    expect(await res.text()).toBe(String(bytes))
    // The collection runs in the check phase after 'finish'.
    await new Promise((resolve) => setTimeout(resolve, 20))
  }

  it('collects once after each answer to a declared body of LARGE_BODY_BYTES or more', async () => {
    collections = 0
    await post(LARGE_BODY_BYTES)
    expect(collections).toBe(1)
    await post(LARGE_BODY_BYTES * 4)
    expect(collections).toBe(2)
  })

  it('leaves smaller bodies and GETs alone', async () => {
    collections = 0
    await post(LARGE_BODY_BYTES - 1)
    await post(300)
    await (await fetch(base)).text()
    expect(collections).toBe(0)
  })
})

describe('the collector the server uses', () => {
  it('runs V8’s full collection without leaving `gc` on the global', async () => {
    let majors = 0
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries())
        if ((entry as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++
    })
    observer.observe({ entryTypes: ['gc'] })
    const watch = largeBodyCollection()
    const server = createServer((req, res) => {
      watch(req, res)
      req.resume()
      req.on('end', () => res.end())
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = server.address() as AddressInfo
      await (await fetch(`http://127.0.0.1:${port}`, { method: 'POST', body: 'x'.repeat(LARGE_BODY_BYTES) })).text()
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(majors).toBeGreaterThanOrEqual(1)
      expect((globalThis as { gc?: unknown }).gc).toBeUndefined()
    } finally {
      observer.disconnect()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
