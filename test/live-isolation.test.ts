// Subscribers that stop reading: each is dropped on its own (logged once, at warn), and everyone
// else's stream goes on. Real HTTP on a real port; the stalled clients are real sockets that never read.
import { createServer, type Server } from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { randomUUID } from 'node:crypto'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { createApp } from '../src/app.js'
import { createListener } from '../src/process/http-listener.js'
import { TOPIC, type MembershipEvent } from '../src/live/topics.js'
import { MAX_PENDING_EVENTS } from '../src/live/subscriber-outbox.js'

const MEMBERSHIP = `subscription($g: ID!) { groupMembership(groupId: $g) { kind count contactIds } }`
const CHANGES = 2000

describe.each(targets)('stalled subscribers on $name', (target) => {
  const kit = useKit(target, { env: { SUBSCRIPTIONS_PER_KEY: '50', SUBSCRIPTIONS_PER_IP: '50' } })
  const logged: { level: number; msg: string; subscription?: string }[] = []
  let server: Server
  let base: string
  const stalled: Socket[] = []
  beforeAll(async () => {
    const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line)) })
    const deps = { ...kit.deps, logger }
    server = createServer(createListener(createApp({ deps, ready: kit.database.ready }), deps))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    for (const socket of stalled) socket.destroy()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  it(`five streams that never read are dropped; a reading one receives all ${CHANGES} changes`, async () => {
    const s = await kit.seed().account().group({ name: 'Watched' })
    const path = `/graphql?query=${encodeURIComponent(MEMBERSHIP)}&variables=${encodeURIComponent(JSON.stringify({ g: s.group.id }))}`
    const { port } = server.address() as AddressInfo
    for (let i = 0; i < 5; i++) {
      const socket = connect(port, '127.0.0.1')
      socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${s.key}\r\n\r\n`)
      socket.pause() // never reads: the server's writes back up into its queue
      stalled.push(socket)
    }
    const controller = new AbortController()
    const response = await fetch(`${base}${path}`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${s.key}` },
      signal: controller.signal,
    })
    expect(response.status).toBe(200)
    const counts: number[] = []
    const reading = (async () => {
      const decoder = new TextDecoder()
      let buffer = ''
      try {
        for await (const chunk of response.body!) {
          buffer += decoder.decode(chunk, { stream: true })
          let cut: number
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const data = buffer
              .slice(0, cut)
              .split('\n')
              .find((l) => l.startsWith('data:'))
            buffer = buffer.slice(cut + 2)
            if (data) counts.push(JSON.parse(data.slice(5)).data.groupMembership.count)
          }
        }
      } catch {
        // aborted at the end
      }
    })()
    // Each change names 100 contacts (about 4 KB on the wire), so the stalled sockets fill quickly.
    const contactIds = Array.from({ length: 100 }, () => randomUUID())
    // The stalled requests went out first; once the reader has a warm-up event, all six are subscribed.
    const warmUp: MembershipEvent = {
      accountId: s.account.id,
      groupId: s.group.id,
      kind: 'join',
      via: 'api',
      contactIds,
      count: 0,
      at: new Date().toISOString(),
    }
    await kit.deps.events.publish(TOPIC.groupMembership, warmUp)
    await expect.poll(() => counts.length, { timeout: 10_000 }).toBe(1)
    counts.length = 0
    for (let i = 1; i <= CHANGES; i++) {
      const event: MembershipEvent = {
        accountId: s.account.id,
        groupId: s.group.id,
        kind: 'join',
        via: 'api',
        contactIds,
        count: i,
        at: new Date().toISOString(),
      }
      await kit.deps.events.publish(TOPIC.groupMembership, event)
      // A viewer reads as changes come; the publisher goes no faster than one who reads.
      if (i % 100 === 0) await expect.poll(() => counts.length, { timeout: 10_000, interval: 5 }).toBe(i)
    }
    controller.abort()
    await reading
    expect(counts).toEqual(Array.from({ length: CHANGES }, (_, i) => i + 1))
    // Each stalled stream was dropped once, logged once at warn; nothing at error level.
    const drops = logged.filter((l) => l.msg === 'slow subscriber dropped')
    expect(drops.map((l) => [l.level, l.subscription])).toEqual(Array.from({ length: 5 }, () => [40, 'groupMembership']))
    expect(logged.filter((l) => l.level >= 50)).toEqual([])
    expect(MAX_PENDING_EVENTS).toBe(256)
  }, 120_000)
})
