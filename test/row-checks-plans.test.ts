// PostgreSQL: the transactions that write many rows with foreign keys let those keys' checks use a
// generic plan (`SET LOCAL plan_cache_mode = auto`, src/db/row-checks.ts), and nothing else: the
// session's statements stay planned for their values (`force_custom_plan`, src/db/client.ts), for
// the contact list's named statements. A statement trigger in the test's schema records the mode
// each write ran under, which is the mode its rows' checks were planned under.
import { readFileSync } from 'node:fs'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { schemaClient, targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import type { Seeded } from './kit/seed.js'
import { importChannel } from '../src/channel/import-channel.js'
import { recordBulkSend } from '../src/sms/send-sms-to-group.js'

const postgresql = targets.find((t) => t.name === 'postgresql')
const SAMPLE = readFileSync(new URL('../docs/channel-sample.json', import.meta.url), 'utf8')
const WATCHED = [
  ['BulkSendRecipient', 'INSERT OR UPDATE'],
  ['Message', 'INSERT'],
  ['MessageStatusUpdate', 'INSERT'],
  ['SmsSubmission', 'INSERT'],
  ['Episode', 'INSERT'],
  ['Airing', 'INSERT'],
] as const

describe.skipIf(!postgresql)('foreign key checks planned once on PostgreSQL', () => {
  const kit = useKit(postgresql!)
  let client: pg.Client

  beforeAll(async () => {
    client = await schemaClient(kit.url)
    await client.query(
      `CREATE TABLE "SeenPlanMode" ("n" serial PRIMARY KEY, "tableName" text NOT NULL, "op" text NOT NULL, "mode" text NOT NULL)`,
    )
    await client.query(`CREATE FUNCTION "seen_plan_mode"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
      BEGIN
        INSERT INTO "SeenPlanMode" ("tableName", "op", "mode") VALUES (TG_TABLE_NAME, TG_OP, current_setting('plan_cache_mode'));
        RETURN NULL;
      END $$`)
    for (const [table, ops] of WATCHED) {
      await client.query(
        `CREATE TRIGGER "seen_plan_mode" AFTER ${ops} ON "${table}" FOR EACH STATEMENT EXECUTE FUNCTION "seen_plan_mode"()`,
      )
    }
  })
  afterAll(() => client?.end())

  /** The writes recorded since the last call, as `table op mode`, once each, in order. */
  const seen = async () => {
    const { rows } = await client.query<{ n: number; tableName: string; op: string; mode: string }>(
      `DELETE FROM "SeenPlanMode" RETURNING "n", "tableName", "op", "mode"`,
    )
    return [...new Set(rows.sort((a, b) => a.n - b.n).map((r) => `${r.tableName} ${r.op} ${r.mode}`))]
  }
  /** The mode of every connection of the pool (10, the default size): 12 statements at once. */
  const sessionModes = async () => {
    const modes = await Promise.all(
      Array.from({ length: 12 }, () => kit.db.$queryRawUnsafe<{ plan_cache_mode: string }[]>('SHOW plan_cache_mode')),
    )
    return [...new Set(modes.map((rows) => rows[0]!.plan_cache_mode))]
  }
  async function funded(contacts: number): Promise<Seeded> {
    const s = await kit.seed().account().group().contacts(contacts)
    await kit.db.account.update({ where: { id: s.account.id }, data: { creditBalance: 10n ** 12n } })
    return s
  }

  it('a write outside those transactions runs in the session mode (what the trigger reports when nothing changes it)', async () => {
    await seen()
    await kit.db.$executeRawUnsafe(`UPDATE "BulkSendRecipient" SET "mobile" = "mobile"`)
    expect(await seen()).toEqual(['BulkSendRecipient UPDATE force_custom_plan'])
  })

  it("a group's send: the recipients' rows, and each hand-over's messages, status rows, submissions and recipients", async () => {
    const s = await funded(3)
    await seen()
    const res = await kit.rest('POST', '/api/sms/send-to-group', { key: s.key, body: { group: s.group.id, message: 'plans' } })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ status: 'SENT', recipients: 3 })
    expect(await seen()).toEqual([
      'BulkSendRecipient INSERT auto',
      'Message INSERT auto',
      'MessageStatusUpdate INSERT auto',
      'SmsSubmission INSERT auto',
      'BulkSendRecipient UPDATE auto',
    ])
    expect(await sessionModes()).toEqual(['force_custom_plan'])
  })

  it("a channel's import: its episodes and airings", async () => {
    await seen()
    await importChannel(kit.deps, SAMPLE)
    expect(await seen()).toEqual(['Episode INSERT auto', 'Airing INSERT auto'])
    expect(await sessionModes()).toEqual(['force_custom_plan'])
  })

  it('a send that fails inside its transaction (a group without contacts) gives its connection back in the session mode', async () => {
    const s = await kit.seed().account().group()
    await expect(recordBulkSend(kit.deps, s.account.id, { groupId: s.group.id, message: 'nobody' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    })
    expect(await kit.db.bulkSend.count({ where: { accountId: s.account.id } })).toBe(0)
    expect(await sessionModes()).toEqual(['force_custom_plan'])
  })
})
