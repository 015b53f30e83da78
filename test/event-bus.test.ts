import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { createServer, connect, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { createPubSub } from 'graphql-yoga'
import { targets } from './kit/databases.js'
import { TestKit, useKit } from './kit/kit.js'
import { RESYNC, type EventBus } from '../src/events/event-bus.js'
import { MAX_ENVELOPE_BYTES } from '../src/events/event-envelope.js'
import { reconnectDelayMs } from '../src/events/reconnect-delay.js'
import { channelNameFor } from '../src/events/channel-name.js'
import { createPostgresBus, type PostgresBus } from '../src/events/postgres-bus.js'
import { createLogger } from '../src/core/logger.js'
import { parseDatabaseUrl } from '../src/db/connection-url.js'

/** The next payload of `topic` on `bus`, or a rejection after `ms`. */
function next(bus: EventBus, topic: string, ms = 5000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off()
      reject(new Error(`no "${topic}" event within ${ms} ms`))
    }, ms)
    const off = bus.subscribe(topic, (payload) => {
      clearTimeout(timer)
      off()
      resolve(payload)
    })
  })
}

/** Everything `topic` delivers on `bus` until the returned stop() is called. */
function record(bus: EventBus, topic: string) {
  const seen: unknown[] = []
  const stop = bus.subscribe(topic, (payload) => seen.push(payload))
  return { seen, stop }
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe.each(targets)('event bus on $name', (target) => {
  const kit = useKit(target)

  it('delivers to local subscribers as JSON (what another instance would see) until they unsubscribe', async () => {
    const bus = kit.deps.events
    await bus.ready()
    const { seen, stop } = record(bus, 'test.local')
    await bus.publish('test.local', { n: 1, at: new Date('2026-01-02T03:04:05Z') })
    stop()
    await bus.publish('test.local', { n: 2 })
    await settle(100)
    expect(seen).toEqual([{ n: 1, at: '2026-01-02T03:04:05.000Z' }])
  })

  it('refuses a payload above the NOTIFY bound and the reserved resync topic, delivering nothing', async () => {
    const bus = kit.deps.events
    const { seen, stop } = record(bus, 'test.big')
    await expect(bus.publish('test.big', { text: 'x'.repeat(MAX_ENVELOPE_BYTES) })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' })
    await expect(bus.publish(RESYNC, {})).rejects.toMatchObject({ code: 'VALIDATION_FAILED' })
    // Just under the bound is fine (multi-byte characters counted as bytes).
    await bus.publish('test.big', { text: 'é'.repeat(3800) })
    stop()
    expect(seen).toHaveLength(1)
  })

  it('a listener that throws does not stop the others', async () => {
    const bus = kit.deps.events
    const offBad = bus.subscribe('test.throw', () => {
      throw new Error('listener bug')
    })
    const { seen, stop } = record(bus, 'test.throw')
    await bus.publish('test.throw', 'ok')
    offBad()
    stop()
    expect(seen).toEqual(['ok'])
  })

  it('serves as the eventTarget of Yoga createPubSub on one instance', async () => {
    const pubSub = createPubSub<{ 'inbound:sms': [id: string, payload: { text: string }] }>({ eventTarget: kit.deps.events.eventTarget })
    const iterator = pubSub.subscribe('inbound:sms', 'group-1')[Symbol.asyncIterator]()
    const first = iterator.next()
    pubSub.publish('inbound:sms', 'group-2', { text: 'other group' })
    pubSub.publish('inbound:sms', 'group-1', { text: 'JOIN' })
    expect(await first).toEqual({ done: false, value: { text: 'JOIN' } })
    await iterator.return?.()
  })
})

describe('reconnect delay', () => {
  it('doubles from 100 ms to 5 s with at most 20 % jitter', () => {
    expect([0, 1, 2, 3, 5, 6, 20].map((n) => reconnectDelayMs(n, () => 0))).toEqual([100, 200, 400, 800, 3200, 5000, 5000])
    expect(reconnectDelayMs(0, () => 1)).toBe(120)
  })
})

const postgres = targets.find((t) => t.name === 'postgresql')

describe.runIf(postgres)('event bus across instances on PostgreSQL', () => {
  const a = useKit(postgres!)
  const b = new TestKit(postgres!)
  const elsewhere = useKit(postgres!)
  let admin: pg.Client
  beforeAll(async () => {
    await b.attach(a.url)
    admin = new pg.Client({ connectionString: parseDatabaseUrl(a.url).connectionString })
    await admin.connect()
    await Promise.all([a.deps.events.ready(), b.deps.events.ready(), elsewhere.deps.events.ready()])
  })
  afterAll(async () => {
    await b.detach()
    await admin?.end()
  })

  it('delivers an event published on A to B once, and to A itself once, not to another schema', async () => {
    const onA = record(a.deps.events, 'test.cross')
    const onElsewhere = record(elsewhere.deps.events, 'test.cross')
    const received = next(b.deps.events, 'test.cross')
    await a.deps.events.publish('test.cross', { hello: 'B' })
    expect(await received).toEqual({ hello: 'B' })
    await settle(200)
    onA.stop()
    onElsewhere.stop()
    expect(onA.seen).toEqual([{ hello: 'B' }])
    expect(onElsewhere.seen).toEqual([])
  })

  it('carries Yoga createPubSub events from instance A to a subscriber iterating on instance B', async () => {
    type Topics = { 'sms:received': [groupId: string, payload: { from: string; text: string }] }
    const pubSubA = createPubSub<Topics>({ eventTarget: a.deps.events.eventTarget })
    const pubSubB = createPubSub<Topics>({ eventTarget: b.deps.events.eventTarget })
    const iterator = pubSubB.subscribe('sms:received', 'g1')[Symbol.asyncIterator]()
    const first = iterator.next()
    pubSubA.publish('sms:received', 'g1', { from: '+254712345678', text: 'JOIN' })
    expect(await first).toEqual({ done: false, value: { from: '+254712345678', text: 'JOIN' } })
    await iterator.return?.()
  })

  it('listens on one channel per schema, on one connection named gateway-event-bus', async () => {
    const pid = (b.deps.events as PostgresBus).listenerPid()
    const { rows } = await admin.query(`SELECT application_name, query FROM pg_stat_activity WHERE pid = $1`, [pid])
    expect(rows).toEqual([{ application_name: 'gateway-event-bus', query: `LISTEN "${channelNameFor(parseDatabaseUrl(a.url).schema!)}"` }])
    expect(channelNameFor(parseDatabaseUrl(a.url).schema!)).not.toBe(channelNameFor(parseDatabaseUrl(elsewhere.url).schema!))
  })

  it('reconnects after its listening connection is killed, raises resync, and receives again', async () => {
    const bus = b.deps.events as PostgresBus
    const pid = bus.listenerPid()
    expect(pid).toBeGreaterThan(0)
    const resync = next(bus, RESYNC)
    const started = performance.now()
    await admin.query('SELECT pg_terminate_backend($1)', [pid])
    expect(await resync).toEqual({ reason: 'reconnected' })
    const tookMs = performance.now() - started
    expect(bus.isLive()).toBe(true)
    expect(bus.listenerPid()).not.toBe(pid)
    expect(tookMs).toBeLessThan(3000)
    const received = next(bus, 'test.after')
    await a.deps.events.publish('test.after', 1)
    expect(await received).toBe(1)
  })

  it('treats a listening connection that stops answering (no error, no close) as dropped', async () => {
    // A loopback relay to PostgreSQL whose open connections can be frozen: bytes are held, nothing closes.
    const upstream = new URL(parseDatabaseUrl(a.url).connectionString!)
    const target = { port: Number(upstream.port || 5432), host: upstream.hostname }
    const frozen = new Set<Socket>()
    const open = new Set<Socket>()
    const relay = createServer((client) => {
      const server = connect(target.port, target.host)
      open.add(client).add(server)
      for (const [from, to] of [
        [client, server],
        [server, client],
      ] as const) {
        from.on('data', (chunk) => {
          if (!frozen.has(from)) to.write(chunk)
        })
        from.on('error', () => to.destroy())
        from.on('close', () => to.destroy())
      }
    })
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve))
    upstream.host = `127.0.0.1:${(relay.address() as AddressInfo).port}`
    const bus = createPostgresBus({
      connectionString: upstream.toString(),
      channel: channelNameFor(parseDatabaseUrl(a.url).schema!),
      db: a.db,
      logger: createLogger('silent'),
      heartbeatMs: 300,
    })
    try {
      await bus.ready()
      const pid = bus.listenerPid()
      const resync = next(bus, RESYNC)
      for (const socket of open) frozen.add(socket)
      expect(await resync).toEqual({ reason: 'reconnected' })
      expect(bus.listenerPid()).not.toBe(pid)
      const received = next(bus, 'test.after-freeze')
      await a.deps.events.publish('test.after-freeze', 'heard')
      expect(await received).toBe('heard')
    } finally {
      await bus.close()
      for (const socket of open) socket.destroy()
      relay.close()
    }
  })

  it('closes its listening connection with the database', async () => {
    const c = await new TestKit(postgres!).attach(a.url)
    await c.deps.events.ready()
    const pid = (c.deps.events as PostgresBus).listenerPid()
    await c.detach()
    expect(c.deps.events.isLive()).toBe(false)
    await expect(c.deps.events.publish('test.closed', 1)).rejects.toThrow('event bus closed')
    for (let i = 0; i < 50; i++) {
      const { rowCount } = await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])
      if (rowCount === 0) return
      await settle(20)
    }
    throw new Error(`listening backend ${pid} still open after close`)
  })
})
