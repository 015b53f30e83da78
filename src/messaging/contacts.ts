import { randomUUID } from 'node:crypto'
import type { Deps } from '../deps.js'
import type { Tx } from '../db/client.js'
import type { Prisma } from '../generated/sqlite/client.js'
import { isUniqueViolation, notFound, validationError, type ErrorDetail } from '../errors.js'
import { EMAIL_PATTERN, InputRules, LIMITS, isStorableText, textProblem } from './input-rules.js'
import { normalizeMobile } from './mobile.js'
import { searchKey } from './search-text.js'

const OPTIONAL_TEXT_FIELDS = [
  'otherNames',
  'organization',
  'whatsappNumber',
  'viberNumber',
  'skypeId',
  'facebook',
  'twitter',
  'linkedin',
  'groupme',
  'wechat',
  'youtube',
] as const

export interface ContactInput {
  mobile?: string | null
  firstName?: string | null
  familyName?: string | null
  email?: string | null
  gender?: string | null
  otherNames?: string | null
  organization?: string | null
  whatsappNumber?: string | null
  viberNumber?: string | null
  skypeId?: string | null
  facebook?: string | null
  twitter?: string | null
  linkedin?: string | null
  groupme?: string | null
  wechat?: string | null
  youtube?: string | null
  /** Group ids to enlist the contact on (added to, never removed from others). */
  groups?: string[] | null
}

type ContactFields = Omit<
  Prisma.ContactUncheckedCreateInput,
  'id' | 'accountId' | 'mobile' | 'firstNameKey' | 'familyNameKey' | 'searchText' | 'createdAt' | 'updatedAt'
>

export interface ParsedContact {
  mobile: string
  /** Only the fields the client sent: saving overwrites those and keeps the rest. */
  fields: Partial<ContactFields> & { firstName: string }
  groups: string[]
}

export const MAX_CONTACTS_PER_REQUEST = 10_000

/** Validates one contact; problems go to `rules` with the given field prefix. */
function readContact(rules: InputRules, input: ContactInput, defaultCountry: string): ParsedContact | null {
  const before = rules.details.length
  const rawMobile = rules.required('mobile', input.mobile, 64)
  const mobile = rawMobile ? normalizeMobile(rawMobile, defaultCountry) : null
  if (rawMobile && !mobile) rules.fail('mobile', `mobile "${rawMobile}" is not a valid mobile number`)
  const firstName = rules.required('firstName', input.firstName, LIMITS.text)
  const fields: Partial<ContactFields> = {}
  const familyName = rules.optional('familyName', input.familyName, LIMITS.text)
  if (familyName !== undefined) fields.familyName = familyName ?? ''
  const gender = rules.optional('gender', input.gender, LIMITS.text)
  if (gender !== undefined) fields.gender = gender ?? ''
  const email = rules.nullable('email', input.email, LIMITS.email)
  if (email && !EMAIL_PATTERN.test(email)) rules.fail('email', `email "${email}" is not a valid email address`)
  else if (email !== undefined) fields.email = email
  for (const field of OPTIONAL_TEXT_FIELDS) {
    const value = rules.nullable(field, input[field], LIMITS.text)
    if (value !== undefined) fields[field] = value
  }
  const groups: string[] = []
  if (input.groups !== undefined && input.groups !== null) {
    if (!Array.isArray(input.groups)) rules.fail('groups', 'groups must be an array of group uuids')
    else
      input.groups.forEach((id, i) => {
        if (typeof id !== 'string' || !id.trim()) rules.fail(`groups[${i}]`, 'each group must be a group uuid')
        else if (!isStorableText(id)) rules.fail(`groups[${i}]`, `groups[${i}] ${textProblem(id)}`)
        else groups.push(id.trim())
      })
  }
  if (rules.details.length > before || !mobile || !firstName) return null
  return { mobile, fields: { ...fields, firstName }, groups }
}

export function parseContacts(inputs: ContactInput[], defaultCountry: string, field = 'contacts'): ParsedContact[] {
  if (inputs.length === 0) throw validationError([{ field, message: `${field} must hold at least one contact` }])
  if (inputs.length > MAX_CONTACTS_PER_REQUEST) {
    throw validationError([{ field, message: `at most ${MAX_CONTACTS_PER_REQUEST} contacts per request` }])
  }
  const details: ErrorDetail[] = []
  const parsed = inputs.map((input, i) => {
    const rules = new InputRules(`${field}[${i}].`)
    const contact = readContact(rules, input ?? {}, defaultCountry)
    details.push(...rules.details)
    return contact
  })
  if (details.length) throw validationError(details)
  return parsed as ParsedContact[]
}

export function parseContact(input: ContactInput, defaultCountry: string): ParsedContact {
  const rules = new InputRules()
  const contact = readContact(rules, input, defaultCountry)
  rules.check()
  return contact!
}

/** The stored sort keys and search text of a contact. */
export function contactKeys(row: { firstName: string; familyName: string; otherNames?: string | null; mobile: string; email?: string | null; organization?: string | null }) {
  return {
    firstNameKey: row.firstName.toLowerCase(),
    familyNameKey: row.familyName.toLowerCase(),
    searchText: searchKey([row.firstName, row.familyName, row.otherNames, row.mobile, row.email, row.organization].filter(Boolean).join('\n')),
  }
}

const CHUNK = 500

/** Prisma's foreign-key violation: a row referred to (a group) went away during the transaction. */
const isForeignKeyViolation = (error: unknown) => typeof error === 'object' && error !== null && (error as { code?: string }).code === 'P2003'

/**
 * Creates or overwrites contacts by mobile and enlists them on groups, all in one transaction.
 * Returns, per input, the contact id and whether it was created. Several inputs with one mobile
 * are one contact (later fields win).
 */
export async function upsertContacts(
  { db }: Pick<Deps, 'db'>,
  accountId: string,
  contacts: ParsedContact[],
  extraGroupId?: string,
): Promise<{ id: string; created: boolean }[]> {
  const byMobile = new Map<string, ParsedContact>()
  for (const c of contacts) {
    const seen = byMobile.get(c.mobile)
    byMobile.set(c.mobile, seen ? { mobile: c.mobile, fields: { ...seen.fields, ...c.fields }, groups: [...seen.groups, ...c.groups] } : c)
  }
  const groupIds = new Set<string>(extraGroupId ? [extraGroupId] : [])
  for (const c of byMobile.values()) for (const g of c.groups) groupIds.add(g)

  const run = () =>
    db.$transaction(
      async (tx) => {
        await assertGroupsExist(tx, accountId, contacts, extraGroupId)
        const result = await writeContacts(tx, accountId, [...byMobile.values()])
        const memberships: { groupId: string; contactId: string }[] = []
        for (const c of byMobile.values()) {
          const contactId = result.get(c.mobile)!.id
          const targets = new Set(extraGroupId ? [extraGroupId, ...c.groups] : c.groups)
          for (const groupId of targets) memberships.push({ groupId, contactId })
        }
        await enlist(tx, memberships)
        return contacts.map((c) => result.get(c.mobile)!)
      },
      { timeout: 120_000, maxWait: 30_000 },
    )
  // A concurrent writer may insert the same new mobile first (P2002), or delete a group between
  // the existence check and the enlisting (P2003, foreign key): the next try sees the new state
  // and answers from it (the contact exists; the group is a 404 or an unknown-group 422).
  for (let attempt = 1; ; attempt++) {
    try {
      return await run()
    } catch (error) {
      if (isForeignKeyViolation(error) && attempt === 3) throw notFound('Group')
      if (!(isUniqueViolation(error) || isForeignKeyViolation(error)) || attempt === 3) throw error
    }
  }
}

async function assertGroupsExist(tx: Tx, accountId: string, contacts: ParsedContact[], extraGroupId?: string) {
  const wanted = new Set(contacts.flatMap((c) => c.groups))
  if (extraGroupId) wanted.add(extraGroupId)
  if (wanted.size === 0) return
  const found = new Set(
    (await tx.group.findMany({ where: { accountId, id: { in: [...wanted] } }, select: { id: true } })).map((g) => g.id),
  )
  if (extraGroupId && !found.has(extraGroupId)) throw notFound('Group')
  const details: ErrorDetail[] = []
  contacts.forEach((c, i) =>
    c.groups.forEach((g, j) => {
      if (!found.has(g)) details.push({ field: contacts.length > 1 || extraGroupId ? `contacts[${i}].groups[${j}]` : `groups[${j}]`, message: `unknown group ${g}` })
    }),
  )
  if (details.length) throw validationError(details)
}

async function writeContacts(tx: Tx, accountId: string, contacts: ParsedContact[]) {
  const result = new Map<string, { id: string; created: boolean }>()
  for (let i = 0; i < contacts.length; i += CHUNK) {
    const chunk = contacts.slice(i, i + CHUNK)
    const existing = await tx.contact.findMany({ where: { accountId, mobile: { in: chunk.map((c) => c.mobile) } } })
    const byMobile = new Map(existing.map((row) => [row.mobile, row]))
    const fresh: Prisma.ContactCreateManyInput[] = []
    for (const c of chunk) {
      const row = byMobile.get(c.mobile)
      if (row) {
        const merged = { ...row, ...c.fields }
        await tx.contact.update({ where: { id: row.id }, data: { ...c.fields, ...contactKeys(merged) } })
        result.set(c.mobile, { id: row.id, created: false })
      } else {
        const id = randomUUID()
        const record = { familyName: '', ...c.fields, mobile: c.mobile }
        fresh.push({ ...record, id, accountId, ...contactKeys(record) })
        result.set(c.mobile, { id, created: true })
      }
    }
    // SQLite allows 32,766 bound values a statement; 500 rows of about 20 columns stay well below.
    if (fresh.length) await tx.contact.createMany({ data: fresh })
  }
  return result
}

async function enlist(tx: Tx, memberships: { groupId: string; contactId: string }[]) {
  const byGroup = new Map<string, string[]>()
  for (const m of memberships) byGroup.set(m.groupId, [...(byGroup.get(m.groupId) ?? []), m.contactId])
  for (const [groupId, contactIds] of byGroup) {
    for (let i = 0; i < contactIds.length; i += CHUNK) {
      const chunk = [...new Set(contactIds.slice(i, i + CHUNK))]
      const present = new Set(
        (await tx.membership.findMany({ where: { groupId, contactId: { in: chunk } }, select: { contactId: true } })).map((m) => m.contactId),
      )
      const missing = chunk.filter((id) => !present.has(id))
      if (missing.length) await tx.membership.createMany({ data: missing.map((contactId) => ({ groupId, contactId })) })
    }
  }
}

export async function saveContact(deps: Pick<Deps, 'db' | 'env'>, accountId: string, input: ContactInput) {
  const contact = parseContact(input, deps.env.DEFAULT_COUNTRY)
  const [saved] = await upsertContacts(deps, accountId, [contact])
  return saved!
}

export async function addContactsToGroup(deps: Pick<Deps, 'db' | 'env'>, accountId: string, groupId: string, inputs: ContactInput[]) {
  if (!isStorableText(groupId)) throw notFound('Group')
  const contacts = parseContacts(inputs, deps.env.DEFAULT_COUNTRY)
  const saved = await upsertContacts(deps, accountId, contacts, groupId)
  return { groupId, count: new Set(saved.map((s) => s.id)).size, created: saved.filter((s) => s.created).length }
}

/** Removes the numbers from the group; numbers that are unknown, invalid or not in the group are ignored. */
export async function delistContacts(deps: Pick<Deps, 'db' | 'env'>, accountId: string, groupId: string, mobiles: string[]) {
  if (mobiles.length > MAX_CONTACTS_PER_REQUEST) {
    throw validationError([{ field: 'contacts', message: `at most ${MAX_CONTACTS_PER_REQUEST} numbers per request` }])
  }
  if (!isStorableText(groupId)) throw notFound('Group')
  const group = await deps.db.group.findFirst({ where: { id: groupId, accountId }, select: { id: true, name: true } })
  if (!group) throw notFound('Group')
  const normalized = [...new Set(mobiles.map((m) => normalizeMobile(m, deps.env.DEFAULT_COUNTRY)).filter((m): m is string => m !== null))]
  let removed = 0
  for (let i = 0; i < normalized.length; i += CHUNK) {
    const { count } = await deps.db.membership.deleteMany({
      where: { groupId, contact: { accountId, mobile: { in: normalized.slice(i, i + CHUNK) } } },
    })
    removed += count
  }
  return { group, removed }
}

export async function deleteContact({ db }: Pick<Deps, 'db'>, accountId: string, contactId: string) {
  if (!isStorableText(contactId)) throw notFound('Contact')
  // Memberships and subscription history go with it (cascade).
  const { count } = await db.contact.deleteMany({ where: { id: contactId, accountId } })
  if (count === 0) throw notFound('Contact')
  return contactId
}
