// npm run bench -- row-checks
// PostgreSQL: what planning the foreign key checks once saves the Prisma transactions that write
// many rows (src/db/row-checks.ts): a group's send recorded (one recipient row a contact, each
// checked against its bulk send), a hand-over of 100 recipients (messages, status rows,
// submissions, recipients: four checks a recipient) and a channel's import at the bounds (1,000
// episodes, 3,000 airings, each checked against its program or episode). In-process, one fresh
// schema on BENCH_DATABASE_URL, a group of ROW_CHECKS_GROUP (10,000) contacts.
//
// The peer is the same code whose transactions put the session's mode back right after opening
// (`SET LOCAL plan_cache_mode = force_custom_plan` in place of the `auto`): the same statements and
// round trips, with every row's checks planned again as before. Rounds A B B A (ROW_CHECKS_ROUNDS,
// 2), wall time of each, the load average with every line.
//
// Then PostgreSQL alone, which the load moves much less: `EXPLAIN (ANALYZE)` of the recipients'
// INSERT of the whole group on one plain session in the service's mode, under each mode
// (`SET LOCAL`, rolled back), A B B A: the time its foreign key triggers took.
import os from 'node:os'
import pg from 'pg'
import { createAccount } from '../src/accounts/create-account.js'
import { importChannel } from '../src/channel/import-channel.js'
import { parseEnv } from '../src/core/env.js'
import { openDatabase, type Db } from '../src/db/client.js'
import { applyMigrations } from '../src/db/migrate.js'
import { GENERIC_ROW_CHECKS, planRowChecksOnce } from '../src/db/row-checks.js'
import { createDeps, type Deps } from '../src/deps.js'
import { createGroup } from '../src/messaging/groups.js'
import { addContactsToGroup } from '../src/messaging/upsert-contacts.js'
import { handOver, recordBulkSend } from '../src/sms/send-sms-to-group.js'
import { leaseToken } from '../src/sms/submit-sms.js'
import { median, postgresSchema } from './harness.js'

const GROUP = Number(process.env.ROW_CHECKS_GROUP ?? 10_000)
const ROUNDS = Number(process.env.ROW_CHECKS_ROUNDS ?? 2)
const load = () => os.loadavg()[0]!.toFixed(2)
const SESSION_MODE = 'SET LOCAL plan_cache_mode = force_custom_plan'

const schema = await postgresSchema()
if (!schema) {
  console.log('row-checks: PostgreSQL unreachable (BENCH_DATABASE_URL); skipped')
  process.exit(0)
}

/** The peer's client: each transaction's GENERIC_ROW_CHECKS becomes the session's mode again. */
function sessionModeOnly(db: Db): Db {
  const onTx = (tx: object) =>
    new Proxy(tx, {
      get(target, prop) {
        const value = Reflect.get(target, prop) as unknown
        if (prop === '$executeRawUnsafe') {
          return (query: string, ...values: unknown[]) =>
            (target as Db).$executeRawUnsafe(query === GENERIC_ROW_CHECKS ? SESSION_MODE : query, ...values)
        }
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
      },
    })
  return new Proxy(db, {
    get(target, prop) {
      if (prop === '$transaction') {
        return (body: (tx: object) => Promise<unknown>, options?: object) =>
          (target.$transaction as (b: (tx: object) => Promise<unknown>, o?: object) => Promise<unknown>)((tx) => body(onTx(tx)), options)
      }
      const value = Reflect.get(target, prop) as unknown
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    },
  })
}

/** `programs` x 10 episodes x 3 airings, back to back: the import of bench/guides.ts at the bounds. */
function channel(slug: string) {
  let at = Date.now() - 3_600_000
  return JSON.stringify({
    channel: { slug, name: `Dense ${slug}`, timezone: 'America/New_York' },
    programs: Array.from({ length: 100 }, (_, p) => ({
      slug: `${slug}-${p}`,
      name: `Program ${p}`,
      synopsis: 'Synopsis',
      type: 'live',
      status: 'active',
      episodes: Array.from({ length: 10 }, (_, e) => ({
        episode_number: e + 1,
        name: `Episode ${e + 1}`,
        type: 'live',
        airings: Array.from({ length: 3 }, () => {
          const starts_at = new Date(at).toISOString()
          at += 180_000
          return { starts_at, duration_minutes: 3 }
        }),
      })),
    })),
  })
}

try {
  await applyMigrations(schema.url)
  const database = await openDatabase(schema.url)
  const deps = createDeps(database, parseEnv({ DATABASE_URL: schema.url, LOG_LEVEL: 'silent' }))
  const peer: Deps = { ...deps, db: sessionModeOnly(deps.db) }
  // The two differ in their transactions' mode only.
  const modeIn = (which: Deps) =>
    which.db.$transaction(async (tx) => {
      await planRowChecksOnce(tx, 'postgresql')
      return (await tx.$queryRawUnsafe<{ plan_cache_mode: string }[]>('SHOW plan_cache_mode'))[0]!.plan_cache_mode
    })
  const modes = [await modeIn(peer), await modeIn(deps)]
  if (modes.join() !== 'force_custom_plan,auto') throw new Error(`the peer's and the service's transactions run ${modes.join(' and ')}`)
  const { account } = await createAccount(deps, { name: 'Row checks' })
  await deps.db.account.update({ where: { id: account.id }, data: { creditBalance: 10n ** 15n } })
  const { group } = await createGroup(deps, account.id, { name: 'Everyone' })
  for (let i = 0; i < GROUP; i += 10_000) {
    const contacts = Array.from({ length: Math.min(10_000, GROUP - i) }, (_, j) => ({
      firstName: `First${i + j}`,
      mobile: `+2547${String(10_000_000 + i + j).slice(-8)}`,
    }))
    await addContactsToGroup(deps, account.id, group.id, contacts)
  }

  const times: Record<string, number[]> = {}
  let imports = 0
  let lastBulk = ''
  const once = async (label: string, which: Deps, counted: boolean) => {
    const before = load()
    let t = performance.now()
    const { id } = await recordBulkSend(which, account.id, { groupId: group.id, message: 'row checks' })
    const record = performance.now() - t
    lastBulk = id
    t = performance.now()
    await handOver(which, id, leaseToken('bench', new Date()))
    const hand = performance.now() - t
    t = performance.now()
    await importChannel(which, channel(`row-checks-${imports++}`))
    const imported = performance.now() - t
    if (counted)
      for (const [key, ms] of [
        [`${label} record`, record],
        [`${label} hand-over`, hand],
        [`${label} import`, imported],
      ] as const)
        (times[key] ??= []).push(ms)
    console.log(
      `${counted ? '' : '(warm-up) '}${label.padEnd(8)} record ${GROUP}: ${record.toFixed(0).padStart(5)} ms   hand-over of 100: ${hand.toFixed(0).padStart(5)} ms   import (3,000 airings): ${imported.toFixed(0).padStart(5)} ms   load ${before} -> ${load()}`,
    )
  }
  await once('peer', peer, false)
  await once('service', deps, false)
  for (let r = 0; r < ROUNDS; r++)
    for (const [label, which] of [
      ['peer', peer],
      ['service', deps],
      ['service', deps],
      ['peer', peer],
    ] as const)
      await once(label, which, true)
  console.log('medians (peer / service, service time over peer time):')
  for (const path of ['record', 'hand-over', 'import']) {
    const [a, b] = [median(times[`peer ${path}`]!), median(times[`service ${path}`]!)]
    console.log(`  ${path.padEnd(9)} ${a.toFixed(0)} / ${b.toFixed(0)} ms   ${(b / a).toFixed(2)}x`)
  }
  await database.close()

  // PostgreSQL alone: the recipients' INSERT of the whole group, its foreign key triggers' time.
  const target = new URL(schema.url)
  const name = target.searchParams.get('schema')!
  target.search = ''
  const client = new pg.Client({
    connectionString: target.toString(),
    options: `-c search_path="${name}" -c plan_cache_mode=force_custom_plan -c jit=off`,
  })
  await client.connect()
  const explain = async (mode: string) => {
    await client.query(`BEGIN; SET LOCAL plan_cache_mode = ${mode}`)
    try {
      await client.query(`DELETE FROM "BulkSendRecipient" WHERE "bulkSendId" = $1`, [lastBulk])
      const { rows } = await client.query<{
        'QUERY PLAN': [{ 'Execution Time': number; Triggers: { 'Trigger Name': string; Time: number; Calls: number }[] }]
      }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) INSERT INTO "BulkSendRecipient" ("bulkSendId", "contactId", "mobile")
         SELECT $1, m."contactId", c."mobile" FROM "Membership" m JOIN "Contact" c ON c."id" = m."contactId" WHERE m."groupId" = $2`,
        [lastBulk, group.id],
      )
      const plan = rows[0]!['QUERY PLAN'][0]
      const checks = plan.Triggers.filter((t) => t['Trigger Name'].startsWith('RI_ConstraintTrigger'))
      return {
        total: plan['Execution Time'],
        checks: checks.reduce((sum, t) => sum + t.Time, 0),
        calls: checks.reduce((sum, t) => sum + t.Calls, 0),
      }
    } finally {
      await client.query('ROLLBACK')
    }
  }
  await explain('auto')
  await explain('force_custom_plan')
  console.log(`EXPLAIN (ANALYZE) of the recipients' INSERT of ${GROUP} (PostgreSQL alone):`)
  for (let r = 0; r < ROUNDS; r++)
    for (const mode of ['force_custom_plan', 'auto', 'auto', 'force_custom_plan']) {
      const before = load()
      const { total, checks, calls } = await explain(mode)
      console.log(
        `  ${mode.padEnd(17)} statement ${total.toFixed(1).padStart(7)} ms, foreign key checks ${checks.toFixed(1).padStart(6)} ms (${calls} calls)   load ${before} -> ${load()}`,
      )
    }
  await client.end()
} finally {
  await schema.drop()
}
process.exit(0)
