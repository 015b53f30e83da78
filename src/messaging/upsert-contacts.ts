// The contact write path: save, add-to-group and delist, in bulk SQL.
import { timeOrderedId } from '../db/time-ordered-id.js'
import type { Deps } from '../deps.js'
import { directTimestamp, type DirectStatement } from '../db/client.js'
import { Prisma } from '../generated/sqlite/client.js'
import { contactIdsByMobile, jsonTexts } from '../db/json-texts.js'
import { notFound, validationError, type AppError, type ErrorDetail } from '../core/errors.js'
import { isStorableText } from './input-rules.js'
import { retryWriteConflicts } from '../db/write-conflict.js'
import { normalizeMobile } from './mobile.js'
import {
  CONTACT_COLUMNS,
  MAX_CONTACTS_PER_REQUEST,
  OPTIONAL_TEXT_FIELDS,
  contactKeys,
  type ContactColumn,
  parseContact,
  parseContacts,
  type ContactInput,
  type ParsedContact,
} from './contacts.js'

const COLUMNS = CONTACT_COLUMNS
type Column = ContactColumn

/** What a save may change on an existing row; the identity and the creation time stay. */
const UPDATED = COLUMNS.filter((c) => !['id', 'accountId', 'mobile', 'createdAt'].includes(c))
/**
 * What an existing row is read with: the fields a merge starts from, and the keys and search text
 * (recomputed from the merge) to tell whether it changes anything (`unchanged`).
 */
const READ = COLUMNS.filter((c) => !['accountId', 'createdAt', 'updatedAt'].includes(c))
/** The columns whose values make a row changed: every updated one but the time of the update. */
const COMPARED = UPDATED.filter((c) => c !== 'updatedAt')

// Identifiers come from the constant lists above, never from input.
const ident = (column: string) => Prisma.raw(`"${column}"`)
const READ_COLUMNS = Prisma.join(READ.map(ident))
const TIMESTAMP_COLUMNS = new Set<Column>(['createdAt', 'updatedAt'])

/**
 * Rows go to the database as ONE bound value, a JSON array of arrays (column order: COLUMNS), and
 * come out of it as rows in SQL: `json_each` on SQLite, `jsonb_array_elements` on PostgreSQL.
 * Through Prisma each bound value costs about as much as the rest of a statement (it is
 * serialised into the query plan and back), and 1,000 contacts are 23,000 values; one JSON text
 * is one value, and no bind-count limit applies. JSON null is SQL NULL on both (`->>`).
 */
function jsonRows(dbKind: Deps['dbKind'], rows: (string | null)[][]): Prisma.Sql {
  const json = JSON.stringify(rows)
  // WHERE true: SQLite's parser needs it before an upsert's ON CONFLICT after INSERT ... SELECT.
  return dbKind === 'sqlite'
    ? Prisma.sql`SELECT ${SQLITE_ROW_VALUES} FROM json_each(${json}) WHERE true`
    : Prisma.sql`SELECT ${POSTGRES_ROW_VALUES} FROM jsonb_array_elements(${json}::jsonb) r`
}
const SQLITE_ROW_VALUES = Prisma.join(COLUMNS.map((_, i) => Prisma.raw(`value ->> ${i}`)))
const POSTGRES_ROW_VALUES = Prisma.join(
  COLUMNS.map((c, i) => Prisma.raw(TIMESTAMP_COLUMNS.has(c) ? `(r ->> ${i})::timestamp(3)` : `r ->> ${i}`)),
)
const INSERT_COLUMNS = Prisma.join(COLUMNS.map(ident))
const UPDATE_SET = Prisma.join(UPDATED.map((c) => Prisma.sql`${ident(c)} = excluded.${ident(c)}`))

/** Rows a statement; a chunk's look-up, merge and write hold only its own rows in memory. */
const CONTACT_CHUNK = 1000
/** Memberships a statement (one JSON array of contact ids or mobiles). */
const MEMBERSHIP_CHUNK = 10_000

/** What the driver adapter reports for a raw statement that broke a constraint (Prisma's P2010). */
const adapterErrorKind = (error: unknown) =>
  (error as { meta?: { driverAdapterError?: { cause?: { kind?: string } } } } | null)?.meta?.driverAdapterError?.cause?.kind
const errorCode = (error: unknown) => (typeof error === 'object' && error !== null ? (error as { code?: string }).code : undefined)

// The same violations as the drivers throw them (the direct transaction, Database.directTransaction),
// as Prisma's adapters report them (the fallback with traces on), and as Prisma's own codes.
const FOREIGN_KEY_CODES = new Set(['SQLITE_CONSTRAINT_FOREIGNKEY', '23503', 'P2003'])
const UNIQUE_CODES = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY', '23505', 'P2002'])

/** A group referred to went away during the transaction. */
const isForeignKeyViolation = (error: unknown) =>
  FOREIGN_KEY_CODES.has(errorCode(error)!) || adapterErrorKind(error) === 'ForeignKeyConstraintViolation'

/** Another transaction inserted a mobile this one had just seen missing. */
class ConcurrentInsert extends Error {}
const isRetryable = (error: unknown) =>
  error instanceof ConcurrentInsert ||
  UNIQUE_CODES.has(errorCode(error)!) ||
  adapterErrorKind(error) === 'UniqueConstraintViolation' ||
  isForeignKeyViolation(error)

/** One raw statement of the write's transaction, and its rows. */
type Run = <Row>(statement: Prisma.Sql) => Promise<Row[]>
const runOn =
  (run: DirectStatement): Run =>
  async <Row>(statement: Prisma.Sql) =>
    (await run(statement)) as Row[]

/** The contacts that joined each group (memberships this write created), by group id. */
export type Joined = Map<string, string[]>

/**
 * What one write did, per distinct mobile in the order written (mobile order): the contact's id,
 * whether this write created it, and its sort keys as written (the memberships copy them).
 * Arrays by position rather than an object per contact: a request of 10,000 keeps these until it
 * ends, and every object that lives that long is copied out of the young generation and then
 * marked by each full collection.
 */
interface Written {
  /** Position in the arrays below, by mobile. */
  position: Map<string, number>
  ids: string[]
  created: boolean[]
  firstNameKeys: string[]
  familyNameKeys: string[]
}

/**
 * Creates or overwrites contacts by mobile and enlists them on groups, all in one transaction.
 * Returns, per input, the contact id and whether it was created, and who joined which group (a
 * contact already on a group did not join it). Several inputs with one mobile are one contact
 * (later fields win).
 */
export async function upsertContacts(
  deps: Pick<Deps, 'directTransaction' | 'dbKind'>,
  accountId: string,
  contacts: ParsedContact[],
  extraGroupId?: string,
): Promise<{ saved: { id: string; created: boolean }[]; joined: Joined }> {
  const { written, joined } = await writeAndEnlist(deps, accountId, contacts, extraGroupId)
  const saved = contacts.map((c) => {
    const at = written.position.get(c.mobile)!
    return { id: written.ids[at]!, created: written.created[at]! }
  })
  return { saved, joined }
}

async function writeAndEnlist(
  { directTransaction, dbKind }: Pick<Deps, 'directTransaction' | 'dbKind'>,
  accountId: string,
  contacts: ParsedContact[],
  extraGroupId?: string,
): Promise<{ written: Written; joined: Joined }> {
  const position = new Map<string, number>()
  const unique: ParsedContact[] = []
  for (const c of contacts) {
    const at = position.get(c.mobile)
    if (at === undefined) {
      position.set(c.mobile, unique.length)
      unique.push(c)
    } else {
      const seen = unique[at]!
      unique[at] = { mobile: c.mobile, fields: { ...seen.fields, ...c.fields }, groups: [...seen.groups, ...c.groups] }
    }
  }
  // Rows are written (and on PostgreSQL locked) in mobile order, so two requests over the same
  // contacts take their locks in the same order and wait for each other rather than deadlock.
  unique.sort((a, b) => (a.mobile < b.mobile ? -1 : a.mobile > b.mobile ? 1 : 0))
  for (let i = 0; i < unique.length; i++) position.set(unique[i]!.mobile, i)

  // Raw statements without Prisma's runtime (Database.directTransaction); 10,000 contacts take seconds.
  // A writer that locks some of these contacts in another order can deadlock with this one, and
  // PostgreSQL may abort this side (40P01): the transaction runs again (retryWriteConflicts). Its
  // function writes the database only, and builds what it returns afresh on each run.
  const run = () =>
    retryWriteConflicts(() =>
      directTransaction(
        async (direct) => {
          const tx = runOn(direct)
          await assertGroupsExist(tx, dbKind, accountId, contacts, extraGroupId)
          const written = await writeContacts(tx, dbKind, accountId, unique, position)
          const joined = await enlist(tx, dbKind, directTimestamp(dbKind, new Date()), unique, written, extraGroupId)
          return { written, joined }
        },
        { timeout: 120_000, maxWait: 30_000 },
      ),
    )
  // A concurrent writer may insert the same new mobile first, or delete a group between the
  // existence check and the enlisting (foreign key): the next try sees the new state and answers
  // from it (the contact exists; the group is a 404 or an unknown-group 422).
  for (let attempt = 1; ; attempt++) {
    try {
      return await run()
    } catch (error) {
      if (isForeignKeyViolation(error) && attempt === 3) throw notFound('Group')
      if (!isRetryable(error) || attempt === 3) throw error
    }
  }
}

/** The request's groups, checked once, inside the transaction that enlists on them. */
async function assertGroupsExist(tx: Run, dbKind: Deps['dbKind'], accountId: string, contacts: ParsedContact[], extraGroupId?: string) {
  const wanted = new Set<string>()
  if (extraGroupId) wanted.add(extraGroupId)
  for (const c of contacts) for (const g of c.groups) wanted.add(g)
  if (wanted.size === 0) return
  const rows = await tx<{ id: string }>(
    Prisma.sql`SELECT "id" FROM "Group" WHERE "accountId" = ${accountId} AND "id" IN (${jsonTexts(dbKind, [...wanted])})`,
  )
  const found = new Set(rows.map((g) => g.id))
  if (extraGroupId && !found.has(extraGroupId)) throw notFound('Group')
  if (found.size === wanted.size) return
  const details: ErrorDetail[] = []
  contacts.forEach((c, i) =>
    c.groups.forEach((g, j) => {
      if (!found.has(g))
        details.push({
          field: contacts.length > 1 || extraGroupId ? `contacts[${i}].groups[${j}]` : `groups[${j}]`,
          message: `unknown group ${g}`,
        })
    }),
  )
  if (details.length) throw validationError(details)
}

/** The contact fields a save may set, with their positions in a row (COLUMNS order). */
const FIELD_COLUMNS = (['firstName', 'familyName', 'email', 'gender', ...OPTIONAL_TEXT_FIELDS] as const).map(
  (column) => [column, COLUMNS.indexOf(column)] as const,
)
const AT = Object.fromEntries(COLUMNS.map((column, i) => [column, i])) as Record<Column, number>
/** Positions of the columns whose values make a row changed (every updated one but `updatedAt`). */
const COMPARED_AT = COMPARED.map((column) => [column as (typeof READ)[number], AT[column]] as const)

/**
 * Two statements a chunk: one reads the chunk's existing rows, one `INSERT ... ON CONFLICT DO
 * UPDATE` writes the rows that are new or changed. The merge happens here, not in SQL, because the
 * sort keys and the search text are lower-cased by JavaScript (`contactKeys`): SQLite's lower()
 * folds ASCII only and PostgreSQL's follows the database locale, so keys recomputed in SQL would
 * differ from those of every other write and from the search terms. The read also tells created
 * from updated on both databases (PostgreSQL's `xmax = 0` has no SQLite equivalent).
 *
 * An existing row whose merge changes nothing (every field, key and the search text as stored) is
 * not written: re-sending a list of known contacts, the usual add-contacts, then costs the read
 * and the memberships only. On PostgreSQL an UPDATE that changes nothing still writes a new row
 * version and its index entries (the search text's trigram index among them), later vacuumed.
 * Such a contact keeps its `updatedAt`, which is when it last changed.
 *
 * Each contact's row is built once, as the array that goes into the statement's JSON (COLUMNS
 * order): the sent fields over the stored row (or the table's defaults), then its keys.
 */
async function writeContacts(tx: Run, dbKind: Deps['dbKind'], accountId: string, contacts: ParsedContact[], position: Map<string, number>) {
  const count = contacts.length
  // Filled position by position, in order (so the arrays stay packed).
  const written: Written = { position, ids: [], created: [], firstNameKeys: [], familyNameKeys: [] }
  const now = directTimestamp(dbKind, new Date())
  // The chunk's existing rows. PostgreSQL: locked, so no other writer changes a field between this
  // read and the write (which writes the merged row whole), in mobile order (the chunk's order), so
  // that two requests over the same contacts wait for each other rather than deadlock; SQLite has
  // one writer at a time already. PostgreSQL reads them one unique-index look-up a mobile (a
  // lateral subquery with FOR UPDATE is never pulled up into a join), whatever the statistics say.
  // As `"mobile" IN (SELECT ...)` the plan followed them: while an account grew faster than ANALYZE
  // ran, the planner took it for a few hundred rows and read every contact of the account for each
  // chunk (a hash semi join over 98,000 rows, 31 ms a chunk of 1,000, at 100,000 contacts); as
  // `= ANY (ARRAY(...))` on a new table it filtered the account's rows by the array (21 ms).
  for (let start = 0; start < count; start += CONTACT_CHUNK) {
    const end = Math.min(start + CONTACT_CHUNK, count)
    const mobiles: string[] = []
    for (let i = start; i < end; i++) mobiles.push(contacts[i]!.mobile)
    const existing = await tx<Record<(typeof READ)[number], string | null>>(
      dbKind === 'postgresql'
        ? Prisma.sql`
      SELECT c.* FROM jsonb_array_elements_text(${JSON.stringify(mobiles)}::jsonb) AS m("mobile")
      CROSS JOIN LATERAL (
        SELECT ${READ_COLUMNS} FROM "Contact" WHERE "accountId" = ${accountId} AND "mobile" = m."mobile" FOR UPDATE
      ) c`
        : Prisma.sql`
      SELECT ${READ_COLUMNS} FROM "Contact"
      WHERE "accountId" = ${accountId} AND "mobile" IN (${jsonTexts(dbKind, mobiles)})
      ORDER BY "mobile"`,
    )
    const stored = new Map(existing.map((row) => [row.mobile!, row]))
    const rows: (string | null)[][] = []
    for (let i = start; i < end; i++) {
      const c = contacts[i]!
      const row = stored.get(c.mobile)
      const fields = c.fields as Partial<Record<Column, string | null>>
      // Every column in COLUMNS order, so the array is filled from its start.
      const next: (string | null)[] = []
      next[AT.id] = row ? row.id! : timeOrderedId()
      next[AT.accountId] = accountId
      next[AT.mobile] = c.mobile
      for (const [column, at] of FIELD_COLUMNS) {
        const sent = fields[column]
        next[at] = sent !== undefined ? sent : row ? (row[column] ?? null) : EMPTY_FIELDS[column]
      }
      const firstName = next[AT.firstName]!
      const familyName = next[AT.familyName]!
      const keys = contactKeys({
        firstName,
        familyName,
        otherNames: next[AT.otherNames],
        mobile: c.mobile,
        email: next[AT.email],
        organization: next[AT.organization],
      })
      next[AT.firstNameKey] = keys.firstNameKey
      next[AT.familyNameKey] = keys.familyNameKey
      next[AT.searchText] = keys.searchText
      next[AT.createdAt] = now
      next[AT.updatedAt] = now
      written.ids[i] = next[AT.id]!
      written.created[i] = !row
      written.firstNameKeys[i] = keys.firstNameKey
      written.familyNameKeys[i] = keys.familyNameKey
      if (!row || !unchanged(row, next)) rows.push(next)
    }
    if (!rows.length) continue
    const inserted = await tx<{ id: string; mobile: string }>(Prisma.sql`
      INSERT INTO "Contact" (${INSERT_COLUMNS})
      ${jsonRows(dbKind, rows)}
      ON CONFLICT ("accountId", "mobile") DO UPDATE SET ${UPDATE_SET}
      RETURNING "id", "mobile"`)
    // A row read as missing but written over an existing id was inserted by another transaction in
    // between: its fields were overwritten with defaults here, so this attempt must not commit.
    for (const { id, mobile } of inserted) if (written.ids[position.get(mobile)!] !== id) throw new ConcurrentInsert(mobile)
  }
  return written
}

/** True when writing `next` over the stored `row` would change no column but `updatedAt`. */
function unchanged(row: Record<(typeof READ)[number], string | null>, next: (string | null)[]): boolean {
  for (const [column, at] of COMPARED_AT) if ((row[column] ?? null) !== (next[at] ?? null)) return false
  return true
}

/** A new contact's stored fields when the client did not send them (the table's defaults). */
const EMPTY_FIELDS: Record<(typeof FIELD_COLUMNS)[number][0], string | null> = {
  firstName: null,
  familyName: '',
  gender: '',
  email: null,
  ...Object.fromEntries(OPTIONAL_TEXT_FIELDS.map((field) => [field, null])),
} as Record<(typeof FIELD_COLUMNS)[number][0], string | null>

/**
 * One `INSERT ... SELECT ... ON CONFLICT DO NOTHING` a group and chunk: a contact already on a group
 * stays once (and keeps how it joined). The chunk's contact ids and sort keys are one bound JSON
 * array of [id, firstNameKey, familyNameKey], inserted as they are: this transaction has just
 * written (or read and, on PostgreSQL, locked) those contacts, and the foreign key checks each (a
 * join with "Contact" cost a fifth of the statement on PostgreSQL). With the keys given, the
 * membership trigger that would copy them (migration membership_sort_keys) is not called.
 * RETURNING names the rows inserted, which are exactly the contacts that joined.
 */
async function enlist(
  tx: Run,
  dbKind: Deps['dbKind'],
  now: string,
  contacts: ParsedContact[],
  written: Written,
  extraGroupId: string | undefined,
): Promise<Joined> {
  // Positions (mobile order) of the contacts to enlist, by group.
  const byGroup = new Map<string, number[]>()
  const add = (groupId: string, at: number) => {
    const positions = byGroup.get(groupId)
    if (!positions) byGroup.set(groupId, [at])
    // A contact listed twice on one group (or on the extra group too) is enlisted once.
    else if (positions[positions.length - 1] !== at) positions.push(at)
  }
  contacts.forEach((c, at) => {
    if (extraGroupId) add(extraGroupId, at)
    for (const groupId of c.groups) add(groupId, at)
  })
  const joined: Joined = new Map()
  for (const [groupId, positions] of byGroup) {
    for (let i = 0; i < positions.length; i += MEMBERSHIP_CHUNK) {
      const json = JSON.stringify(
        positions.slice(i, i + MEMBERSHIP_CHUNK).map((at) => [written.ids[at], written.firstNameKeys[at], written.familyNameKeys[at]]),
      )
      const rows =
        dbKind === 'sqlite'
          ? Prisma.sql`SELECT ${groupId}, value ->> 0, ${now}, value ->> 1, value ->> 2 FROM json_each(${json}) WHERE true`
          : Prisma.sql`SELECT ${groupId}, r ->> 0, ${now}, r ->> 1, r ->> 2 FROM jsonb_array_elements(${json}::jsonb) r`
      const inserted = await tx<{ contactId: string }>(Prisma.sql`
        INSERT INTO "Membership" ("groupId", "contactId", "createdAt", "firstNameKey", "familyNameKey")
        ${rows}
        ON CONFLICT ("groupId", "contactId") DO NOTHING
        RETURNING "contactId"`)
      if (inserted.length) joined.set(groupId, [...(joined.get(groupId) ?? []), ...inserted.map((row) => row.contactId)])
    }
  }
  return joined
}

export async function saveContact(deps: Pick<Deps, 'directTransaction' | 'dbKind' | 'env'>, accountId: string, input: ContactInput) {
  const contact = parseContact(input, deps.env.DEFAULT_COUNTRY)
  const { saved, joined } = await upsertContacts(deps, accountId, [contact])
  return { ...saved[0]!, joined }
}

export async function addContactsToGroup(
  deps: Pick<Deps, 'db' | 'directTransaction' | 'dbKind' | 'env'>,
  accountId: string,
  groupId: string,
  inputs: ContactInput[],
) {
  if (!isStorableText(groupId)) throw notFound('Group')
  let contacts: ParsedContact[]
  try {
    contacts = parseContacts(inputs, deps.env.DEFAULT_COUNTRY)
  } catch (error) {
    // A missing group answers 404 before the items' 422. The happy path checks the group once,
    // inside the transaction; only a refused request pays for this look-up.
    const group = await deps.db.group.findFirst({ where: { id: groupId, accountId }, select: { id: true } })
    throw group ? (error as AppError) : notFound('Group')
  }
  const { written, joined } = await writeAndEnlist(deps, accountId, contacts, groupId)
  // Counted per input, as the answer always has: a new mobile sent twice counts twice.
  let created = 0
  for (const c of contacts) if (written.created[written.position.get(c.mobile)!]) created++
  return { groupId, count: written.ids.length, created, joined }
}

/**
 * Removes the numbers from the group; numbers that are unknown, invalid or not in the group are
 * ignored. Returns the group, how many left it, and who (RETURNING names the memberships deleted).
 */
export async function delistContacts(deps: Pick<Deps, 'db' | 'dbKind' | 'env'>, accountId: string, groupId: string, mobiles: string[]) {
  if (mobiles.length > MAX_CONTACTS_PER_REQUEST) {
    throw validationError([{ field: 'contacts', message: `at most ${MAX_CONTACTS_PER_REQUEST} numbers per request` }])
  }
  if (!isStorableText(groupId)) throw notFound('Group')
  const group = await deps.db.group.findFirst({ where: { id: groupId, accountId }, select: { id: true, name: true } })
  if (!group) throw notFound('Group')
  const normalized = [...new Set(mobiles.map((m) => normalizeMobile(m, deps.env.DEFAULT_COUNTRY)).filter((m): m is string => m !== null))]
  const left: string[] = []
  for (let i = 0; i < normalized.length; i += MEMBERSHIP_CHUNK) {
    const deleted = await deps.db.$queryRaw<{ contactId: string }[]>`
      DELETE FROM "Membership" WHERE "groupId" = ${groupId} AND "contactId" IN (${contactIdsByMobile(deps.dbKind, accountId, normalized.slice(i, i + MEMBERSHIP_CHUNK))})
      RETURNING "contactId"`
    for (const row of deleted) left.push(row.contactId)
  }
  return { group, removed: left.length, left }
}
