// npm run bench -- guides
// Issue 20, item 10: eight anonymous clients fetch a dense channel's guides (XMLTV, iCalendar, M3U)
// with random query strings while one client polls /healthz; prints the /healthz median and p99,
// the guide requests served, and the load average. Target: /healthz median under 50 ms.
// Also times one import at the bounds (IMPORT_LIMITS): the longest the SQLite writer is held.
// In-process server (harness), fresh SQLite file; GUIDES_SECONDS sets the length (default 10).
import { loadavg } from 'node:os'
import { startBench } from './harness.js'
import { importChannel, parseChannelImport } from '../src/channel/import-channel.js'

const SECONDS = Number(process.env.GUIDES_SECONDS ?? 10)
const bench = await startBench({ PUBLIC_BASE_URL: 'https://tv.example.com' })

/** `programs` x `episodes` x `airings` airings of `minutes`, back to back from an hour ago. */
function channel(slug: string, programs: number, episodes: number, airings: number, minutes: number) {
  let at = Date.now() - 3_600_000
  return {
    channel: {
      slug,
      name: `Dense ${slug}`,
      timezone: 'America/New_York',
      show_banner_url: `https://cdn.example.com/${slug}.png`,
      stream_url: `https://cdn.example.com/${slug}.m3u8`,
    },
    programs: Array.from({ length: programs }, (_, p) => ({
      slug: `${slug}-${p}`,
      name: `Program ${p}`,
      synopsis: 'Synopsis; with, escapes\nand lines '.repeat(4),
      type: 'live',
      status: 'active',
      episodes: Array.from({ length: episodes }, (_, e) => ({
        episode_number: e + 1,
        name: `Episode ${e + 1}`,
        type: 'live',
        airings: Array.from({ length: airings }, () => {
          const starts_at = new Date(at).toISOString()
          at += minutes * 60_000
          return { starts_at, duration_minutes: minutes }
        }),
      })),
    })),
  }
}

// An import at the bounds: 100 programs, 1,000 episodes, 3,000 airings (one transaction).
const bound = JSON.stringify(channel('bound-tv', 100, 10, 3, 3))
// Parsing and validation run before the transaction opens: the writer is held for the rest.
let started = performance.now()
parseChannelImport(bound)
const parseMs = performance.now() - started
started = performance.now()
await importChannel(bench.deps, bound)
const importMs = performance.now() - started
// The same document again with every airing changed: each airing is rewritten.
started = performance.now()
await importChannel(bench.deps, bound.replaceAll('"duration_minutes":3', '"duration_minutes":2'))
const reimportMs = performance.now() - started
console.log(
  `import at the bounds (3,000 airings): ${importMs.toFixed(0)} ms, of which ${parseMs.toFixed(0)} ms parse and validation before the transaction; ` +
    `re-import with every airing changed: ${reimportMs.toFixed(0)} ms`,
)

// The guide channel: more airings in the window than a guide holds.
const dense = await importChannel(bench.deps, JSON.stringify(channel('dense-tv', 10, 30, 10, 10)))
const paths = [`/api/channels/${dense.id}/xmltv`, `/api/channels/${dense.id}/schedule.ics`, '/api/channels.m3u']

let stop = false
let guides = 0
async function guideClient(i: number) {
  while (!stop) {
    const res = await fetch(`${bench.baseUrl}${paths[i % paths.length]}?client=${i}&r=${Math.random()}`)
    await res.arrayBuffer()
    guides++
  }
}
const health: number[] = []
async function healthClient() {
  while (!stop) {
    const t = performance.now()
    await (await fetch(`${bench.baseUrl}/healthz`)).arrayBuffer()
    health.push(performance.now() - t)
    await new Promise((r) => setTimeout(r, 20))
  }
}

const clients = [...Array.from({ length: 8 }, (_, i) => guideClient(i)), healthClient()]
await new Promise((r) => setTimeout(r, SECONDS * 1000))
stop = true
await Promise.all(clients)
health.sort((a, b) => a - b)
const at = (q: number) => health[Math.min(health.length - 1, Math.floor(q * health.length))]!.toFixed(1)
console.log(
  `8 guide clients, random query strings, ${SECONDS} s: ${guides} guide answers; /healthz median ${at(0.5)} ms, p99 ${at(0.99)} ms (${health.length} samples)`,
)
console.log(
  `load average: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
)
await bench.close()
