// npm run bench -- live-fanout
// nowPlaying over SSE: N subscribers on one channel (real HTTP server, loopback), then one
// startLiveBroadcast; prints how long each subscriber waited for the new answer. Then N subscribers
// on a channel whose broadcast ends a few seconds later: how long after that end each one heard
// (the boundary's timer; no request). One schedule per channel and instance computes the answer
// once and fans it out. SUBSCRIBERS=200 by default.
import { loadavg } from 'node:os'
import { startBench } from './harness.js'
import { createAccount } from '../src/accounts/create-account.js'

const subscribers = Number(process.env.SUBSCRIBERS ?? 200)
const bench = await startBench({
  SUBSCRIPTIONS_PER_IP: String(subscribers + 10),
  SUBSCRIPTIONS_PER_KEY: String(subscribers + 10),
  RATE_LIMIT_ANONYMOUS_PER_SECOND: '0',
})
const { apiKey } = await createAccount(bench.deps, { name: 'Bench' })
const gql = async (query: string, variables: Record<string, unknown>) => {
  const response = await fetch(`${bench.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ query, variables }),
  })
  const body = (await response.json()) as { errors?: unknown }
  if (body.errors) throw new Error(JSON.stringify(body.errors))
}
await gql(`mutation($d: String!) { importChannel(document: $d) { id } }`, {
  d: JSON.stringify({ channel: { slug: 'bench-live', name: 'Bench', timezone: 'UTC' } }),
})

const subscribe = (channel: string) => Promise.all(Array.from({ length: subscribers }, () => stream(channel)))
async function stream(channel: string) {
  const query = encodeURIComponent(`subscription { nowPlaying(channel: "${channel}") { isLive currentVideo { name } } }`)
  const response = await fetch(`${bench.baseUrl}/graphql?query=${query}`, { headers: { accept: 'text/event-stream' } })
  if (response.status !== 200) throw new Error(`subscribe answered ${response.status}: ${await response.text()}`)
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  const waits: { count: number; resolve: (at: number) => void }[] = []
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }))
      if (done) return
      text += decoder.decode(value, { stream: true })
      const count = text.split('event: next').length - 1
      for (const w of waits.splice(0)) {
        if (count >= w.count) w.resolve(performance.now())
        else waits.push(w)
      }
    }
  })()
  return {
    nth: (count: number) =>
      new Promise<number>((resolve) =>
        text.split('event: next').length - 1 >= count ? resolve(performance.now()) : waits.push({ count, resolve }),
      ),
    close: () => reader.cancel().catch(() => undefined),
  }
}
const streams = await subscribe('bench-live')
await Promise.all(streams.map((s) => s.nth(1)))
const started = performance.now()
await gql(`mutation { startLiveBroadcast(channel: "bench-live", title: "Now") { id } }`, {})
const latencies = (await Promise.all(streams.map((s) => s.nth(2)))).map((at) => at - started)
await Promise.all(streams.map((s) => s.close()))

// A broadcast that ends BOUNDARY_IN_MS from now: how long after its end each subscriber hears of it.
const BOUNDARY_IN_MS = 3000
const endsAt = Date.now() + BOUNDARY_IN_MS
await gql(`mutation($d: String!) { importChannel(document: $d) { id } }`, {
  d: JSON.stringify({
    channel: { slug: 'bench-boundary', name: 'Boundary', timezone: 'UTC' },
    videos: [{ ref: 'a', name: 'Alpha', duration_seconds: 3600 }],
    scheduled_broadcasts: [{ video: 'a', starts_at: new Date(endsAt - 60_000).toISOString(), ends_at: new Date(endsAt).toISOString() }],
  }),
})
const watching = await subscribe('bench-boundary')
await Promise.all(watching.map((s) => s.nth(1)))
if (Date.now() >= endsAt) throw new Error(`subscribing took longer than ${BOUNDARY_IN_MS} ms: raise BOUNDARY_IN_MS`)
// performance.now() of the end, from the wall clock's (the streams stamp their events with performance.now()).
const endsAtPerf = endsAt - Date.now() + performance.now()
const lateness = (await Promise.all(watching.map((s) => s.nth(2)))).map((at) => at - endsAtPerf)
await Promise.all(watching.map((s) => s.close()))

console.log(`| push | subscribers | p50 ms | p99 ms | max ms | load average |`)
console.log(`|---|---:|---:|---:|---:|---|`)
const row = (what: string, values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const pick = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1)
  console.log(
    `| ${what} | ${subscribers} | ${pick(0.5)} | ${pick(0.99)} | ${sorted.at(-1)!.toFixed(1)} | ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} |`,
  )
}
row('startLiveBroadcast, from the mutation sent', latencies)
row("the broadcast's end, after ends_at", lateness)
await bench.close()
process.exit(0)
