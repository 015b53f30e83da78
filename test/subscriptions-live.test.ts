import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomUUID } from 'node:crypto'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { TestKit, useKit } from './kit/kit.js'
import { spawnServer } from './kit/server-process.js'
import { mobile } from './kit/seed.js'
import { createListener } from '../src/process/http-listener.js'
import { runWorkerTick } from '../src/process/worker.js'
import { graphql } from '../src/graphql/typed-documents.js'

interface SseEvent {
  event: string
  data: any
}

/**
 * A real SSE client: GET /graphql?query=… with Accept: text/event-stream, the body read as a
 * stream and parsed into `event:`/`data:` blocks; `:` comment lines are keep-alive pings.
 */
async function subscribe(
  fetcher: (request: Request) => Promise<Response>,
  base: string,
  query: string,
  variables: Record<string, unknown> = {},
  key?: string,
) {
  const url = new URL('/graphql', base)
  url.searchParams.set('query', query)
  url.searchParams.set('variables', JSON.stringify(variables))
  const response = await fetcher(
    new Request(url, { headers: { accept: 'text/event-stream', ...(key ? { authorization: `Bearer ${key}` } : {}) } }),
  )
  const events: SseEvent[] = []
  const stream = {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    contentType: response.headers.get('content-type') ?? '',
    events,
    pings: 0,
    ended: false,
    body: '',
  }
  let wake: (() => void) | null = null
  const notify = () => {
    wake?.()
    wake = null
  }
  if (!stream.contentType.includes('text/event-stream')) {
    stream.body = await response.text()
    stream.ended = true
  }
  const reader = stream.ended ? null : response.body!.getReader()
  const reading = (async () => {
    if (!reader) return
    const decoder = new TextDecoder()
    let buffer = ''
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        buffer += decoder.decode(value, { stream: true })
        let cut: number
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut)
          buffer = buffer.slice(cut + 2)
          const lines = block.split('\n')
          if (lines.every((l) => l.startsWith(':'))) stream.pings++
          const event = lines
            .find((l) => l.startsWith('event:'))
            ?.slice(6)
            .trim()
          const data = lines
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trim())
            .join('\n')
          if (event) events.push({ event, data: data ? JSON.parse(data) : null })
          notify()
        }
      }
    } catch {
      // cancelled by close()
    }
    stream.ended = true
    notify()
  })()
  /** Waits until `events` holds `count` events of type next (or the stream ended), at most `ms`. */
  async function next(count: number, ms = 8000) {
    const deadline = Date.now() + ms
    while (events.filter((e) => e.event === 'next').length < count && !stream.ended && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        wake = resolve
        setTimeout(resolve, Math.max(1, deadline - Date.now()))
      })
    }
    return events.filter((e) => e.event === 'next').map((e) => e.data)
  }
  async function waitFor(predicate: () => boolean, ms = 8000) {
    const deadline = Date.now() + ms
    while (!predicate() && !stream.ended && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        wake = resolve
        setTimeout(resolve, Math.max(1, deadline - Date.now()))
      })
    }
    return predicate()
  }
  return Object.assign(stream, {
    next,
    waitFor,
    /** The stream is open once the first ping (Yoga's opening comment) arrived. */
    opened: () => waitFor(() => stream.pings > 0),
    async close() {
      await reader?.cancel().catch(() => undefined)
      await reading
    },
  })
}

async function serve(kit: TestKit): Promise<{ server: Server; url: string }> {
  const server = createServer(createListener(kit.app, kit.deps))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

/** Credit for a few messages (accounts start with none: sendSms would answer NOCREDT). */
async function fund(kit: TestKit, accountId: string) {
  await kit.db.account.update({ where: { id: accountId }, data: { creditBalance: 100_000n, pricePerPage: 10_000n } })
}

const DELIVERY = `subscription($id: ID) { deliveryReports(messageId: $id) { id to status done doneDate creditsDeducted sandbox } }`
const SEND = `mutation($to: String!) { sendSms(input: { to: $to, message: "hello" }) { id status } }`
const MEMBERSHIP = `subscription($g: ID!) { groupMembership(groupId: $g) { groupId kind via count contactIds } }`
const NOW = `subscription($c: String!) { nowPlaying(channel: $c) { channelName isLive estimatedEndAt currentVideo { name endTime } } }`

describe.each(targets)('live subscriptions over SSE on $name', (target) => {
  const kit = useKit(target, {
    env: { SANDBOX_DELIVERY_DELAY_MS: '50', SUBSCRIPTIONS_PER_KEY: '3', SUBSCRIPTION_KEEPALIVE_MS: '100', CHANNEL_CACHE_MS: '60000' },
  })
  const inProcess = (request: Request) => kit.app.fetch(request)
  const open: { close(): Promise<void> }[] = []
  const sub = async (query: string, variables: Record<string, unknown>, key?: string) => {
    const s = await subscribe(inProcess, 'http://localhost', query, variables, key)
    open.push(s)
    return s
  }
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()))
  })

  it('deliveryReports: SENT then DELIVRD for the account, nothing for another account', async () => {
    const a = await kit.seed().account('Alpha')
    const b = await kit.seed().account('Beta')
    await fund(kit, a.account.id)
    await fund(kit, b.account.id)
    const mine = await sub(DELIVERY, {}, a.key)
    const theirs = await sub(DELIVERY, {}, b.key)
    expect(mine.status).toBe(200)
    expect(mine.contentType).toContain('text/event-stream')
    expect(await mine.opened()).toBe(true)
    expect(await theirs.opened()).toBe(true)
    const sent = (await kit.gql(SEND, { to: mobile() }, a.key)).sendSms
    expect(sent.status).toBe('SENT')
    await new Promise((r) => setTimeout(r, 80))
    await runWorkerTick(kit.deps, 'live-test')
    const events = await mine.next(2)
    expect(events.map((e) => e.data.deliveryReports.status)).toEqual(['SENT', 'DELIVRD'])
    expect(events[0].data.deliveryReports).toMatchObject({ id: sent.id, done: false, doneDate: null, sandbox: true })
    expect(events[1].data.deliveryReports).toMatchObject({ id: sent.id, done: true, doneDate: expect.any(String) })
    // B's stream is alive (pings) and saw none of it.
    await theirs.waitFor(() => theirs.pings >= 3)
    expect(theirs.events.filter((e) => e.event === 'next')).toEqual([])
  })

  it('deliveryReports(messageId) narrows to one message; another account’s message is NOT_FOUND', async () => {
    const a = await kit.seed().account()
    const b = await kit.seed().account()
    await fund(kit, a.account.id)
    const first = (await kit.gql(SEND, { to: mobile() }, a.key)).sendSms
    const one = await sub(DELIVERY, { id: first.id }, a.key)
    expect(await one.opened()).toBe(true)
    await kit.gql(SEND, { to: mobile() }, a.key)
    await new Promise((r) => setTimeout(r, 80))
    await runWorkerTick(kit.deps, 'live-test')
    const events = await one.next(1)
    expect(events.map((e) => e.data.deliveryReports.id)).toEqual([first.id])
    await one.waitFor(() => false, 300)
    expect(one.events.filter((e) => e.event === 'next').map((e) => e.data.data.deliveryReports.id)).toEqual([first.id])

    const foreign = await sub(DELIVERY, { id: first.id }, b.key)
    const [refusal] = await foreign.next(1)
    expect(refusal.errors[0].extensions.code).toBe('NOT_FOUND')
    expect(refusal.data ?? null).toBeNull()
  })

  it('deliveryReports without a key is UNAUTHENTICATED; groupMembership on another account’s group is NOT_FOUND', async () => {
    const anonymous = await sub(DELIVERY, {})
    const [refusal] = await anonymous.next(1)
    expect(refusal.errors[0].extensions.code).toBe('UNAUTHENTICATED')
    await anonymous.waitFor(() => anonymous.ended, 2000)
    expect(anonymous.ended).toBe(true)

    const owner = await kit.seed().account().group()
    const stranger = await kit.seed().account()
    const foreign = await sub(MEMBERSHIP, { g: owner.group.id }, stranger.key)
    const [notFound] = await foreign.next(1)
    expect(notFound.errors[0].extensions.code).toBe('NOT_FOUND')
  })

  it('groupMembership: an opt-in by SMS and a delist arrive; deleting the group ends the stream', async () => {
    const s = await kit.seed().account().group({ subscribable: true, subscriptionSim: '22123', optinCode: 'JOIN', optoutCode: 'STOP' })
    const stream = await sub(MEMBERSHIP, { g: s.group.id }, s.key)
    expect(await stream.opened()).toBe(true)
    const from = mobile()
    const inbound = await kit.gql(
      graphql(`mutation($i: InboundSmsInput!) { receiveSms(input: $i) { action contact { id: uuid } } }`),
      { i: { to: '22123', from, text: 'join' } },
      s.key,
    )
    expect(inbound.receiveSms.action).toBe('SUBSCRIBED')
    const contactId = inbound.receiveSms.contact?.id
    await kit.gql(
      graphql(`mutation($g: ID!, $m: [String!]!) { delistContacts(groupId: $g, mobiles: $m) { delisted } }`),
      { g: s.group.id, m: [from] },
      s.key,
    )
    // Adding a contact already on the group is no join; adding a new one is.
    const other = mobile()
    await kit.gql(
      graphql(`mutation($g: ID!, $c: [SaveContactInput!]!) { addContactsToGroup(groupId: $g, contacts: $c) { enlisted } }`),
      { g: s.group.id, c: [{ mobile: other, firstName: 'Zed' }] },
      s.key,
    )
    await kit.gql(
      graphql(`mutation($g: ID!, $c: [SaveContactInput!]!) { addContactsToGroup(groupId: $g, contacts: $c) { enlisted } }`),
      { g: s.group.id, c: [{ mobile: other, firstName: 'Zed' }] },
      s.key,
    )
    await kit.gql(graphql(`mutation($id: ID!) { deleteGroup(id: $id) { deletedId } }`), { id: s.group.id }, s.key)
    const events = (await stream.next(4)).map((e) => e.data.groupMembership)
    expect(events).toEqual([
      { groupId: s.group.id, kind: 'JOIN', via: 'SMS', count: 1, contactIds: [contactId] },
      { groupId: s.group.id, kind: 'LEAVE', via: 'API', count: 1, contactIds: [contactId] },
      { groupId: s.group.id, kind: 'JOIN', via: 'API', count: 1, contactIds: [expect.any(String)] },
      { groupId: s.group.id, kind: 'GROUP_DELETED', via: 'API', count: 0, contactIds: [] },
    ])
    await stream.waitFor(() => stream.ended, 3000)
    expect(stream.ended).toBe(true)
    expect(stream.events.at(-1)?.event).toBe('complete')
  })

  it('an autoresponse inside the inbound SMS transaction is published after that transaction commits; a rolled-back opt-in publishes nothing', async () => {
    const s = await kit
      .seed()
      .account()
      .group({ subscribable: true, subscriptionSim: '22124', optinCode: 'JOIN', optoutCode: 'STOP', subscriptionAutoresponse: 'Welcome' })
    await fund(kit, s.account.id)
    const reports = await sub(DELIVERY, {}, s.key)
    const members = await sub(MEMBERSHIP, { g: s.group.id }, s.key)
    expect(await reports.opened()).toBe(true)
    expect(await members.opened()).toBe(true)
    const joined = await kit.gql(
      graphql(`mutation($i: InboundSmsInput!) { receiveSms(input: $i) { autoresponse { id } } }`),
      { i: { to: '22124', from: mobile(), text: 'JOIN' } },
      s.key,
    )
    // The autoresponse's SENT arrives, read from the committed message.
    const [sent] = await reports.next(1)
    expect(sent.data.deliveryReports).toMatchObject({ id: joined.receiveSms.autoresponse?.id, status: 'SENT' })
    expect((await members.next(1))[0].data.groupMembership.kind).toBe('JOIN')

    // The autoresponse of this group cannot be sent (its SIM is no sender id): the whole opt-in rolls back.
    const bad = await kit.seed().account().group({
      subscribable: true,
      subscriptionSim: 'KE_22385',
      optinCode: 'JOIN',
      optoutCode: 'STOP',
      subscriptionAutoresponse: 'Welcome',
    })
    await fund(kit, bad.account.id)
    const badMembers = await sub(MEMBERSHIP, { g: bad.group.id }, bad.key)
    const badReports = await sub(DELIVERY, {}, bad.key)
    expect(await badMembers.opened()).toBe(true)
    expect(await badReports.opened()).toBe(true)
    const refused = await kit.graphql(
      graphql(`mutation($i: InboundSmsInput!) { receiveSms(input: $i) { action } }`),
      { i: { to: 'KE_22385', from: mobile(), text: 'JOIN' } },
      bad.key,
    )
    expect(refused.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED')
    await badMembers.waitFor(() => false, 500)
    expect(badMembers.events.filter((e) => e.event === 'next')).toEqual([])
    expect(badReports.events.filter((e) => e.event === 'next')).toEqual([])
  })

  // How soon the pushes arrive is measured by `npm run bench -- live-fanout`; here, that they come
  // from the mutation's event and the boundary's timer (nothing else would send them).
  it('nowPlaying: at once, on a management mutation, and at the slot boundary (real clock)', async () => {
    const op = await kit.seed().account('Operator')
    const now = Date.now()
    const slug = `live-${randomUUID().slice(0, 8)}`
    const document = JSON.stringify({
      channel: { slug, name: 'Live TV', timezone: 'UTC' },
      videos: [{ ref: 'a', name: 'Alpha', duration_seconds: 3600 }],
      scheduled_broadcasts: [{ video: 'a', starts_at: new Date(now - 60_000).toISOString(), ends_at: new Date(now + 2500).toISOString() }],
    })
    await kit.gql(graphql(`mutation($d: String!) { importChannel(document: $d) { id } }`), { d: document }, op.key)
    // Warm the channel cache (60 s here): the subscription must not be served from it.
    await kit.gql(graphql(`query($c: String!) { channel(id: $c) { nowPlaying { currentVideo { name } } } }`), { c: slug })
    const watchers = [await sub(NOW, { c: slug }), await sub(NOW, { c: slug })]
    const [first] = await watchers[0]!.next(1, 3000)
    expect(first.data.nowPlaying.currentVideo.name).toBe('Alpha')
    expect((await watchers[1]!.next(1, 3000))[0].data.nowPlaying.currentVideo.name).toBe('Alpha')

    // The broadcast ends at its estimatedEndAt: pushed then, without any request.
    const [, ended] = await watchers[0]!.next(2)
    const endedAt = Date.now()
    expect(ended.data.nowPlaying.currentVideo).toBeNull()
    // Not before the end it announced (the boundary's timer runs 20 ms after it).
    expect(endedAt).toBeGreaterThanOrEqual(new Date(first.data.nowPlaying.estimatedEndAt).getTime())

    await kit.gql(graphql(`mutation($c: String!) { startLiveBroadcast(channel: $c, title: "Breaking") { id } }`), { c: slug }, op.key)
    const events = await watchers[1]!.next(3)
    expect(events[2].data.nowPlaying).toMatchObject({ isLive: true, currentVideo: { name: 'Breaking', endTime: null } })
  }, 30_000)

  it('limits: the (N+1)th subscription of a key is RATE_LIMITED until one closes; keep-alive pings arrive', async () => {
    const a = await kit.seed().account()
    const streams = [await sub(DELIVERY, {}, a.key), await sub(DELIVERY, {}, a.key), await sub(DELIVERY, {}, a.key)]
    for (const s of streams) expect(await s.opened()).toBe(true)
    const refused = await sub(DELIVERY, {}, a.key)
    expect(refused.status).toBe(429)
    expect(refused.retryAfter).toBe('1')
    expect(JSON.parse(refused.body).errors[0].extensions.code).toBe('RATE_LIMITED')
    // Keep-alive every 100 ms here (SUBSCRIPTION_KEEPALIVE_MS); Yoga's own comment comes every 300 ms in tests.
    const before = streams[0]!.pings
    await streams[0]!.waitFor(() => false, 1000)
    expect(streams[0]!.pings - before).toBeGreaterThanOrEqual(6)
    await streams[0]!.close()
    const again = await sub(DELIVERY, {}, a.key)
    expect(again.status).toBe(200)
    expect(await again.opened()).toBe(true)
  })

  it('closeStreams ends every open stream and refuses new ones (shutdown)', async () => {
    const a = await kit.seed().account()
    const s = await sub(DELIVERY, {}, a.key)
    expect(await s.opened()).toBe(true)
    const other = new TestKit(target, { env: { SUBSCRIPTION_KEEPALIVE_MS: '100' } })
    await other.attach(kit.url)
    try {
      const t = await subscribe((r) => other.app.fetch(r), 'http://localhost', DELIVERY, {}, a.key)
      expect(await t.opened()).toBe(true)
      other.app.closeStreams()
      expect(await t.waitFor(() => t.ended, 2000)).toBe(true)
      const late = await subscribe((r) => other.app.fetch(r), 'http://localhost', DELIVERY, {}, a.key)
      expect(late.status).toBe(503)
      expect(late.retryAfter).toBe('1')
      expect(JSON.parse(late.body).errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE')
      expect(s.ended).toBe(false)
    } finally {
      await other.detach()
    }
  })
})

describe.runIf(targets.some((t) => t.name !== 'sqlite'))('live subscriptions across two instances on PostgreSQL', () => {
  const target = targets.find((t) => t.name !== 'sqlite')!
  const one = useKit(target, { env: { SANDBOX_DELIVERY_DELAY_MS: '50', SUBSCRIPTIONS_PER_IP: '2' } })
  const two = new TestKit(target, { env: { SANDBOX_DELIVERY_DELAY_MS: '50' } })
  let servers: { server: Server; url: string }[] = []
  beforeAll(async () => {
    await two.attach(one.url)
    servers = [await serve(one), await serve(two)]
  })
  afterAll(async () => {
    for (const { server } of servers) {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    }
    await two.detach()
  })

  it('a subscriber on one instance gets SENT then DELIVRD of a message sent through the other, over HTTP', async () => {
    const a = await one.seed().account()
    await fund(one, a.account.id)
    const s = await subscribe(fetch, servers[0]!.url, DELIVERY, {}, a.key)
    try {
      expect(await s.opened()).toBe(true)
      const response = await fetch(`${servers[1]!.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${a.key}` },
        body: JSON.stringify({ query: SEND, variables: { to: mobile() } }),
      })
      const sent = ((await response.json()) as any).data.sendSms
      await new Promise((r) => setTimeout(r, 80))
      await runWorkerTick(two.deps, 'instance-two')
      const events = await s.next(2)
      expect(events.map((e) => [e.data.deliveryReports.id, e.data.deliveryReports.status])).toEqual([
        [sent.id, 'SENT'],
        [sent.id, 'DELIVRD'],
      ])
    } finally {
      await s.close()
    }
  })

  it('a management mutation on one instance pushes nowPlaying on the other; SUBSCRIPTIONS_PER_IP refuses the third stream of an address', async () => {
    const op = await one.seed().account()
    const slug = `x-${randomUUID().slice(0, 8)}`
    const document = JSON.stringify({ channel: { slug, name: 'X', timezone: 'UTC' } })
    await one.gql(`mutation($d: String!) { importChannel(document: $d) { id } }`, { d: document }, op.key)
    const streams = [await subscribe(fetch, servers[0]!.url, NOW, { c: slug }), await subscribe(fetch, servers[0]!.url, NOW, { c: slug })]
    try {
      const [first] = await streams[0]!.next(1)
      expect(first.data.nowPlaying.currentVideo).toBeNull()
      const third = await subscribe(fetch, servers[0]!.url, NOW, { c: slug })
      expect(third.status).toBe(429)
      expect(JSON.parse(third.body).errors[0].extensions.code).toBe('RATE_LIMITED')
      await two.gql(`mutation($c: String!) { startLiveBroadcast(channel: $c, title: "Elsewhere") { id } }`, { c: slug }, op.key)
      const events = await streams[0]!.next(2)
      expect(events[1].data.nowPlaying.currentVideo.name).toBe('Elsewhere')
    } finally {
      for (const s of streams) await s.close()
    }
  })
})

describe('shutdown ends subscription streams', () => {
  it('SIGTERM: the SSE stream ends and the server exits 0 quickly', async () => {
    const kit = new TestKit(targets[0]!)
    await kit.start()
    const { child, exited, listening } = spawnServer({ DATABASE_URL: kit.url, WORKER_ENABLED: 'false', SHUTDOWN_GRACE_MS: '10000' })
    try {
      const url = await listening(30_000)
      const a = await kit.seed().account()
      const s = await subscribe(fetch, url, DELIVERY, {}, a.key)
      expect(await s.opened()).toBe(true)
      const signalled = Date.now()
      child.kill('SIGTERM')
      expect(await s.waitFor(() => s.ended, 5000)).toBe(true)
      expect(await exited).toBe(0)
      // Well within the 10 s grace: the drain did not wait for the stream.
      expect(Date.now() - signalled).toBeLessThan(5000)
    } finally {
      child.kill('SIGKILL')
      await kit.stop()
    }
  }, 60_000)
})
