// The indexed search (FTS5 trigram on SQLite, pg_trgm on PostgreSQL) behind the contacts lists must
// answer exactly what the plain substring LIKE it replaced answers: the same contacts, the same
// order, the same totals, for random text and random terms (short ones, LIKE wildcards, non-ASCII,
// mixed case), on the all-contacts list and a group's list, and never another account's contacts.
import { describe, expect, it, beforeAll } from 'vitest'
import fc from 'fast-check'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { mobile } from './kit/seed.js'
import { createAccount } from '../src/accounts/create-account.js'
import { createGroup } from '../src/messaging/groups.js'
import { parseContacts } from '../src/messaging/contacts.js'
import { upsertContacts } from '../src/messaging/upsert-contacts.js'
import { isTrigramTerm, listContacts } from '../src/messaging/contact-list.js'
import { contactListTotal } from '../src/messaging/list-totals.js'
import { prismaPage } from './kit/contact-pages.js'
import { pageRequest } from '../src/messaging/paging.js'

// Characters chosen to trip an index that is not exact: LIKE wildcards and escape, case pairs,
// characters whose Unicode case folding differs from JavaScript's lower-casing (ſ/s, ς/σ, ß, İ, K),
// accents (no diacritics folding allowed), a surrogate pair, quotes (FTS5 syntax) and separators.
const ALPHABET = [
  'a',
  'b',
  'A',
  'B',
  'é',
  'É',
  'e',
  'ß',
  's',
  'S',
  'ſ',
  'ς',
  'σ',
  'Σ',
  'İ',
  'i',
  'K',
  'k',
  '%',
  '_',
  '\\',
  '"',
  "'",
  '*',
  ' ',
  '-',
  '1',
  '2',
  '😀',
  '+',
]
const text = (max: number) => fc.array(fc.constantFrom(...ALPHABET), { minLength: 1, maxLength: max }).map((a) => a.join(''))

describe.each(targets)('contact search on $name is exactly the substring match', (target) => {
  const kit = useKit(target)
  let accountId: string
  let otherAccountId: string
  let groupId: string
  const stored: string[] = []

  beforeAll(async () => {
    const deps = kit.deps
    accountId = (await createAccount(deps, { name: 'Search' })).account.id
    otherAccountId = (await createAccount(deps, { name: 'Other' })).account.id
    groupId = (await createGroup(deps, accountId, { name: 'Half' })).group.id
    const people = fc.sample(
      fc.record({ firstName: text(8), familyName: text(8), organization: fc.option(text(10), { nil: undefined }) }),
      { numRuns: 120, seed: 8 },
    )
    const inputs = people.map((p) => ({ ...p, mobile: mobile() }))
    // Half of them on the group; the other account holds the same names (isolation).
    await upsertContacts(deps, accountId, parseContacts(inputs.slice(0, 60), 'KE'), groupId)
    await upsertContacts(deps, accountId, parseContacts(inputs.slice(60), 'KE'))
    await upsertContacts(
      deps,
      otherAccountId,
      parseContacts(
        inputs.map((p) => ({ ...p, mobile: mobile() })),
        'KE',
      ),
    )
    // Renames go through the update trigger of the search index.
    await upsertContacts(deps, accountId, parseContacts([{ ...inputs[0]!, firstName: 'Zed Ünïcode "quoted"' }], 'KE'))
    stored.push(...people.flatMap((p) => [p.firstName, p.familyName, p.organization ?? '']), 'Zed Ünïcode "quoted"')
  })

  /** What the lists answered before the index: Prisma's contains (LIKE '%term%'), ordered, paged and counted. */
  const reference = (search: string, page: number, perPage: number, group?: string) =>
    prismaPage(kit.db, { accountId, groupId: group }, { search, page, perPage }, ['firstName'])

  /**
   * plan: what drives the read, as listContacts chooses it on SQLite (searchPlan): the account's
   * contacts, the search index's candidates (a big account), the group's members (a small group).
   * None: listContacts chooses.
   */
  async function indexed(search: string, page: number, perPage: number, group?: string, plan?: 'account' | 'candidates' | 'members') {
    const request = pageRequest({ search, page, perPage })
    const chosen = plan ? { candidatesFirst: plan === 'candidates', membersFirst: plan === 'members' } : {}
    const { rows, total } = await listContacts(kit.deps, { accountId, groupId: group, request, ...chosen }, ['id', 'firstName'])
    return { rows, total }
  }

  it('answers every term like the plain LIKE (all contacts and the group, pages and totals)', async () => {
    // Terms: substrings of stored text (so there are hits), some upper-cased, and random strings.
    const terms = fc.oneof(
      fc.tuple(fc.nat(), fc.nat(), fc.integer({ min: 1, max: 6 }), fc.boolean()).map(([i, start, len, upper]) => {
        const source = stored[i % stored.length]!
        const chars = [...source]
        const from = start % chars.length
        const piece = chars.slice(from, from + len).join('')
        return upper ? piece.toUpperCase() : piece
      }),
      text(5),
    )
    let withHits = 0
    let indexedTerms = 0
    await fc.assert(
      fc.asyncProperty(
        terms,
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom(1, 7, 100),
        fc.boolean(),
        fc.constantFrom('account' as const, 'candidates' as const, 'members' as const, undefined),
        async (search, page, perPage, inGroup, plan) => {
          if (!search.trim()) return
          const group = inGroup ? groupId : undefined
          const [want, got] = await Promise.all([reference(search, page, perPage, group), indexed(search, page, perPage, group, plan)])
          expect(got.total, `search ${JSON.stringify(search)}`).toBe(want.total)
          expect(got.rows, `search ${JSON.stringify(search)}`).toEqual(want.rows)
          if (want.total > 0) withHits++
          if (isTrigramTerm(search.trim().toLowerCase())) indexedTerms++
        },
      ),
      { numRuns: 150, seed: 88 },
    )
    // The property means something only if many terms hit and many went through the index.
    expect(withHits).toBeGreaterThan(50)
    expect(indexedTerms).toBeGreaterThan(40)
  })

  it.runIf(target.name === 'sqlite')(
    'reads a small group’s search from its members, and a rare term from the search index (SQLite)',
    async () => {
      // 390 contacts off the group and 10 on it: reading 10 members (MEMBER_COST each) costs less than scanning 400 contacts.
      const s = await kit
        .seed()
        .account()
        .contacts(390, (i) => ({ firstName: `Ibis ${String(i).padStart(4, '0')}` }))
        .group()
        .contacts(10, (i) => ({ firstName: `Ibis Member ${i}` }))
      const big = await createGroup(kit.deps, s.account.id, { name: 'Twenty' })
      const twenty = s.contacts.slice(0, 20).map((c) => ({ mobile: c.mobile, firstName: c.firstName }))
      await upsertContacts(kit.deps, s.account.id, parseContacts(twenty, 'KE'), big.group.id)
      /** The page as listContacts plans it, against Prisma's; and how the statement read the list. */
      const planned = async (group: string, search: string) => {
        kit.statements.length = 0
        const request = pageRequest({ search, page: 1, perPage: 5 })
        const got = await listContacts(kit.deps, { accountId: s.account.id, groupId: group, request }, ['id', 'firstName'])
        const page = kit.statements.at(-1)!
        const want = await prismaPage(kit.db, { accountId: s.account.id, groupId: group }, { search, page: 1, perPage: 5 }, ['firstName'])
        expect({ rows: got.rows, total: got.total }, search).toEqual(want)
        return page.includes('CROSS JOIN "Contact"') ? 'members' : page.includes('+c."accountId"') ? 'candidates' : 'account'
      }
      // "ibis": 400 candidates in the search index, more than the 10 members cost: the members.
      expect(await planned(s.group.id, 'ibis')).toBe('members')
      // "member 3": one candidate, fewer than the members cost: the search index.
      expect(await planned(s.group.id, 'member 3')).toBe('candidates')
      // A group of 20 costs more than the account's 400: the account's contacts, as an account's search.
      expect(await planned(big.group.id, 'ibis')).toBe('account')
      // The total without a page (totalCount) plans the same way.
      kit.statements.length = 0
      expect(await contactListTotal(kit.deps, { accountId: s.account.id, groupId: s.group.id, searchKey: 'ibis' })).toBe(10)
      expect(kit.statements.at(-1)).toContain('CROSS JOIN "Contact"')
    },
  )

  it('takes the index for terms of three characters or more and a scan below, with the same answers', async () => {
    expect(isTrigramTerm('ab')).toBe(false)
    expect(isTrigramTerm('a😀')).toBe(false) // two characters, three UTF-16 units
    expect(isTrigramTerm('abc')).toBe(true)
    for (const search of ['%', '_', '\\', '%_', '"', 'ſ', 'ς', '😀', 'zed', 'ünï', 'ÜNÏ', '"quoted"', '"quo', 'ed ü', 'e', 'é']) {
      const [want, got] = await Promise.all([reference(search, 1, 100), indexed(search, 1, 100)])
      expect(got, search).toEqual(want)
    }
    // The renamed contact is found by its new name only.
    expect((await indexed('ünïcode', 1, 10)).total).toBe(1)
  })

  it('answers the REST list with the same contacts and meta as the plain LIKE, never another account’s', async () => {
    const { account, apiKey } = await createAccount(kit.deps, { name: 'Rest search' })
    await upsertContacts(
      kit.deps,
      account.id,
      parseContacts(
        [
          { mobile: mobile(), firstName: 'Percent 100%', familyName: 'Under_score' },
          { mobile: mobile(), firstName: 'Back\\slash', familyName: 'PLAIN' },
          { mobile: mobile(), firstName: 'Plain', familyName: 'Percent 1000' },
        ],
        'KE',
      ),
    )
    const cases: [string, string[]][] = [
      ['100%', ['Percent 100%']],
      ['%', ['Percent 100%']],
      ['r_s', ['Percent 100%']],
      ['\\s', ['Back\\slash']],
      ['PLAIN', ['Back\\slash', 'Plain']],
      ['percent 10', ['Percent 100%', 'Plain']],
      ['zed', []],
    ]
    for (const [search, names] of cases) {
      const res = await kit.rest('GET', `/api/contacts?search=${encodeURIComponent(search)}`, { key: apiKey })
      expect(res.status).toBe(200)
      expect(
        res.body.data.map((c: any) => c.first_name),
        search,
      ).toEqual(names)
      expect(res.body.meta.total, search).toBe(names.length)
    }
  })

  it('refuses a column outside the fixed list before any SQL is built (names are the only raw fragments)', async () => {
    const request = pageRequest({})
    await expect(listContacts(kit.deps, { accountId, request }, ['id', 'searchText' as never])).rejects.toThrow(/not a contact list column/)
    await expect(listContacts(kit.deps, { accountId, request }, ['id" FROM "ApiKey" --' as never])).rejects.toThrow(
      /not a contact list column/,
    )
  })

  it.runIf(target.name === 'sqlite')(
    "reads a big account's search from the index's candidates when the term is rare, from the account otherwise",
    async () => {
      const { account } = await createAccount(kit.deps, { name: 'Big' })
      // 21,000 contacts (above SEARCH_ACCOUNT_SCAN_MAX), 21 of them "Zqrare"; the triggers fill the search index.
      await kit.db.$executeRawUnsafe(
        `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 20999)
         INSERT INTO "Contact" ("id", "accountId", "mobile", "firstName", "firstNameKey", "familyNameKey", "searchText", "updatedAt")
         SELECT 'big-' || i, ?, '+2547' || (30000000 + i), n.name, lower(n.name), '', lower(n.name) || char(10) || '+2547' || (30000000 + i), '2026-01-01'
         FROM (SELECT i, CASE WHEN i % 1000 = 7 THEN 'Zqrare' ELSE 'Common' END AS name FROM n) n`,
        account.id,
      )
      const search = async (term: string) => {
        kit.statements.length = 0
        const page = await listContacts(kit.deps, { accountId: account.id, request: pageRequest({ search: term, page: 1, perPage: 25 }) }, [
          'id',
        ])
        const drivenByCandidates = kit.statements.some((q) => q.includes('+c."accountId"'))
        return { total: page.total, first: page.rows[0]?.id, drivenByCandidates }
      }
      // The account's size is not known yet (its contacts came in by SQL): the account's index, one statement.
      expect(await search('zqra')).toEqual({ total: 21, first: 'big-10007', drivenByCandidates: false })
      expect(kit.statements).toHaveLength(1)
      // That search carried the size: now the rare term goes by its candidates, the common one by the account.
      expect(await search('zqra')).toEqual({ total: 21, first: 'big-10007', drivenByCandidates: true })
      expect(await search('comm')).toEqual({ total: 20_979, first: 'big-0', drivenByCandidates: false })
    },
    30_000,
  )

  it.runIf(target.name === 'sqlite')('keeps the FTS5 index equal to the contacts (integrity-check against the content table)', async () => {
    await kit.db.contact.deleteMany({ where: { accountId: otherAccountId, firstName: { startsWith: 'a' } } })
    const integrityCheck = () =>
      kit.db.$executeRawUnsafe(`INSERT INTO "ContactSearch"("ContactSearch", rank) VALUES ('integrity-check', 1)`)
    await expect(integrityCheck()).resolves.toBe(1)
    // The check does fail on an index that drifted from its table: index a text no contact has.
    const [row] = await kit.db.$queryRawUnsafe<{ rowid: number }[]>(`SELECT rowid FROM "Contact" LIMIT 1`)
    await kit.db.$executeRawUnsafe(`INSERT INTO "ContactSearch"(rowid, "searchText") VALUES (${Number(row!.rowid)}, 'drifted text')`)
    await expect(integrityCheck()).rejects.toThrow(/malformed|corrupt/i)
    await kit.db.$executeRawUnsafe(`INSERT INTO "ContactSearch"("ContactSearch") VALUES ('rebuild')`)
    await expect(integrityCheck()).resolves.toBe(1)
  })

  it.runIf(target.name === 'postgresql')('plans a substring search of three characters on the trigram index', async () => {
    // Plans without statistics prefer a scan on tiny tables; what matters is that the index is usable.
    await kit.db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe('SET LOCAL enable_seqscan = off')
      const plan = await tx.$queryRawUnsafe<{ 'QUERY PLAN': string }[]>(`EXPLAIN SELECT id FROM "Contact" WHERE "searchText" LIKE '%abc%'`)
      expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Contact_searchText_trgm_idx/)
    })
  })
})
