// The messaging REST paths of the interface description, each mapped to one GraphQL operation.
// Read top to bottom: method + path, the document, where the variables come from, the legacy JSON.
import { validationError, type ErrorDetail } from '../src/errors.js'
import { expectObject, readFields, type BodySpec } from './body-rules.js'
import { legacyTimestamp, snakeCase } from './legacy-format.js'
import type { RestRoute, RouteInput } from './route.js'
import { pageNumberProblem } from '../src/messaging/paging.js'
import { MAX_CONTACTS_PER_REQUEST } from '../src/messaging/contacts.js'

const groupBody: BodySpec = {
  name: { to: 'name', type: 'string' },
  description: { to: 'description', type: 'string' },
  subscribable: { to: 'subscribable', type: 'boolean' },
  subscription_autoresponse: { to: 'subscriptionAutoresponse', type: 'string' },
  unsubscribe_autoresponse: { to: 'unsubscribeAutoresponse', type: 'string' },
  optin_code: { to: 'optinCode', type: 'string' },
  optout_code: { to: 'optoutCode', type: 'string' },
  subscription_sim: { to: 'subscriptionSim', type: 'string' },
}

const contactBody: BodySpec = {
  mobile: { to: 'mobile', type: 'phone', required: true },
  first_name: { to: 'firstName', type: 'string', required: true },
  email: { to: 'email', type: 'string' },
  family_name: { to: 'familyName', type: 'string' },
  other_names: { to: 'otherNames', type: 'string' },
  gender: { to: 'gender', type: 'string' },
  organization: { to: 'organization', type: 'string' },
  whatsapp_number: { to: 'whatsappNumber', type: 'string' },
  viber_number: { to: 'viberNumber', type: 'string' },
  skype_id: { to: 'skypeId', type: 'string' },
  facebook: { to: 'facebook', type: 'string' },
  twitter: { to: 'twitter', type: 'string' },
  linkedin: { to: 'linkedin', type: 'string' },
  groupme: { to: 'groupme', type: 'string' },
  wechat: { to: 'wechat', type: 'string' },
  youtube: { to: 'youtube', type: 'string' },
  groups: { to: 'groups', type: 'stringArray' },
}

const PAGE_INFO = 'pageInfo { search total skipped perPage page pageCount }'
const CONTACT_ITEM = 'id firstName familyName otherNames mobile email organization gender'

/**
 * page, perPage, search from the query string; a non-integer page is a 422 naming it, and so is
 * one out of range (checked here, before GraphQL's 32-bit Int coercion could refuse it).
 */
function listVariables({ query }: RouteInput, extra: Record<string, unknown> = {}) {
  const details: ErrorDetail[] = []
  const int = (name: string) => {
    const raw = query.get(name)
    if (raw === null || raw === '') return undefined
    if (!/^-?\d+$/.test(raw.trim())) {
      details.push({ field: name, message: `${name} must be a whole number` })
      return undefined
    }
    const value = Number(raw)
    const problem = pageNumberProblem(name, value)
    if (problem) {
      details.push({ field: name, message: problem })
      return undefined
    }
    return value
  }
  const variables = { ...extra, page: int('page'), perPage: int('perPage'), search: query.get('search') ?? undefined }
  if (details.length) throw validationError(details)
  return variables
}

const legacyMeta = (p: { search: string; total: number; skipped: number; perPage: number; page: number; pageCount: number }) => ({
  search: p.search,
  total: p.total,
  skipped: p.skipped,
  perPage: p.perPage,
  page: p.page,
  pageCount: p.pageCount,
})

const legacyContactItem = (c: any) => ({
  uuid: c.id,
  first_name: c.firstName,
  family_name: c.familyName,
  other_names: c.otherNames,
  mobile: c.mobile,
  email: c.email,
  organization: c.organization,
  gender: c.gender,
})

/** The `contacts` array of a body; its size is checked before any item is, so an oversized list costs nothing more. */
const contactsOf = (body: unknown): unknown[] => {
  const object = expectObject(body)
  const contacts = Object.hasOwn(object, 'contacts') ? object.contacts : undefined
  if (!Array.isArray(contacts)) throw validationError([{ field: 'contacts', message: 'contacts must be an array' }])
  if (contacts.length > MAX_CONTACTS_PER_REQUEST) {
    throw validationError([{ field: 'contacts', message: `at most ${MAX_CONTACTS_PER_REQUEST} contacts per request` }])
  }
  return contacts
}

export const messagingRoutes: RestRoute[] = [
  {
    method: 'POST',
    path: '/contact/group/create',
    api: 'messaging',
    body: true,
    document: `mutation CreateGroup($input: CreateGroupInput!) { createGroup(input: $input) { created group { id } } }`,
    variables: ({ body }) => {
      const input = readFields(expectObject(body), groupBody)
      if (input.name === undefined || input.name === null) throw validationError([{ field: 'name', message: 'name is required' }])
      return { input }
    },
    toLegacy: ({ createGroup: r }) => ({
      reference: r.group.id,
      new: r.created,
      message: r.created ? 'Group Created' : 'Group Exists',
    }),
    legacyField: snakeCase,
  },
  {
    method: 'GET',
    path: '/contact/groups',
    api: 'messaging',
    document: `query ListGroups($page: Int, $perPage: Int, $search: String) {
      groups(page: $page, perPage: $perPage, search: $search) { nodes { id name description } ${PAGE_INFO} }
    }`,
    variables: (input) => listVariables(input),
    toLegacy: ({ groups }) => ({
      data: groups.nodes.map((g: any) => ({ uuid: g.id, name: g.name, description: g.description })),
      meta: legacyMeta(groups.pageInfo),
    }),
  },
  {
    method: 'GET',
    path: '/contact/group/:id',
    api: 'messaging',
    document: `query GroupDetails($id: ID!) {
      group(id: $id) {
        id name description subscribable subscriptionAutoresponse unsubscribeAutoresponse
        subscriptionSim optinCode optoutCode subscriberCount createdAt updatedAt
      }
    }`,
    variables: ({ params }) => ({ id: params.id }),
    toLegacy: ({ group: g }, { publicBaseUrl }) => ({
      group: {
        name: g.name,
        uuid: g.id,
        // No group types are defined: always null.
        group_type: null,
        description: g.description,
        subscription_object: g.subscriberCount,
        subscribable: g.subscribable ? 1 : 0,
        subscription_autoresponse: g.subscriptionAutoresponse,
        unsubscribe_autoresponse: g.unsubscribeAutoresponse,
        subscription_sim: g.subscriptionSim,
        optin_code: g.optinCode,
        optout_code: g.optoutCode,
        created_at: legacyTimestamp(g.createdAt),
        updated_at: legacyTimestamp(g.updatedAt),
      },
      contacts_endpoint: `${publicBaseUrl}/api/contact/group/${g.id}/contacts`,
    }),
  },
  {
    method: 'PATCH',
    path: '/contact/group/:id/update',
    api: 'messaging',
    body: true,
    document: `mutation UpdateGroup($id: ID!, $input: UpdateGroupInput!) { updateGroup(id: $id, input: $input) { id } }`,
    variables: ({ params, body }) => ({ id: params.id, input: readFields(expectObject(body), groupBody, { strict: true }) }),
    toLegacy: () => ({ status: 'success' }),
    legacyField: snakeCase,
  },
  {
    method: 'POST',
    path: '/contact/group/:id/add-contacts',
    api: 'messaging',
    body: true,
    document: `mutation AddContacts($groupId: ID!, $contacts: [SaveContactInput!]!) {
      addContactsToGroup(groupId: $groupId, contacts: $contacts) { enlisted }
    }`,
    variables: ({ params, body }) => {
      const details: ErrorDetail[] = []
      const contacts = contactsOf(body).map((item, i) => {
        if (typeof item !== 'object' || item === null || Array.isArray(item)) {
          details.push({ field: `contacts[${i}]`, message: 'each contact must be an object' })
          return {}
        }
        return readFields(item as Record<string, unknown>, contactBody, { prefix: `contacts[${i}].`, details })
      })
      if (details.length) throw validationError(details)
      return { groupId: params.id, contacts }
    },
    toLegacy: () => ({ status: 'successful' }),
    legacyField: snakeCase,
  },
  {
    method: 'GET',
    path: '/contact/group/:id/contacts',
    api: 'messaging',
    document: `query GroupContacts($id: ID!, $page: Int, $perPage: Int, $search: String) {
      group(id: $id) { contacts(page: $page, perPage: $perPage, search: $search) { nodes { ${CONTACT_ITEM} } ${PAGE_INFO} } }
    }`,
    variables: (input) => listVariables(input, { id: input.params.id }),
    toLegacy: ({ group }) => ({ data: group.contacts.nodes.map(legacyContactItem), meta: legacyMeta(group.contacts.pageInfo) }),
  },
  {
    method: 'DELETE',
    path: '/contact/group/:id/delist-contacts',
    api: 'messaging',
    body: true,
    document: `mutation Delist($groupId: ID!, $mobiles: [String!]!) {
      delistContacts(groupId: $groupId, mobiles: $mobiles) { delisted group { name } }
    }`,
    variables: ({ params, body }) => {
      const contacts = contactsOf(body)
      const details = contacts.flatMap((m, i) =>
        typeof m === 'string' || (typeof m === 'number' && Number.isSafeInteger(m)) ? [] : [{ field: `contacts[${i}]`, message: 'each contact must be a mobile number string' }],
      )
      if (details.length) throw validationError(details)
      return { groupId: params.id, mobiles: contacts.map(String) }
    },
    toLegacy: ({ delistContacts: r }) => ({
      status: 'success',
      message: `The submitted contacts were delisted from the group ${r.group.name}`,
    }),
  },
  {
    method: 'DELETE',
    path: '/contact/group/:id',
    api: 'messaging',
    document: `mutation DeleteGroup($id: ID!) { deleteGroup(id: $id) { deletedId } }`,
    variables: ({ params }) => ({ id: params.id }),
    toLegacy: () => ({ status: 'success' }),
  },
  {
    method: 'POST',
    path: '/contact/save',
    api: 'messaging',
    body: true,
    document: `mutation SaveContact($input: SaveContactInput!) { saveContact(input: $input) { created contact { id } } }`,
    variables: ({ body }) => ({ input: readFields(expectObject(body), contactBody) }),
    toLegacy: ({ saveContact: r }) => ({
      reference: r.contact.id,
      new: r.created,
      message: r.created ? 'Contact Added' : 'Contact Updated',
    }),
    legacyField: snakeCase,
  },
  {
    method: 'GET',
    path: '/contacts',
    api: 'messaging',
    document: `query ListContacts($page: Int, $perPage: Int, $search: String) {
      contacts(page: $page, perPage: $perPage, search: $search) { nodes { ${CONTACT_ITEM} } ${PAGE_INFO} }
    }`,
    variables: (input) => listVariables(input),
    toLegacy: ({ contacts }) => ({ data: contacts.nodes.map(legacyContactItem), meta: legacyMeta(contacts.pageInfo) }),
  },
  {
    method: 'GET',
    path: '/contact/:id',
    api: 'messaging',
    document: `query ContactDetails($id: ID!) {
      contact(id: $id) {
        id mobile email firstName familyName otherNames gender organization skypeId whatsappNumber viberNumber
        facebook twitter linkedin groupme wechat youtube selfSubscribed groups { id name }
      }
    }`,
    variables: ({ params }) => ({ id: params.id }),
    toLegacy: ({ contact: c }) => ({
      contact: {
        uuid: c.id,
        phone: c.mobile,
        email: c.email,
        first_name: c.firstName,
        family_name: c.familyName,
        other_names: c.otherNames,
        gender: c.gender,
        organization: c.organization,
        skype_id: c.skypeId,
        whatsapp_number: c.whatsappNumber,
        viber_number: c.viberNumber,
        facebook: c.facebook,
        twitter: c.twitter,
        linkedin: c.linkedin,
        groupme: c.groupme,
        wechat: c.wechat,
        youtube: c.youtube,
        self_subscribed: c.selfSubscribed ? 1 : 0,
      },
      groups: c.groups.map((g: any) => ({ uuid: g.id, name: g.name })),
    }),
  },
  {
    method: 'GET',
    path: '/contact/:id/groups',
    api: 'messaging',
    document: `query ContactGroups($id: ID!) { contact(id: $id) { groups { id name } } }`,
    variables: ({ params }) => ({ id: params.id }),
    toLegacy: ({ contact }) => contact.groups.map((g: any) => ({ uuid: g.id, name: g.name })),
  },
  {
    method: 'DELETE',
    path: '/contact/:id',
    api: 'messaging',
    document: `mutation DeleteContact($id: ID!) { deleteContact(id: $id) { deletedId } }`,
    variables: ({ params }) => ({ id: params.id }),
    toLegacy: () => ({ status: 'success' }),
  },
]

