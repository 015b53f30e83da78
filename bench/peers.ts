// npm run bench -- peers: the measuring stick of issue 8 ("every database path at the speed of its SQL").
// The service (src/process/server.ts as shipped) against peers measured side by side in one run, on the
// same data, answering the same JSON: a hand-written fastify server with hand-written SQL
// (bench/peers/hand-server.ts), PostGraphile 5 and 4, and a fixed-body node:http server. Every server is
// its own child process (CPU time and peak RSS read from /proc); autocannon runs in this process.
// See bench/README.md. PEERS_SECONDS (10), PEERS_ROUNDS (1), PEERS_SAMPLES (21), PEERS_WRITES (2),
// BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/test; a fresh schema, dropped after).
import { deepStrictEqual } from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import pg from 'pg'
import { applyMigrations } from '../src/db/migrate.js'
import { openDatabase } from '../src/db/client.js'
import { parseEnv } from '../src/core/env.js'
import { createDeps } from '../src/deps.js'
import { createAccount } from '../src/accounts/create-account.js'
import { importChannel } from '../src/channel/import-channel.js'
import { benchServiceEnv, serviceCommand, startChild, type Child } from './peers/processes.js'
import { postGraphile5 } from './peers/postgraphile5.js'
import { parseDatabaseUrl } from '../src/db/connection-url.js'
import { countRows, fakeContact, nowPlayingChannel, RARE, seedContacts } from './peers/seed.js'

const SECONDS = Number(process.env.PEERS_SECONDS ?? 10)
const ROUNDS = Number(process.env.PEERS_ROUNDS ?? 1)
// Latency samples per server and URL at 100k; quick runs (short rounds) take fewer.
const SAMPLES = Number(process.env.PEERS_SAMPLES ?? (SECONDS >= 10 ? 21 : 7))
// add-contacts requests per server and case, in mirrored pairs (service, peer), (peer, service), ...
const WRITES = Number(process.env.PEERS_WRITES ?? (SECONDS >= 10 ? 2 : 1))
const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test'
const CONNECTIONS = 10
const root = fileURLToPath(new URL('..', import.meta.url))
const startedAt = performance.now()

const SMALL = { base: 10_000_000, count: 10_000 }
const BIG = { base: 20_000_000, count: 100_000 }
const NEW_BASE = 40_000_000
const PAGE_PATH = '/api/contacts?page=7'
// As the external side-by-side harness asks it: the Relay global `id` and the `uuid`, as a Relay client selects them.
const SERVICE_QUERY = `query { contacts(page: 7, perPage: 25) { nodes { id uuid firstName familyName otherNames mobile email organization gender } pageInfo { search total skipped perPage page pageCount } } }`
// Both PostGraphile peers answer a global id too. PostGraphile 4: `nodeId` is the global id, `id` the row's;
// PostGraphile 5 (amber): `id` is the global id, `rowId` the row's. The same queries as the external side-by-side harness.
const peerQuery = (accountId: string) =>
  `query { allContacts(condition: { accountId: ${JSON.stringify(accountId)} }, orderBy: [FIRST_NAME_KEY_ASC, FAMILY_NAME_KEY_ASC, ID_ASC], first: 25, offset: 150) { totalCount nodes { nodeId id firstName familyName otherNames mobile email organization gender } } }`
const peer5Query = (accountId: string) =>
  `query { allContacts(condition: { accountId: ${JSON.stringify(accountId)} }, orderBy: [FIRST_NAME_KEY_ASC, FAMILY_NAME_KEY_ASC, ROW_ID_ASC], first: 25, offset: 150) { totalCount nodes { id rowId firstName familyName otherNames mobile email organization gender } } }`

// ---- bookkeeping -------------------------------------------------------------------------------

interface Run {
  target: string
  rps: number
  p50: number
  p99: number
  requests: number
  cpuMs: number
}
interface Row {
  measure: string
  db: string
  service: string
  peer: string
  ratio: string
  target: string
  result: 'PASS' | 'MISS' | 'info' | 'SKIPPED'
  load?: string
}
const runs: Run[] = []
const rows: Row[] = []
const children: Child[] = []
const loadText = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')

/** Runs one section, printing the load average (1 / 5 / 15 min) before and after it; its rows carry both. */
async function section(name: string, fn: () => Promise<void>) {
  const before = loadText()
  const first = rows.length
  console.log(`\n### ${name}: load average before ${before}`)
  await fn()
  const after = loadText()
  console.log(`    load average after ${after} (${Math.round((performance.now() - startedAt) / 1000)} s elapsed)`)
  for (const row of rows.slice(first)) row.load = `${before.split(' / ')[0]} → ${after.split(' / ')[0]}`
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a')
function ratioRow(
  measure: string,
  db: string,
  service: number,
  peer: number,
  unit: string,
  digits: number,
  target: { min?: number; max?: number },
) {
  const ratio = service / peer
  const ok = (target.min === undefined || ratio >= target.min) && (target.max === undefined || ratio <= target.max)
  rows.push({
    measure,
    db,
    service: `${fmt(service, digits)} ${unit}`,
    peer: `${fmt(peer, digits)} ${unit}`,
    ratio: `${ratio.toFixed(2)}x`,
    target: target.min !== undefined ? `>= ${target.min}x` : `<= ${target.max}x`,
    result: ok ? 'PASS' : 'MISS',
  })
}
/** A ratio shown for information, with no target. */
function infoRow(measure: string, db: string, service: number, peer: number, unit: string, digits: number) {
  rows.push({
    measure,
    db,
    service: `${fmt(service, digits)} ${unit}`,
    peer: `${fmt(peer, digits)} ${unit}`,
    ratio: `${(service / peer).toFixed(2)}x`,
    target: '—',
    result: 'info',
  })
}
function absoluteRow(measure: string, db: string, service: number, peer: number | null, unit: string, max: number | null) {
  rows.push({
    measure,
    db,
    service: `${fmt(service, 1)} ${unit}`,
    peer: peer === null ? '—' : `${fmt(peer, 1)} ${unit}`,
    ratio: peer === null ? '—' : `${(service / peer).toFixed(2)}x`,
    target: max === null ? '—' : `<= ${max} ${unit}`,
    result: max === null ? 'info' : service <= max ? 'PASS' : 'MISS',
  })
}

// ---- load and latency --------------------------------------------------------------------------

interface Target {
  name: string
  child: Child
  options: autocannon.Options
}

async function measure(target: Target, seconds: number): Promise<Run> {
  const cpuBefore = target.child.cpuMs()
  const result = await autocannon({ connections: CONNECTIONS, duration: seconds, ...target.options })
  const cpuMs = target.child.cpuMs() - cpuBefore
  if (result.errors || result.non2xx)
    throw new Error(`${target.name}: ${result.errors} errors and ${result.non2xx} non-2xx answers: not measuring failures`)
  return {
    target: target.name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    cpuMs,
  }
}

/** Warms every target, then measures them in mirrored order (A B C C B A) so none gets a warmer machine. */
async function alternate(targets: Target[]) {
  for (const t of targets) await measure(t, Math.min(3, SECONDS))
  const mine: Run[] = []
  for (let round = 1; round <= ROUNDS; round++) {
    for (const t of [...targets, ...[...targets].reverse()]) {
      const run = await measure(t, SECONDS)
      console.log(
        `    ${t.name}: ${fmt(run.rps)} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, ${fmt(run.cpuMs / run.requests, 3)} ms CPU/request`,
      )
      mine.push(run)
    }
  }
  runs.push(...mine)
  const of = (name: string) => {
    const r = mine.filter((m) => m.target === name)
    return {
      rps: r.reduce((a, m) => a + m.rps, 0) / r.length,
      cpuPerRequest: r.reduce((a, m) => a + m.cpuMs, 0) / r.reduce((a, m) => a + m.requests, 0),
    }
  }
  return of
}

const median = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

/**
 * fetch, once more when a kept-alive connection was reset before any answer (the server closed it
 * as idle while the request went out: a race that a loaded machine widens), for requests that
 * change nothing. A server that died fails the second try too.
 */
async function fetchReading(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init)
  } catch (error) {
    const code = ((error as Error).cause as { code?: string } | undefined)?.code
    const readOnly = !init.body || /^\{"query":"\s*(query\b|\{)/.test(String(init.body))
    if (code !== 'ECONNRESET' || !readOnly) throw error
    console.log(`    ${url}: connection reset before an answer (${code}); asking again`)
    return fetch(url, init)
  }
}

async function getJson(url: string, apiKey?: string): Promise<unknown> {
  const res = await fetchReading(url, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} })
  const text = await res.text()
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${text.slice(0, 300)}`)
  return JSON.parse(text)
}

async function postJson(url: string, body: unknown, apiKey?: string): Promise<{ status: number; json: unknown; ms: number }> {
  const started = performance.now()
  const res = await fetchReading(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
    body: JSON.stringify(body),
  })
  const text = await res.text()
  const ms = performance.now() - started
  // GraphQL reports failures with a 200 too: an answer carrying errors is a failure here.
  if (res.status !== 200 || text.startsWith('{"errors"') || text.includes('"errors":['))
    throw new Error(`POST ${url}: ${res.status} ${text.slice(0, 600)}`)
  return { status: res.status, json: JSON.parse(text), ms }
}

/** Fails the run loudly when two servers do not answer the same JSON. */
function assertSame(what: string, service: unknown, peer: unknown) {
  try {
    deepStrictEqual(peer, service)
  } catch (error) {
    throw new Error(
      `${what}: the peer's answer differs from the service's; measuring them side by side would be meaningless.\n${(error as Error).message.slice(0, 2000)}`,
      { cause: error },
    )
  }
}

// ---- one database ------------------------------------------------------------------------------

async function benchDatabase(kind: 'SQLite' | 'PostgreSQL', url: string) {
  let small!: { accountId: string; apiKey: string }
  let big!: { accountId: string; apiKey: string }
  let channelId: string | null = null

  await section(`${kind}: migrations, 10,000 + 100,000 contacts`, async () => {
    await applyMigrations(url)
    const database = await openDatabase(url)
    const deps = createDeps(database, parseEnv({ DATABASE_URL: url, LOG_LEVEL: 'silent' }))
    const a = await createAccount(deps, { name: 'Peers 10k' })
    const b = await createAccount(deps, { name: 'Peers 100k' })
    small = { accountId: a.account.id, apiKey: a.apiKey }
    big = { accountId: b.account.id, apiKey: b.apiKey }
    if (kind === 'SQLite') channelId = (await importChannel(deps, JSON.stringify(nowPlayingChannel(new Date())))).id
    await database.close()
    const t = performance.now()
    await seedContacts(url, small.accountId, SMALL.base, SMALL.count)
    await seedContacts(url, big.accountId, BIG.base, BIG.count)
    console.log(`    seeded ${SMALL.count + BIG.count} contacts in ${Math.round(performance.now() - t)} ms`)
  })

  const service = await startChild(
    `service (${kind})`,
    (port, start = serviceCommand(root)) => ({
      args: start.args,
      env: benchServiceEnv(start, url, port),
    }),
    root,
  )
  children.push(service)
  const hand = await startChild(
    `hand-written (${kind})`,
    (port) => ({ args: ['--import', 'tsx', 'bench/peers/hand-server.ts', String(port), url] }),
    root,
  )
  children.push(hand)
  const postgraphile =
    kind === 'PostgreSQL'
      ? await startChild(
          'PostGraphile 4',
          (port) => ({ args: ['--import', 'tsx', 'bench/peers/postgraphile-server.ts', String(port), url] }),
          root,
        )
      : null
  if (postgraphile) children.push(postgraphile)
  const pg5 = kind === 'PostgreSQL' ? postGraphile5(root) : null
  const target = parseDatabaseUrl(url)
  const postgraphile5 = pg5
    ? await startChild(
        'PostGraphile 5',
        (port) => ({
          node: pg5.node,
          args: ['bench/peers/postgraphile5-server.mjs'],
          // Grafast's production mode whatever this shell says, as the external side-by-side harness runs it.
          env: {
            PORT: String(port),
            PG_URL: target.connectionString!,
            PG_SCHEMA: target.schema!,
            PG5_DIR: pg5.dir,
            GRAPHILE_ENV: 'production',
            NODE_ENV: 'production',
          },
        }),
        root,
      )
    : null
  if (postgraphile5) children.push(postgraphile5)

  const auth = { authorization: `Bearer ${small.apiKey}` }
  const gqlOptions = (body: string) => ({ method: 'POST' as const, headers: { ...auth, 'content-type': 'application/json' }, body })

  await section(
    `${kind}: contacts page 7 of 10,000 (REST, GraphQL), ${CONNECTIONS} connections, ${SECONDS} s runs x ${ROUNDS} round(s)`,
    async () => {
      const restService = await getJson(`${service.baseUrl}${PAGE_PATH}`, small.apiKey)
      assertSame(`GET ${PAGE_PATH} (${kind})`, restService, await getJson(`${hand.baseUrl}${PAGE_PATH}`, small.apiKey))
      const page = restService as { data: { uuid: string }[]; meta: { total: number } }
      if (page.data.length !== 25 || page.meta.total !== SMALL.count) throw new Error(`unexpected page: ${JSON.stringify(page.meta)}`)
      const gql = (await postJson(`${service.baseUrl}/graphql`, { query: SERVICE_QUERY }, small.apiKey)).json as {
        data: { contacts: { nodes: { id: string; uuid: string }[]; pageInfo: { total: number } } }
      }
      assertSame(
        `GraphQL contacts page ids (${kind})`,
        gql.data.contacts.nodes.map((n) => n.uuid),
        page.data.map((c) => c.uuid),
      )
      // The row ids (the service's `uuid`), the fields and the total; each server's global id is its own.
      const ours = {
        nodes: gql.data.contacts.nodes.map(({ id: _global, uuid, ...rest }) => ({ id: uuid, ...rest })),
        total: gql.data.contacts.pageInfo.total,
      }
      if (postgraphile) {
        const peer = (await postJson(`${postgraphile.baseUrl}/graphql`, { query: peerQuery(small.accountId) })).json as {
          data: { allContacts: { totalCount: number; nodes: { nodeId: string }[] } }
        }
        const nodes = peer.data.allContacts.nodes.map(({ nodeId: _global, ...rest }) => rest)
        assertSame(`PostGraphile 4 contacts page (${kind})`, ours, { nodes, total: peer.data.allContacts.totalCount })
      }
      if (postgraphile5) {
        const peer = (await postJson(`${postgraphile5.baseUrl}/graphql`, { query: peer5Query(small.accountId) })).json as {
          data: { allContacts: { totalCount: number; nodes: { id: string; rowId: string }[] } }
        }
        const nodes = peer.data.allContacts.nodes.map(({ id: _global, rowId, ...rest }) => ({ id: rowId, ...rest }))
        assertSame(`PostGraphile 5 contacts page (${kind})`, ours, { nodes, total: peer.data.allContacts.totalCount })
      }
      console.log(
        `    answers checked: REST page deep-equal to the hand-written server's; GraphQL page = same contacts${postgraphile ? ' = PostGraphile 4 page' : ''}${postgraphile5 ? ' = PostGraphile 5 page' : ''}`,
      )

      const targets: Target[] = [
        { name: `service REST ${kind}`, child: service, options: { url: `${service.baseUrl}${PAGE_PATH}`, headers: auth } },
        { name: `hand-written REST ${kind}`, child: hand, options: { url: `${hand.baseUrl}${PAGE_PATH}`, headers: auth } },
        {
          name: `service GraphQL ${kind}`,
          child: service,
          options: { url: `${service.baseUrl}/graphql`, ...gqlOptions(JSON.stringify({ query: SERVICE_QUERY })) },
        },
      ]
      for (const [name, child, query] of [
        ['PostGraphile 4 GraphQL', postgraphile, peerQuery],
        ['PostGraphile 5 GraphQL', postgraphile5, peer5Query],
      ] as const) {
        if (!child) continue
        targets.push({
          name,
          child,
          options: {
            url: `${child.baseUrl}/graphql`,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ query: query(small.accountId) }),
          },
        })
      }
      const of = await alternate(targets)
      const rest = of(`service REST ${kind}`)
      const peer = of(`hand-written REST ${kind}`)
      const graphql = of(`service GraphQL ${kind}`)
      ratioRow('REST page 7, throughput', kind, rest.rps, peer.rps, 'req/s', 0, { min: 0.8 })
      infoRow('REST page 7, CPU per request', kind, rest.cpuPerRequest, peer.cpuPerRequest, 'ms', 3)
      if (kind === 'SQLite') {
        ratioRow('GraphQL page 7, CPU per request (peer: hand-written REST)', kind, graphql.cpuPerRequest, peer.cpuPerRequest, 'ms', 3, {
          max: 2.0,
        })
        infoRow('GraphQL page 7, throughput (peer: hand-written REST)', kind, graphql.rps, peer.rps, 'req/s', 0)
      } else {
        // Issue 19: at least 1.0x PostGraphile 5 and 1.2x PostGraphile 4.
        for (const [version, child, min] of [
          ['5', postgraphile5, 1.0],
          ['4', postgraphile, 1.2],
        ] as const) {
          if (!child) continue
          const pgl = of(`PostGraphile ${version} GraphQL`)
          ratioRow(`GraphQL page 7, throughput (peer: PostGraphile ${version})`, kind, graphql.rps, pgl.rps, 'req/s', 0, { min })
          infoRow(
            `GraphQL page 7, CPU per request (peer: PostGraphile ${version})`,
            kind,
            graphql.cpuPerRequest,
            pgl.cpuPerRequest,
            'ms',
            3,
          )
        }
      }
    },
  )

  const underLoad = service.memory().peakMiB

  if (channelId) {
    await section(`${kind}: now playing against a fixed body of the same size`, async () => {
      const path = `/api/channels/${channelId}/status`
      const res = await fetch(`${service.baseUrl}${path}`)
      const text = await res.text()
      const body = JSON.parse(text) as { current_video: unknown }
      if (res.status !== 200 || !body.current_video) throw new Error(`now playing is empty or failing (${res.status}): ${text}`)
      const bytes = Buffer.byteLength(text)
      const fixed = await startChild(
        'fixed body',
        (port) => ({ args: ['--import', 'tsx', 'bench/peers/fixed-body.ts', String(port), String(bytes)] }),
        root,
      )
      children.push(fixed)
      const fixedBytes = Buffer.byteLength(await (await fetch(`${fixed.baseUrl}/`)).text())
      if (fixedBytes !== bytes) throw new Error(`fixed body is ${fixedBytes} bytes, now playing ${bytes}`)
      console.log(`    now playing: ${bytes} bytes, current video present; fixed body: ${fixedBytes} bytes`)
      const of = await alternate([
        { name: 'service now playing', child: service, options: { url: `${service.baseUrl}${path}` } },
        { name: 'fixed-body node:http', child: fixed, options: { url: `${fixed.baseUrl}/` } },
      ])
      ratioRow(
        'now playing, throughput (peer: fixed body)',
        kind,
        of('service now playing').rps,
        of('fixed-body node:http').rps,
        'req/s',
        0,
        { min: 0.8 },
      )
      await fixed.stop()
    })
  }

  await section(`${kind}: add-contacts`, async () => {
    const groups = async (n: number) => {
      const ids: string[] = []
      for (let i = 0; i < n; i++) {
        const { json } = await postJson(
          `${service.baseUrl}/api/contact/group/create`,
          { name: `Peers ${kind} ${Date.now()} ${i}` },
          small.apiKey,
        )
        ids.push((json as { reference: string }).reference)
      }
      return ids
    }
    const legacy = (c: ReturnType<typeof fakeContact>) => ({ mobile: c.mobile, first_name: c.firstName, family_name: c.familyName })
    const existing = Array.from({ length: SMALL.count }, (_, n) => legacy(fakeContact(SMALL.base, n)))
    // Mirrored order, a fresh group each time: every call updates 10,000 contacts and enlists them.
    const order = Array.from({ length: WRITES }, (_, i) => (i % 2 ? (['peer', 'service'] as const) : (['service', 'peer'] as const))).flat()
    const timings = async (label: string, makeBody: (call: number) => unknown[], expected: number) => {
      const ids = await groups(order.length)
      const times: Record<'service' | 'peer', number[]> = { service: [], peer: [] }
      for (const [call, who] of order.entries()) {
        const base = who === 'service' ? service.baseUrl : hand.baseUrl
        const { json, ms } = await postJson(
          `${base}/api/contact/group/${ids[call]}/add-contacts`,
          { contacts: makeBody(call) },
          small.apiKey,
        )
        assertSame(`add-contacts answer (${kind})`, { status: 'successful' }, json)
        const members = await countRows(url, 'Membership', 'groupId', ids[call]!)
        if (members !== expected) throw new Error(`${label} by ${who}: the group has ${members} members, expected ${expected}`)
        times[who].push(ms)
        console.log(`    ${label}, ${who}: ${Math.round(ms)} ms`)
      }
      return { service: median(times.service), peer: median(times.peer) }
    }
    const old = await timings('10,000 existing', () => existing, SMALL.count)
    const total = await countRows(url, 'Contact', 'accountId', small.accountId)
    if (total !== SMALL.count) throw new Error(`add-contacts of existing contacts left ${total} contacts, expected ${SMALL.count}`)
    ratioRow('add-contacts, 10,000 existing (time)', kind, old.service, old.peer, 'ms', 0, { max: kind === 'PostgreSQL' ? 1 : 3 }) // issue 19: at least as fast as hand-written on PostgreSQL
    if (kind === 'SQLite') {
      const fresh = await timings(
        '1,000 new',
        (call) => Array.from({ length: 1000 }, (_, n) => legacy(fakeContact(NEW_BASE + call * 1000, n))),
        1000,
      )
      ratioRow('add-contacts, 1,000 new (time)', kind, fresh.service, fresh.peer, 'ms', 0, { max: 2 })
    }
  })

  await section(`${kind}: 100,000 contacts in one account, one client, median of ${SAMPLES}`, async () => {
    const cases = [
      { measure: `search "${RARE}" (1% of rows), page 1`, path: `/api/contacts?search=${RARE}`, max: 25 },
      { measure: 'page 1', path: '/api/contacts?page=1', max: 8 },
      { measure: 'last page (4,000)', path: `/api/contacts?page=${BIG.count / 25}`, max: kind === 'PostgreSQL' ? 30 : null },
    ]
    for (const c of cases) {
      const mine = await getJson(`${service.baseUrl}${c.path}`, big.apiKey)
      assertSame(`GET ${c.path} at 100k (${kind})`, mine, await getJson(`${hand.baseUrl}${c.path}`, big.apiKey))
      const meta = (mine as { meta: { total: number } }).meta
      const expectedTotal = c.path.includes('search') ? BIG.count / 100 : BIG.count
      if (meta.total !== expectedTotal || (mine as { data: unknown[] }).data.length !== 25)
        throw new Error(`${c.path}: total ${meta.total}, expected ${expectedTotal}`)
      const times: Record<'service' | 'peer', number[]> = { service: [], peer: [] }
      for (let i = 0; i < SAMPLES + 2; i++) {
        for (const [who, base] of [
          ['service', service.baseUrl],
          ['peer', hand.baseUrl],
        ] as const) {
          const started = performance.now()
          await getJson(`${base}${c.path}`, big.apiKey)
          // The first two of each are warm-ups.
          if (i >= 2) times[who].push(performance.now() - started)
        }
      }
      absoluteRow(`100k: ${c.measure}, latency (median)`, kind, median(times.service), median(times.peer), 'ms', c.max)
    }
  })

  const { peakMiB, rssMiB } = service.memory()
  console.log(
    `    service VmHWM ${fmt(peakMiB, 1)} MiB, VmRSS now ${fmt(rssMiB, 1)} MiB; hand-written VmHWM ${fmt(hand.memory().peakMiB, 1)} MiB`,
  )
  rows.push({
    measure: 'service peak RSS (VmHWM, whole run incl. 10,000-contact requests)',
    db: kind,
    service: `${fmt(peakMiB, 1)} MiB`,
    peer: `${fmt(hand.memory().peakMiB, 1)} MiB`,
    ratio: `${(peakMiB / hand.memory().peakMiB).toFixed(2)}x`,
    target: '<= 200 MiB',
    result: peakMiB <= 200 ? 'PASS' : 'MISS',
    load: '—',
  })
  rows.push({
    measure: 'service peak RSS after the page-7 load runs (VmHWM)',
    db: kind,
    service: `${fmt(underLoad, 1)} MiB`,
    peer: '—',
    ratio: '—',
    target: '—',
    result: 'info',
    load: '—',
  })
  for (const child of [service, hand, postgraphile, postgraphile5]) await child?.stop()
}

// ---- the run -----------------------------------------------------------------------------------

const dir = mkdtempSync(join(os.tmpdir(), 'gateway-peers-'))
const pgSchema = `peers_${process.pid}_${Date.now()}`
const pgUrl = new URL(PG_URL)
pgUrl.searchParams.set('schema', pgSchema)
let pgReachable = false
console.log(
  `peers: ${SECONDS} s runs, ${ROUNDS} round(s) of mirrored order, ${WRITES} add-contacts request(s) per server and case, ${SAMPLES} samples per latency, ${os.cpus().length} CPUs, load average ${loadText()}`,
)
// Probed first, so a missing PostgreSQL is said before minutes of SQLite figures.
const probe = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 })
try {
  await probe.connect()
  await probe.end()
  pgReachable = true
} catch (error) {
  console.log(
    `PostgreSQL at ${PG_URL} is unreachable (${(error as Error).message || (error as { code?: string }).code}): every PostgreSQL row is SKIPPED.`,
  )
  rows.push({
    measure: 'every PostgreSQL row (unreachable)',
    db: 'PostgreSQL',
    service: '—',
    peer: '—',
    ratio: '—',
    target: '—',
    result: 'SKIPPED',
    load: '—',
  })
}
let failed: unknown = null
try {
  await benchDatabase('SQLite', `file:${join(dir, 'peers.db')}`)
  if (pgReachable) await benchDatabase('PostgreSQL', pgUrl.toString())
} catch (error) {
  failed = error
} finally {
  for (const child of children) await child.stop().catch(() => {})
  if (pgReachable) {
    const client = new pg.Client({ connectionString: PG_URL })
    await client.connect()
    await client.query(`DROP SCHEMA IF EXISTS "${pgSchema}" CASCADE`)
    await client.end()
  }
  rmSync(dir, { recursive: true, force: true })
}

console.log(`\n#### Every load run (autocannon, ${CONNECTIONS} connections, ${SECONDS} s)`)
console.log('| server | req/s | p50 ms | p99 ms | requests | CPU ms/request |')
console.log('|---|---:|---:|---:|---:|---:|')
for (const r of runs) console.log(`| ${r.target} | ${fmt(r.rps)} | ${r.p50} | ${r.p99} | ${r.requests} | ${fmt(r.cpuMs / r.requests, 3)} |`)

console.log(`\n#### Issue 8: service against peers (load average is the 1-minute figure before → after the section)`)
console.log('| measure | DB | service | peer | ratio | target | result | load |')
console.log('|---|---|---:|---:|---:|---|---|---|')
for (const r of rows)
  console.log(`| ${r.measure} | ${r.db} | ${r.service} | ${r.peer} | ${r.ratio} | ${r.target} | ${r.result} | ${r.load ?? ''} |`)
console.log(
  `\n${rows.filter((r) => r.result === 'PASS').length} PASS, ${rows.filter((r) => r.result === 'MISS').length} MISS; ${Math.round((performance.now() - startedAt) / 1000)} s; load average now ${loadText()}`,
)
if (failed) {
  console.error(failed)
  process.exit(1)
}
