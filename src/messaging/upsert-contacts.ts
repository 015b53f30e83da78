// The contact write path: save, add-to-group and delist, in bulk SQL.
import { timeOrderedId } from '../db/time-ordered-id.js'
import type { Deps } from '../deps.js'
import { directTimestamp, type DirectStatement } from '../db/client.js'
import { Prisma } from '../generated/sqlite/client.js'
import { jsonTexts } from '../db/json-texts.js'
import { notFound, validationError, type AppError, type ErrorDetail } from '../core/errors.js'
import { isStorableText } from './input-rules.js'
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
type ContactRow = Record<Column, string | null>

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
function jsonRows(dbKind: Deps['dbKind'], rows: ContactRow[]): Prisma.Sql {
  const json = JSON.stringify(rows.map((row) => COLUMNS.map((c) => row[c])))
  if (dbKind === 'sqlite') {
    // WHERE true: SQLite's parser needs it before an upsert's ON CONFLICT after INSERT ... SELECT.
    return Prisma.sql`SELECT ${Prisma.join(COLUMNS.map((_, i) => Prisma.raw(`value ->> ${i}`)))} FROM json_each(${json}) WHERE true`
  }
  const values = COLUMNS.map((c, i) => Prisma.raw(TIMESTAMP_COLUMNS.has(c) ? `(r ->> ${i})::timestamp(3)` : `r ->> ${i}`))
  return Prisma.sql`SELECT ${Prisma.join(values)} FROM jsonb_array_elements(${json}::jsonb) r`
}

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
 * Creates or overwrites contacts by mobile and enlists them on groups, all in one transaction.
 * Returns, per input, the contact id and whether it was created, and who joined which group (a
 * contact already on a group did not join it). Several inputs with one mobile are one contact
 * (later fields win).
 */
export async function upsertContacts(
  { directTransaction, dbKind }: Pick<Deps, 'directTransaction' | 'dbKind'>,
  accountId: string,
  contacts: ParsedContact[],
  extraGroupId?: string,
): Promise<{ saved: { id: string; created: boolean }[]; joined: Joined }> {
  const byMobile = new Map<string, ParsedContact>()
  for (const c of contacts) {
    const seen = byMobile.get(c.mobile)
    byMobile.set(c.mobile, seen ? { mobile: c.mobile, fields: { ...seen.fields, ...c.fields }, groups: [...seen.groups, ...c.groups] } : c)
  }
  // Rows are written (and on PostgreSQL locked) in mobile order, so two requests over the same
  // contacts take their locks in the same order and wait for each other rather than deadlock.
  const unique = [...byMobile.values()].sort((a, b) => (a.mobile < b.mobile ? -1 : a.mobile > b.mobile ? 1 : 0))

  // Raw statements without Prisma's runtime (Database.directTransaction); 10,000 contacts take seconds.
  const run = () =>
    directTransaction(
      async (direct) => {
        const tx = runOn(direct)
        await assertGroupsExist(tx, dbKind, accountId, contacts, extraGroupId)
        const sortKeys = new Map<string, SortKeys>()
        const result = await writeContacts(tx, dbKind, accountId, unique, sortKeys)
        const memberships: Enlisted[] = []
        for (const c of unique) {
          const contactId = result.get(c.mobile)!.id
          const keys = sortKeys.get(contactId)!
          for (const groupId of new Set(extraGroupId ? [extraGroupId, ...c.groups] : c.groups))
            memberships.push({ groupId, contactId, keys })
        }
        const joined = await enlist(tx, dbKind, directTimestamp(dbKind, new Date()), memberships)
        return { saved: contacts.map((c) => result.get(c.mobile)!), joined }
      },
      { timeout: 120_000, maxWait: 30_000 },
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
  const wanted = new Set(contacts.flatMap((c) => c.groups))
  if (extraGroupId) wanted.add(extraGroupId)
  if (wanted.size === 0) return
  const rows = await tx<{ id: string }>(
    Prisma.sql`SELECT "id" FROM "Group" WHERE "accountId" = ${accountId} AND "id" IN (${jsonTexts(dbKind, [...wanted])})`,
  )
  const found = new Set(rows.map((g) => g.id))
  if (extraGroupId && !found.has(extraGroupId)) throw notFound('Group')
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
 */
async function writeContacts(
  tx: Run,
  dbKind: Deps['dbKind'],
  accountId: string,
  contacts: ParsedContact[],
  sortKeys: Map<string, SortKeys>,
) {
  const result = new Map<string, { id: string; created: boolean }>()
  const now = directTimestamp(dbKind, new Date())
  // PostgreSQL: lock the rows read, so no other writer changes a field between this read and the
  // write (which writes the merged row whole). SQLite has one writer at a time already.
  const lock = dbKind === 'postgresql' ? Prisma.sql`FOR UPDATE` : Prisma.empty
  for (let i = 0; i < contacts.length; i += CONTACT_CHUNK) {
    const chunk = contacts.slice(i, i + CONTACT_CHUNK)
    const existing = await tx<Record<(typeof READ)[number], string | null>>(Prisma.sql`
      SELECT ${READ_COLUMNS} FROM "Contact"
      WHERE "accountId" = ${accountId} AND "mobile" IN (${jsonTexts(
        dbKind,
        chunk.map((c) => c.mobile),
      )})
      ORDER BY "mobile" ${lock}`)
    const stored = new Map(existing.map((row) => [row.mobile!, row]))
    const rows: ContactRow[] = []
    for (const c of chunk) {
      const row = stored.get(c.mobile)
      const merged = row
        ? { ...row, ...c.fields, mobile: c.mobile }
        : { ...EMPTY_FIELDS, ...c.fields, id: timeOrderedId(), mobile: c.mobile }
      result.set(c.mobile, { id: merged.id!, created: !row })
      const next = {
        ...merged,
        ...contactKeys(merged as Parameters<typeof contactKeys>[0]),
        accountId,
        createdAt: now,
        updatedAt: now,
      } as ContactRow
      sortKeys.set(merged.id!, [next.firstNameKey!, next.familyNameKey!])
      if (!row || !unchanged(row, next)) rows.push(next)
    }
    if (!rows.length) continue
    const written = await tx<{ id: string; mobile: string }>(Prisma.sql`
      INSERT INTO "Contact" (${Prisma.join(COLUMNS.map(ident))})
      ${jsonRows(dbKind, rows)}
      ON CONFLICT ("accountId", "mobile") DO UPDATE SET ${Prisma.join(UPDATED.map((c) => Prisma.sql`${ident(c)} = excluded.${ident(c)}`))}
      RETURNING "id", "mobile"`)
    // A row read as missing but written over an existing id was inserted by another transaction in
    // between: its fields were overwritten with defaults here, so this attempt must not commit.
    for (const { id, mobile } of written) if (result.get(mobile)!.id !== id) throw new ConcurrentInsert(mobile)
  }
  return result
}

/** True when writing `next` over the stored `row` would change no column but `updatedAt`. */
function unchanged(row: Record<(typeof READ)[number], string | null>, next: ContactRow): boolean {
  for (const column of COMPARED) if ((row[column as (typeof READ)[number]] ?? null) !== (next[column] ?? null)) return false
  return true
}

/** A new contact's stored fields when the client did not send them (the table's defaults). */
const EMPTY_FIELDS = {
  familyName: '',
  gender: '',
  email: null,
  ...Object.fromEntries(OPTIONAL_TEXT_FIELDS.map((field) => [field, null])),
}

/** A contact's first-name and family-name sort keys, as written. */
type SortKeys = [string, string]
type Enlisted = { groupId: string; contactId: string; keys: SortKeys }

/**
 * One `INSERT ... SELECT ... ON CONFLICT DO NOTHING` a group and chunk: a contact already on a group
 * stays once (and keeps how it joined). The chunk's contact ids and sort keys are one bound JSON
 * array of [id, firstNameKey, familyNameKey], inserted as they are: this transaction has just
 * written (or read and, on PostgreSQL, locked) those contacts, and the foreign key checks each (a
 * join with "Contact" cost a fifth of the statement on PostgreSQL). With the keys given, the
 * membership trigger that would copy them (migration membership_sort_keys) is not called.
 * RETURNING names the rows inserted, which are exactly the contacts that joined.
 */
async function enlist(tx: Run, dbKind: Deps['dbKind'], now: string, memberships: Enlisted[]): Promise<Joined> {
  const joined: Joined = new Map()
  const byGroup = new Map<string, [string, ...SortKeys][]>()
  for (const { groupId, contactId, keys } of memberships) {
    const entry: [string, ...SortKeys] = [contactId, ...keys]
    const entries = byGroup.get(groupId)
    if (entries) entries.push(entry)
    else byGroup.set(groupId, [entry])
  }
  for (const [groupId, entries] of byGroup) {
    for (let i = 0; i < entries.length; i += MEMBERSHIP_CHUNK) {
      const json = JSON.stringify(entries.slice(i, i + MEMBERSHIP_CHUNK))
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
  const { saved, joined } = await upsertContacts(deps, accountId, contacts, groupId)
  return { groupId, count: new Set(saved.map((s) => s.id)).size, created: saved.filter((s) => s.created).length, joined }
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
      DELETE FROM "Membership" WHERE "groupId" = ${groupId} AND "contactId" IN (
        SELECT "id" FROM "Contact" WHERE "accountId" = ${accountId} AND "mobile" IN (${jsonTexts(deps.dbKind, normalized.slice(i, i + MEMBERSHIP_CHUNK))}))
      RETURNING "contactId"`
    for (const row of deleted) left.push(row.contactId)
  }
  return { group, removed: left.length, left }
}
