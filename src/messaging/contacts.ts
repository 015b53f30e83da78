import type { Deps } from '../deps.js'
import type { Prisma } from '../generated/sqlite/client.js'
import { notFound, validationError, type ErrorDetail } from '../core/errors.js'
import { EMAIL_PATTERN, InputRules, LIMITS, isStorableText, textProblem } from './input-rules.js'
import { normalizeMobile } from './mobile.js'
import { searchKey } from './search-text.js'

export const OPTIONAL_TEXT_FIELDS = [
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

/** Every column of a contact row, in one fixed order: the bulk writes and the list reads use it. */
export const CONTACT_COLUMNS = [
  'id',
  'accountId',
  'mobile',
  'firstName',
  'familyName',
  'email',
  'gender',
  ...OPTIONAL_TEXT_FIELDS,
  'firstNameKey',
  'familyNameKey',
  'searchText',
  'createdAt',
  'updatedAt',
] as const
export type ContactColumn = (typeof CONTACT_COLUMNS)[number]

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
  groups: readonly string[]
}

/** The groups of a contact that names none: one array for all of them, never written to. */
const NO_GROUPS: readonly string[] = Object.freeze([])

export const MAX_CONTACTS_PER_REQUEST = 10_000

/** Validates one contact; problems go to `rules` with the given field prefix. */
function readContact(rules: InputRules, input: ContactInput, defaultCountry: string): ParsedContact | null {
  const before = rules.details.length
  const rawMobile = rules.required('mobile', input.mobile, 64)
  const mobile = rawMobile ? normalizeMobile(rawMobile, defaultCountry) : null
  if (rawMobile && !mobile) rules.fail('mobile', `mobile "${rawMobile}" is not a valid mobile number`)
  const firstName = rules.required('firstName', input.firstName, LIMITS.text)
  // firstName first, so that the object is built once, in its final shape.
  const fields: ParsedContact['fields'] = { firstName: firstName ?? '' }
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
  let groups = NO_GROUPS
  if (input.groups !== undefined && input.groups !== null) {
    const listed: string[] = []
    groups = listed
    if (!Array.isArray(input.groups)) rules.fail('groups', 'groups must be an array of group uuids')
    else
      input.groups.forEach((id, i) => {
        if (typeof id !== 'string' || !id.trim()) rules.fail(`groups[${i}]`, 'each group must be a group uuid')
        else if (!isStorableText(id)) rules.fail(`groups[${i}]`, `groups[${i}] ${textProblem(id)}`)
        else listed.push(id.trim())
      })
  }
  if (rules.details.length > before || !mobile || !firstName) return null
  return { mobile, fields, groups }
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
export function contactKeys(row: {
  firstName: string
  familyName: string
  otherNames?: string | null
  mobile: string
  email?: string | null
  organization?: string | null
}) {
  return {
    firstNameKey: row.firstName.toLowerCase(),
    familyNameKey: row.familyName.toLowerCase(),
    searchText: searchKey(
      [row.firstName, row.familyName, row.otherNames, row.mobile, row.email, row.organization].filter(Boolean).join('\n'),
    ),
  }
}

export async function deleteContact({ db }: Pick<Deps, 'db'>, accountId: string, contactId: string) {
  if (!isStorableText(contactId)) throw notFound('Contact')
  // Memberships and subscription history go with it (cascade).
  const { count } = await db.contact.deleteMany({ where: { id: contactId, accountId } })
  if (count === 0) throw notFound('Contact')
  return contactId
}
