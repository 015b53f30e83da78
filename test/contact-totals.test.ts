// The totals the contact lists show come from ListTotal rows kept by triggers (migration
// list_totals_and_search), not from counting. After any mix of saves, deletes, add-contacts,
// delists and group deletes, on any account and group, each total must equal a real COUNT(*).
import { describe, expect, it, beforeAll } from 'vitest'
import fc from 'fast-check'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { createAccount } from '../src/accounts/create-account.js'
import { createGroup, deleteGroup } from '../src/messaging/groups.js'
import { deleteContact } from '../src/messaging/contacts.js'
import { addContactsToGroup, delistContacts, saveContact } from '../src/messaging/upsert-contacts.js'
import Database from 'better-sqlite3'
import pg from 'pg'
import { migrationsOf } from '../src/db/migrate.js'
import { parseDatabaseUrl } from '../src/db/connection-url.js'
import { graphql } from '../src/graphql/typed-documents.js'

const ACCOUNTS = 2
const GROUPS = 3
const MOBILES = 20
const mobileOf = (account: number, n: number) => `+2547${String(20_000_000 + account * 1000 + n)}`

type Op =
  | { kind: 'save'; account: number; n: number; groups: number[] }
  | { kind: 'delete'; account: number; n: number }
  | { kind: 'add'; account: number; group: number; ns: number[] }
  | { kind: 'delist'; account: number; group: number; ns: number[] }
  | { kind: 'deleteGroup'; account: number; group: number }

const account = fc.nat(ACCOUNTS - 1)
const group = fc.nat(GROUPS - 1)
const n = fc.nat(MOBILES - 1)
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('save' as const), account, n, groups: fc.uniqueArray(group, { maxLength: 2 }) }),
  fc.record({ kind: fc.constant('delete' as const), account, n }),
  fc.record({ kind: fc.constant('add' as const), account, group, ns: fc.array(n, { minLength: 1, maxLength: 8 }) }),
  fc.record({ kind: fc.constant('delist' as const), account, group, ns: fc.array(n, { minLength: 1, maxLength: 8 }) }),
  fc.record({ kind: fc.constant('deleteGroup' as const), account, group }),
)

describe.each(targets)('list totals on $name', (target) => {
  const kit = useKit(target)
  const accounts: { id: string; key: string; groups: (string | null)[] }[] = []

  beforeAll(async () => {
    for (let i = 0; i < ACCOUNTS; i++) {
      const { account, apiKey } = await createAccount(kit.deps, { name: `Totals ${i}` })
      accounts.push({ id: account.id, key: apiKey, groups: Array(GROUPS).fill(null) })
    }
  })

  async function groupOf(a: number, g: number) {
    const slot = accounts[a]!
    slot.groups[g] ??= (await createGroup(kit.deps, slot.id, { name: `G${g}` })).group.id
    return slot.groups[g]!
  }

  async function apply(o: Op) {
    const a = accounts[o.account]!
    if (o.kind === 'save') {
      const groups = await Promise.all(o.groups.map((g) => groupOf(o.account, g)))
      await saveContact(kit.deps, a.id, { mobile: mobileOf(o.account, o.n), firstName: `P${o.n}`, groups })
    } else if (o.kind === 'delete') {
      const contact = await kit.db.contact.findFirst({ where: { accountId: a.id, mobile: mobileOf(o.account, o.n) }, select: { id: true } })
      if (contact) await deleteContact(kit.deps, a.id, contact.id)
    } else if (o.kind === 'add') {
      const inputs = o.ns.map((m) => ({ mobile: mobileOf(o.account, m), firstName: `P${m}` }))
      await addContactsToGroup(kit.deps, a.id, await groupOf(o.account, o.group), inputs)
    } else if (o.kind === 'delist') {
      await delistContacts(
        kit.deps,
        a.id,
        await groupOf(o.account, o.group),
        o.ns.map((m) => mobileOf(o.account, m)),
      )
    } else if (a.groups[o.group]) {
      await deleteGroup(kit.deps, a.id, a.groups[o.group]!)
      a.groups[o.group] = null
    }
  }

  /** Every total a list shows (REST meta, GraphQL pageInfo, the ListTotal row) against COUNT(*). */
  async function expectTotalsTrue() {
    for (const a of accounts) {
      const contacts = await kit.db.contact.count({ where: { accountId: a.id } })
      const rest = await kit.rest('GET', '/api/contacts?perPage=100', { key: a.key })
      expect(rest.body.meta.total).toBe(contacts)
      expect(rest.body.data).toHaveLength(contacts)
      expect((await kit.db.listTotal.findUnique({ where: { listId: a.id } }))?.total).toBe(contacts)
      for (const g of a.groups) {
        if (!g) continue
        const members = await kit.db.membership.count({ where: { groupId: g } })
        const data = await kit.gql(
          graphql(`query ($id: ID!) { group(id: $id) { contacts(perPage: 100) { nodes { id } pageInfo { total } } } }`),
          { id: g },
          a.key,
        )
        expect(data.group?.contacts.pageInfo.total).toBe(members)
        expect(data.group?.contacts.nodes).toHaveLength(members)
        expect((await kit.db.listTotal.findUnique({ where: { listId: g } }))?.total).toBe(members)
      }
    }
    // No row left behind for a deleted group, none missing for a live one.
    const lists = (await kit.db.listTotal.findMany({ select: { listId: true } })).map((r) => r.listId).sort()
    const live = [...(await kit.db.account.findMany({ select: { id: true } })), ...(await kit.db.group.findMany({ select: { id: true } }))]
      .map((r) => r.id)
      .sort()
    expect(lists).toEqual(live)
    if (target.name === 'sqlite')
      await kit.db.$executeRawUnsafe(`INSERT INTO "ContactSearch"("ContactSearch", rank) VALUES ('integrity-check', 1)`)
  }

  it('keeps every total equal to COUNT(*) after random mixes of saves, deletes, add-contacts, delists and group deletes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        for (const o of ops) await apply(o)
        await expectTotalsTrue()
      }),
      { numRuns: 12, seed: 808 },
    )
    // The runs above wrote something worth counting.
    expect(await kit.db.contact.count()).toBeGreaterThan(10)
  })

  it('keeps the totals true when writers of one account and group run at once', async () => {
    const a = accounts[0]!
    const g = await groupOf(0, 0)
    const writes = [
      ...Array.from(
        { length: 6 },
        (_, i) => () => saveContact(kit.deps, a.id, { mobile: mobileOf(0, 100 + i), firstName: `C${i}`, groups: [g] }),
      ),
      ...Array.from(
        { length: 3 },
        (_, i) => () =>
          addContactsToGroup(
            kit.deps,
            a.id,
            g,
            Array.from({ length: 20 }, (_, j) => ({ mobile: mobileOf(0, 200 + i * 20 + j), firstName: `B${j}` })),
          ),
      ),
      () => delistContacts(kit.deps, a.id, g, [mobileOf(0, 100), mobileOf(0, 101)]),
    ]
    const results = await Promise.allSettled(writes.map((w) => w()))
    expect(results.filter((r) => r.status === 'rejected')).toEqual([])
    const victims = await kit.db.contact.findMany({
      where: { accountId: a.id, mobile: { in: [mobileOf(0, 102), mobileOf(0, 200), mobileOf(0, 221)] } },
      select: { id: true },
    })
    await Promise.all(victims.map((v) => deleteContact(kit.deps, a.id, v.id)))
    await expectTotalsTrue()
  })

  it('backfills the totals, the search index and the members’ sort keys for rows written before the migrations', async () => {
    // A fresh database with every migration before list_totals_and_search, some rows, then the rest.
    const handle = await target.create()
    const all = migrationsOf(target.name)
    const cut = all.findIndex((m) => m.name.endsWith('_list_totals_and_search'))
    const rows = `INSERT INTO "Account" ("id", "name") VALUES ('a1', 'Old'), ('a2', 'Empty');
      INSERT INTO "Group" ("id", "accountId", "name", "nameKey", "searchText", "updatedAt") VALUES ('g1', 'a1', 'G', 'g', 'g', CURRENT_TIMESTAMP);
      INSERT INTO "Contact" ("id", "accountId", "mobile", "firstName", "firstNameKey", "familyNameKey", "searchText", "updatedAt") VALUES
        ('c1', 'a1', '+254710000001', 'Old One', 'old one', '', 'old one', CURRENT_TIMESTAMP),
        ('c2', 'a1', '+254710000002', 'Older', 'older', '', 'older', CURRENT_TIMESTAMP);
      INSERT INTO "Membership" ("groupId", "contactId") VALUES ('g1', 'c2');`
    const check = `SELECT (SELECT "total" FROM "ListTotal" WHERE "listId" = 'a1') AS a1, (SELECT "total" FROM "ListTotal" WHERE "listId" = 'a2') AS a2,
      (SELECT "total" FROM "ListTotal" WHERE "listId" = 'g1') AS g1`
    // A membership from before migration membership_sort_keys gets its contact's sort keys.
    const memberKeys = `SELECT "firstNameKey", "familyNameKey" FROM "Membership"`
    try {
      if (target.name === 'sqlite') {
        const db = new Database(parseDatabaseUrl(handle.url).file!)
        for (const m of all.slice(0, cut)) db.exec(m.sql)
        db.exec(rows)
        for (const m of all.slice(cut)) db.exec(m.sql)
        expect(db.prepare(check).get()).toEqual({ a1: 2, a2: 0, g1: 1 })
        expect(db.prepare(memberKeys).all()).toEqual([{ firstNameKey: 'older', familyNameKey: '' }])
        expect(db.prepare(`SELECT rowid FROM "ContactSearch" WHERE "ContactSearch" MATCH '"older"'`).all()).toHaveLength(1)
        db.exec(`INSERT INTO "ContactSearch"("ContactSearch", rank) VALUES ('integrity-check', 1)`)
        db.close()
      } else {
        const { connectionString, schema } = parseDatabaseUrl(handle.url)
        const client = new pg.Client({ connectionString })
        await client.connect()
        try {
          await client.query(`CREATE SCHEMA "${schema}"; SET search_path TO "${schema}"`)
          for (const m of all.slice(0, cut)) await client.query(m.sql)
          await client.query(rows)
          for (const m of all.slice(cut)) await client.query(m.sql)
          expect((await client.query(check)).rows[0]).toEqual({ a1: 2, a2: 0, g1: 1 })
          expect((await client.query(memberKeys)).rows).toEqual([{ firstNameKey: 'older', familyNameKey: '' }])
        } finally {
          await client.end()
        }
      }
    } finally {
      await handle.drop()
    }
  })
})
