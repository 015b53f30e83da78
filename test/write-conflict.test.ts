// Deadlocks (40P01) and serialization failures (40001) in the contact writes (src/db/write-conflict.ts):
// real ones, made by real sessions and real triggers on PostgreSQL.
import { describe, expect, it } from 'vitest'
import type pg from 'pg'
import { schemaClient, targets } from './kit/databases.js'
import { useKit, type TestKit } from './kit/kit.js'
import { mobile } from './kit/seed.js'
import { isWriteConflict, writeConflictPause, WRITE_CONFLICT_ATTEMPTS } from '../src/db/write-conflict.js'

/** Polls `holds` (a read on another session) until it is true; a lock wait is a state to observe, not a time to sleep. */
async function until(what: string, holds: () => Promise<boolean>) {
  const deadline = Date.now() + 15_000
  while (!(await holds())) {
    if (Date.now() > deadline) throw new Error(`never observed: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const pidOf = async (client: pg.Client) => (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number

/** The backends that wait on a lock `pid` holds. */
const blockedBy = async (watch: pg.Client, pid: number) =>
  (await watch.query('SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [pid])).rows.map((r) => r.pid as number)

/** What a request changed, or did not: every contact of the account and the group's members. */
async function snapshot(kit: TestKit, accountId: string, groupId: string) {
  const contacts = await kit.db.contact.findMany({
    where: { accountId },
    orderBy: { mobile: 'asc' },
    select: { mobile: true, firstName: true, email: true, updatedAt: true },
  })
  const members = await kit.db.membership.count({ where: { groupId } })
  return { contacts, members }
}

/**
 * A trigger that fails every insert into "Contact" (or update of "Group") of one account with the
 * given SQLSTATE (`times` statements, or every one), counting the statements it failed in a
 * sequence (sequences do not roll back).
 */
async function failWrites(
  kit: TestKit,
  accountId: string,
  sqlstate: '40P01' | '40001',
  { times, on = 'INSERT ON "Contact"' }: { times?: number; on?: 'INSERT ON "Contact"' | 'UPDATE ON "Group"' } = {},
) {
  const condition = times === undefined ? 'true' : `nextval('write_runs') <= ${times}`
  await kit.db.$executeRawUnsafe(`CREATE SEQUENCE write_runs`)
  await kit.db.$executeRawUnsafe(`CREATE SEQUENCE write_failures`)
  await kit.db.$executeRawUnsafe(
    `CREATE FUNCTION fail_contact_write() RETURNS trigger AS $$ BEGIN
       IF ${condition} THEN
         PERFORM nextval('write_failures');
         RAISE EXCEPTION 'forced write conflict' USING ERRCODE = '${sqlstate}';
       END IF;
       RETURN NEW;
     END $$ LANGUAGE plpgsql`,
  )
  await kit.db.$executeRawUnsafe(
    `CREATE TRIGGER fail_contact_write BEFORE ${on} FOR EACH ROW WHEN (NEW."accountId" = '${accountId}') EXECUTE FUNCTION fail_contact_write()`,
  )
  return {
    /** How many statements the trigger failed. */
    failures: async () =>
      Number(
        (
          await kit.db.$queryRawUnsafe<{ n: bigint }[]>(`SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS n FROM write_failures`)
        )[0]!.n,
      ),
    async drop() {
      await kit.db.$executeRawUnsafe(`DROP TRIGGER IF EXISTS fail_contact_write ${on.slice(on.indexOf(' ON ') + 1)}`)
      await kit.db.$executeRawUnsafe(`DROP FUNCTION IF EXISTS fail_contact_write()`)
      await kit.db.$executeRawUnsafe(`DROP SEQUENCE IF EXISTS write_runs`)
      await kit.db.$executeRawUnsafe(`DROP SEQUENCE IF EXISTS write_failures`)
    },
  }
}

describe('the pause between runs after a write conflict', () => {
  it('is 10-50 ms after the first run, 20-100 ms after the second', () => {
    expect([writeConflictPause(1, () => 0), writeConflictPause(1, () => 1)]).toEqual([10, 50])
    expect([writeConflictPause(2, () => 0), writeConflictPause(2, () => 1)]).toEqual([20, 100])
  })
})

// SQLite has neither: one writer at a time, and a busy database is a 503 of its own (docs/operations.md).
const postgres = targets.find((t) => t.name === 'postgresql')

describe.skipIf(!postgres)('write conflicts on PostgreSQL', () => {
  const kit = useKit(postgres!)

  it('recognises 40P01 and 40001 as the driver, Prisma raw queries and Prisma model queries report them', async () => {
    const raise = (sqlstate: string) => `DO $$ BEGIN RAISE EXCEPTION 'forced' USING ERRCODE = '${sqlstate}'; END $$`
    const caught = (promise: Promise<unknown>) =>
      promise.then(
        () => {
          throw new Error('expected an error')
        },
        (error: unknown) => error,
      )
    const direct = await schemaClient(kit.url)
    try {
      for (const sqlstate of ['40P01', '40001']) {
        const driver = await caught(direct.query(raise(sqlstate)))
        expect(driver).toMatchObject({ code: sqlstate })
        expect(isWriteConflict(driver)).toBe(true)
        const raw = await caught(kit.db.$executeRawUnsafe(raise(sqlstate)))
        expect(raw).toMatchObject({ code: 'P2010', meta: { driverAdapterError: { cause: { originalCode: sqlstate } } } })
        expect(isWriteConflict(raw)).toBe(true)
      }
      // A model query: Prisma maps 40001 to P2034 and has no code for 40P01 (its adapter error comes through unwrapped).
      const s = await kit.seed().account().group()
      await kit.db.$executeRawUnsafe(
        `CREATE FUNCTION fail_group_update() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'forced' USING ERRCODE = NEW.description; END $$ LANGUAGE plpgsql`,
      )
      await kit.db.$executeRawUnsafe(
        `CREATE TRIGGER fail_group_update BEFORE UPDATE ON "Group" FOR EACH ROW WHEN (NEW.description IN ('40P01', '40001')) EXECUTE FUNCTION fail_group_update()`,
      )
      try {
        const update = (description: string) => caught(kit.db.group.update({ where: { id: s.group.id }, data: { description } }))
        const serialization = await update('40001')
        expect(serialization).toMatchObject({ code: 'P2034' })
        expect(isWriteConflict(serialization)).toBe(true)
        const deadlock = await update('40P01')
        expect(deadlock).toMatchObject({ name: 'DriverAdapterError', cause: { originalCode: '40P01' } })
        expect(isWriteConflict(deadlock)).toBe(true)
        // Neither a constraint violation nor a timeout is one.
        expect(isWriteConflict(await caught(direct.query(raise('23505'))))).toBe(false)
        expect(isWriteConflict(await caught(direct.query(raise('57014'))))).toBe(false)
      } finally {
        await kit.db.$executeRawUnsafe(`DROP TRIGGER fail_group_update ON "Group"`)
        await kit.db.$executeRawUnsafe(`DROP FUNCTION fail_group_update()`)
      }
    } finally {
      await direct.end()
    }
  })

  it('runs add-contacts again when PostgreSQL aborts it to break a deadlock with a writer locking the same contacts in reverse order', async () => {
    const s = await kit
      .seed()
      .account()
      .group()
      .contacts(5, (i) => ({ firstName: `Before ${i}`, email: `before${i}@example.com` }))
    const sorted = [...s.contacts].sort((a, b) => (a.mobile < b.mobile ? -1 : 1))
    const [first, , middle, , last] = sorted
    // `holder` locks the last contact, then (once add-contacts holds the first) asks for the first.
    // `gate` holds the middle one, so add-contacts stops there, holding the first, until the holder
    // waits: then add-contacts' own wait for the last contact is the one that closes the cycle, and
    // its backend, at the server's deadlock_timeout (1 s), runs the deadlock check first. The
    // holder's check comes only after 5 minutes, so PostgreSQL aborts add-contacts' side (40P01).
    const holder = await schemaClient(kit.url)
    const gate = await schemaClient(kit.url)
    const watch = await schemaClient(kit.url)
    try {
      await holder.query(`SET deadlock_timeout = '5min'`)
      await holder.query('BEGIN')
      await holder.query(`UPDATE "Contact" SET "email" = 'holder.last@example.com' WHERE "id" = $1`, [last!.id])
      await gate.query('BEGIN')
      await gate.query(`UPDATE "Contact" SET "email" = 'gate@example.com' WHERE "id" = $1`, [middle!.id])
      const [holderPid, gatePid] = [await pidOf(holder), await pidOf(gate)]

      const body = { contacts: sorted.map((c, i) => ({ first_name: `After ${i}`, mobile: c.mobile })).reverse() }
      const request = kit.rest('POST', `/api/contact/group/${s.group.id}/add-contacts`, { key: s.key, body })
      let servicePid = 0
      await until('add-contacts waiting on the middle contact', async () => {
        servicePid = (await blockedBy(watch, gatePid))[0] ?? 0
        return servicePid !== 0
      })
      const holderWrite = holder.query(`UPDATE "Contact" SET "email" = 'holder.first@example.com' WHERE "id" = $1`, [first!.id])
      await until('the holder waiting on add-contacts for the first contact', async () =>
        (await blockedBy(watch, servicePid)).includes(holderPid),
      )
      await gate.query('ROLLBACK')
      // Add-contacts was aborted, which let the holder's write through; the holder commits, and the retry goes on.
      expect((await holderWrite).rowCount).toBe(1)
      await holder.query('COMMIT')

      const answer = await request
      expect(answer).toMatchObject({ status: 200, body: { status: 'successful' } })
      const after = await snapshot(kit, s.account.id, s.group.id)
      expect(after.members).toBe(5)
      // The retry read the rows again: the holder's emails stay (add-contacts did not send one),
      // every name is the request's.
      expect(after.contacts.map(({ mobile, firstName, email }) => ({ mobile, firstName, email }))).toEqual(
        sorted.map((c, i) => ({
          mobile: c.mobile,
          firstName: `After ${i}`,
          email: c === first ? 'holder.first@example.com' : c === last ? 'holder.last@example.com' : `before${i}@example.com`,
        })),
      )
    } finally {
      await holder.query('ROLLBACK')
      await gate.query('ROLLBACK')
      await Promise.all([holder.end(), gate.end(), watch.end()])
    }
  }, 30_000)

  it('runs save contact again after a serialization failure (40001)', async () => {
    const s = await kit.seed().account()
    const failing = await failWrites(kit, s.account.id, '40001', { times: 1 })
    try {
      const m = mobile()
      const saved = await kit.rest('POST', '/api/contact/save', { key: s.key, body: { first_name: 'Second run', mobile: m } })
      expect(saved).toMatchObject({ status: 200, body: { new: true, message: 'Contact Added' } })
      expect(await failing.failures()).toBe(1)
      expect(await kit.db.contact.findMany({ where: { accountId: s.account.id }, select: { mobile: true, firstName: true } })).toEqual([
        { mobile: m, firstName: 'Second run' },
      ])
    } finally {
      await failing.drop()
    }
  })

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After once every run was aborted, and changes nothing', async () => {
    const s = await kit
      .seed()
      .account()
      .group()
      .contacts(2, (i) => ({ firstName: `Before ${i}` }))
    const before = await snapshot(kit, s.account.id, s.group.id)
    const failing = await failWrites(kit, s.account.id, '40P01')
    try {
      const contacts = [...s.contacts.map((c) => ({ first_name: 'Changed', mobile: c.mobile })), { first_name: 'New', mobile: mobile() }]
      const add = () =>
        kit.rest('POST', `/api/contact/group/${s.group.id}/add-contacts`, {
          key: s.key,
          body: { contacts },
          headers: { 'idempotency-key': 'write-conflict-1' },
        })
      const rest = await add()
      expect(rest.status).toBe(503)
      expect(rest.headers.get('retry-after')).toBe('1')
      expect(rest.body).toEqual({
        error: 'Concurrent writes to the same records kept colliding; try again shortly',
        code: 'SERVICE_UNAVAILABLE',
      })
      expect(await failing.failures()).toBe(WRITE_CONFLICT_ATTEMPTS)

      const graphql = await kit.rest('POST', '/graphql', {
        key: s.key,
        body: {
          query: 'mutation($g: ID!, $c: [SaveContactInput!]!) { addContactsToGroup(groupId: $g, contacts: $c) { enlisted } }',
          variables: { g: s.group.id, c: contacts.map((c) => ({ firstName: c.first_name, mobile: c.mobile })) },
        },
      })
      expect(graphql.status).toBe(503)
      expect(graphql.headers.get('retry-after')).toBe('1')
      expect(graphql.body).toMatchObject({
        data: null,
        errors: [
          {
            message: 'Concurrent writes to the same records kept colliding; try again shortly',
            extensions: { code: 'SERVICE_UNAVAILABLE' },
          },
        ],
      })
      expect(await failing.failures()).toBe(2 * WRITE_CONFLICT_ATTEMPTS)
      expect(await snapshot(kit, s.account.id, s.group.id)).toEqual(before)

      // The 503 was not kept under its Idempotency-Key: the same request, once the writes go through, runs.
      await failing.drop()
      const again = await add()
      expect(again).toMatchObject({ status: 200, body: { status: 'successful' } })
      expect(again.headers.get('idempotency-replayed')).toBeNull()
      expect((await snapshot(kit, s.account.id, s.group.id)).members).toBe(3)
    } finally {
      await failing.drop()
    }
  })

  it('runs a group update again after a deadlock (40P01)', async () => {
    const s = await kit.seed().account().group({ name: 'Old name' })
    const failing = await failWrites(kit, s.account.id, '40P01', { times: 1, on: 'UPDATE ON "Group"' })
    try {
      const res = await kit.rest('PATCH', `/api/contact/group/${s.group.id}/update`, { key: s.key, body: { name: 'New name' } })
      expect(res.status).toBe(200)
      expect(await failing.failures()).toBe(1)
      expect(await kit.db.group.findUniqueOrThrow({ where: { id: s.group.id }, select: { name: true } })).toEqual({ name: 'New name' })
    } finally {
      await failing.drop()
    }
  })
})
