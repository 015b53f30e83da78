// The messaging REST paths of the interface description, each mapped to one GraphQL operation.
// Read top to bottom: method + path, the document, where the variables come from, the legacy JSON.
import { validationError, type ErrorDetail } from '../src/core/errors.js'
import { expectObject, readFields, type BodySpec } from './body-rules.js'
import { legacyTimestamp, snakeCase } from './legacy-format.js'
import { route, type ParameterDoc, type RestRoute, type RouteInput } from './route.js'
import { graphql, type ResultOf } from '../src/graphql/typed-documents.js'
import { array, integer, object, ref, string, uuid } from './openapi/json-schema.js'
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

const PAGE_INFO = graphql(`fragment LegacyPage on OffsetPageInfo { search total skipped perPage page pageCount }`)
const CONTACT_ITEM = graphql(
  `fragment LegacyContactItem on Contact { id: uuid firstName familyName otherNames mobile email organization gender }`,
)

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

const legacyMeta = (p: ResultOf<typeof PAGE_INFO>) => ({
  search: p.search,
  total: p.total,
  skipped: p.skipped,
  perPage: p.perPage,
  page: p.page,
  pageCount: p.pageCount,
})

const pagePosition = (p: ResultOf<typeof PAGE_INFO>) => ({ page: p.page, lastPage: p.pageCount, total: p.total })

const legacyContactItem = (c: ResultOf<typeof CONTACT_ITEM>) => ({
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

// OpenAPI: parameters and examples shared by the entries below.
const groupParam: ParameterDoc = {
  description: 'The group uuid (its `reference`).',
  schema: uuid(),
  example: '3f0c6a4e-8d2b-4c1a-9e57-0b6d2f4a8c11',
}
const contactParam: ParameterDoc = {
  description: 'The contact uuid (its `reference`).',
  schema: uuid(),
  example: '9b2e7d10-5c4f-4a8e-b3d1-6f0a2c9e4b77',
}
const listQuery: Record<string, ParameterDoc> = {
  page: { description: '1-based page number (default 1). Not a whole number: 422.', schema: integer(undefined, { minimum: 1 }) },
  perPage: { description: 'Page size (default 25); above 100 it is clamped to 100.', schema: integer(undefined, { minimum: 1 }) },
  search: { description: 'Case-insensitive substring to filter by.', schema: string() },
}
const GROUP_ID = groupParam.example as string
const CONTACT_ID = contactParam.example as string
const META = { search: '', total: 1, skipped: 0, perPage: 25, page: 1, pageCount: 1 }
const CONTACT_LIST_ITEM = {
  uuid: CONTACT_ID,
  first_name: 'Wanjiru',
  family_name: 'Kamau',
  other_names: null,
  mobile: '+254712345678',
  email: null,
  organization: 'Acme',
  gender: '',
}

export const messagingRoutes: RestRoute[] = [
  route({
    method: 'POST',
    path: '/contact/group/create',
    api: 'messaging',
    body: true,
    document: graphql(`mutation CreateGroup($input: CreateGroupInput!) { createGroup(input: $input) { created group { id: uuid } } }`),
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
    openapi: {
      operationId: 'createGroup',
      tag: 'Groups',
      summary: 'Create a group',
      description:
        'A group whose name exists already (case-insensitively) is not created again: the answer names it with `new: false` and `Group Exists`.',
      params: {},
      requestBody: {
        schema: ref('GroupInput'),
        example: {
          name: 'Customers',
          description: 'All of them',
          subscribable: true,
          optin_code: 'JOIN',
          optout_code: 'STOP',
          subscription_sim: '+254700000001',
        },
      },
      response: {
        description: 'The group, created or found.',
        schema: ref('Reference'),
        example: { reference: GROUP_ID, new: true, message: 'Group Created' },
      },
    },
  }),
  route({
    method: 'GET',
    path: '/contact/groups',
    api: 'messaging',
    document: graphql(
      `query ListGroups($page: Int, $perPage: Int, $search: String) {
      groups(page: $page, perPage: $perPage, search: $search) { nodes { id: uuid name description } pageInfo { ...LegacyPage } }
    }`,
      [PAGE_INFO],
    ),
    variables: (input) => listVariables(input),
    toLegacy: ({ groups }) => ({
      data: groups.nodes.map((g) => ({ uuid: g.id, name: g.name, description: g.description })),
      meta: legacyMeta(groups.pageInfo),
    }),
    paging: ({ groups }) => pagePosition(groups.pageInfo),
    openapi: {
      operationId: 'listGroups',
      tag: 'Groups',
      summary: 'List groups',
      description: 'By name. `search` matches name and description.',
      params: {},
      query: listQuery,
      response: {
        description: 'A page of groups.',
        schema: ref('GroupList'),
        example: { data: [{ uuid: GROUP_ID, name: 'Customers', description: 'All of them' }], meta: META },
      },
      errors: [422],
    },
  }),
  route({
    method: 'GET',
    path: '/contact/group/:id',
    api: 'messaging',
    document: graphql(`query GroupDetails($id: ID!) {
      group(id: $id) {
        id: uuid name description subscribable subscriptionAutoresponse unsubscribeAutoresponse
        subscriptionSim optinCode optoutCode subscriberCount createdAt updatedAt
      }
    }`),
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
    openapi: {
      operationId: 'getGroup',
      tag: 'Groups',
      summary: 'Group details',
      params: { id: groupParam },
      response: {
        description: 'The group and the URL of its contacts listing.',
        schema: ref('GroupDetails'),
        example: {
          group: {
            name: 'Customers',
            uuid: GROUP_ID,
            group_type: null,
            description: 'All of them',
            subscription_object: 12,
            subscribable: 1,
            subscription_autoresponse: 'Welcome!',
            unsubscribe_autoresponse: null,
            subscription_sim: '+254700000001',
            optin_code: 'JOIN',
            optout_code: 'STOP',
            created_at: '2026-01-31T09:00:00.000000Z',
            updated_at: '2026-02-02T14:30:00.000000Z',
          },
          contacts_endpoint: `http://localhost:4000/api/contact/group/${GROUP_ID}/contacts`,
        },
      },
    },
  }),
  route({
    method: 'PATCH',
    path: '/contact/group/:id/update',
    api: 'messaging',
    body: true,
    document: graphql(`mutation UpdateGroup($id: ID!, $input: UpdateGroupInput!) { updateGroup(id: $id, input: $input) { id: uuid } }`),
    variables: ({ params, body }) => ({ id: params.id, input: readFields(expectObject(body), groupBody, { strict: true }) }),
    toLegacy: () => ({ status: 'success' }),
    legacyField: snakeCase,
    openapi: {
      operationId: 'updateGroup',
      tag: 'Groups',
      summary: 'Edit a group',
      description:
        'Every create field is editable; a field that is not one of them is a 422. A rename onto another group, or a code already used on the same SIM, is a 409.',
      params: { id: groupParam },
      requestBody: { schema: ref('GroupChanges'), example: { description: 'Paying customers', subscribable: false } },
      response: { description: 'Changed.', schema: ref('Success'), example: { status: 'success' } },
      errors: [409],
    },
  }),
  route({
    method: 'POST',
    path: '/contact/group/:id/add-contacts',
    api: 'messaging',
    body: true,
    document: graphql(`mutation AddContacts($groupId: ID!, $contacts: [SaveContactInput!]!) {
      addContactsToGroup(groupId: $groupId, contacts: $contacts) { enlisted }
    }`),
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
    openapi: {
      operationId: 'addContactsToGroup',
      tag: 'Groups',
      summary: 'Add contacts to a group',
      description:
        'Each item follows the save-contact rules and all are validated first: one bad item fails the whole request, with `details` naming it (`contacts[3].mobile`). Up to 10,000 items. Existing contacts (same mobile) are updated and enlisted once.',
      params: { id: groupParam },
      requestBody: {
        schema: { type: 'object', properties: { contacts: array(ref('ContactInput')) }, required: ['contacts'] },
        example: { contacts: [{ mobile: '0712345678', first_name: 'Wanjiru', family_name: 'Kamau', email: 'wanjiru@example.com' }] },
      },
      response: { description: 'Enlisted.', schema: object({ status: { const: 'successful' } }), example: { status: 'successful' } },
    },
  }),
  route({
    method: 'GET',
    path: '/contact/group/:id/contacts',
    api: 'messaging',
    document: graphql(
      `query GroupContacts($id: ID!, $page: Int, $perPage: Int, $search: String) {
      group(id: $id) { contacts(page: $page, perPage: $perPage, search: $search) { nodes { ...LegacyContactItem } pageInfo { ...LegacyPage } } }
    }`,
      [CONTACT_ITEM, PAGE_INFO],
    ),
    variables: (input) => listVariables(input, { id: input.params.id }),
    toLegacy: ({ group }) => ({ data: group.contacts.nodes.map(legacyContactItem), meta: legacyMeta(group.contacts.pageInfo) }),
    paging: ({ group }) => pagePosition(group.contacts.pageInfo),
    openapi: {
      operationId: 'listGroupContacts',
      tag: 'Groups',
      summary: 'List the contacts of a group',
      description: 'By first name, then family name. `search` matches names, mobile, email and organization.',
      params: { id: groupParam },
      query: listQuery,
      response: {
        description: "A page of the group's contacts.",
        schema: ref('ContactList'),
        example: { data: [CONTACT_LIST_ITEM], meta: META },
      },
      errors: [422],
    },
  }),
  route({
    method: 'DELETE',
    path: '/contact/group/:id/delist-contacts',
    api: 'messaging',
    body: true,
    document: graphql(`mutation Delist($groupId: ID!, $mobiles: [String!]!) {
      delistContacts(groupId: $groupId, mobiles: $mobiles) { delisted group { name } }
    }`),
    variables: ({ params, body }) => {
      const contacts = contactsOf(body)
      const details = contacts.flatMap((m, i) =>
        typeof m === 'string' || (typeof m === 'number' && Number.isSafeInteger(m))
          ? []
          : [{ field: `contacts[${i}]`, message: 'each contact must be a mobile number string' }],
      )
      if (details.length) throw validationError(details)
      return { groupId: params.id, mobiles: contacts.map(String) }
    },
    toLegacy: ({ delistContacts: r }) => ({
      status: 'success',
      message: `The submitted contacts were delisted from the group ${r.group.name}`,
    }),
    openapi: {
      operationId: 'delistContacts',
      tag: 'Groups',
      summary: 'Remove contacts from a group',
      description: 'Numbers that are unknown or not in the group are ignored. The contacts themselves stay.',
      params: { id: groupParam },
      requestBody: {
        schema: {
          type: 'object',
          properties: { contacts: array({ type: ['string', 'integer'] }, 'Mobile numbers.') },
          required: ['contacts'],
        },
        example: { contacts: ['+254712345678', '0722000111'] },
      },
      response: {
        description: 'Delisted.',
        schema: object({ status: { const: 'success' }, message: string('Names the group.') }),
        example: { status: 'success', message: 'The submitted contacts were delisted from the group Customers' },
      },
    },
  }),
  route({
    method: 'DELETE',
    path: '/contact/group/:id',
    api: 'messaging',
    document: graphql(`mutation DeleteGroup($id: ID!) { deleteGroup(id: $id) { deletedId } }`),
    variables: ({ params }) => ({ id: params.id }),
    toLegacy: () => ({ status: 'success' }),
    openapi: {
      operationId: 'deleteGroup',
      tag: 'Groups',
      summary: 'Delete a group',
      description: 'The contacts stay; only their memberships go.',
      params: { id: groupParam },
      response: { description: 'Deleted.', schema: ref('Success'), example: { status: 'success' } },
    },
  }),
  route({
    method: 'POST',
    path: '/contact/save',
    api: 'messaging',
    body: true,
    document: graphql(`mutation SaveContact($input: SaveContactInput!) { saveContact(input: $input) { created contact { id: uuid } } }`),
    variables: ({ body }) => ({ input: readFields(expectObject(body), contactBody) }),
    toLegacy: ({ saveContact: r }) => ({
      reference: r.contact.id,
      new: r.created,
      message: r.created ? 'Contact Added' : 'Contact Updated',
    }),
    legacyField: snakeCase,
    openapi: {
      operationId: 'saveContact',
      tag: 'Contacts',
      summary: 'Save a contact',
      description:
        'Creates the contact, or overwrites the given fields of the contact with that mobile number (two spellings of one number are one contact). Numbers are stored in E.164.',
      params: {},
      requestBody: {
        schema: ref('ContactInput'),
        example: { mobile: '0712 345 678', first_name: 'Wanjiru', family_name: 'Kamau', groups: [GROUP_ID] },
      },
      response: {
        description: 'The contact, created or updated.',
        schema: ref('Reference'),
        example: { reference: CONTACT_ID, new: true, message: 'Contact Added' },
      },
    },
  }),
  route({
    method: 'GET',
    path: '/contacts',
    api: 'messaging',
    document: graphql(
      `query ListContacts($page: Int, $perPage: Int, $search: String) {
      contacts(page: $page, perPage: $perPage, search: $search) { nodes { ...LegacyContactItem } pageInfo { ...LegacyPage } }
    }`,
      [CONTACT_ITEM, PAGE_INFO],
    ),
    variables: (input) => listVariables(input),
    toLegacy: ({ contacts }) => ({ data: contacts.nodes.map(legacyContactItem), meta: legacyMeta(contacts.pageInfo) }),
    paging: ({ contacts }) => pagePosition(contacts.pageInfo),
    openapi: {
      operationId: 'listContacts',
      tag: 'Contacts',
      summary: 'List contacts',
      description: 'By first name, then family name, then uuid. `search` matches names, mobile, email and organization.',
      params: {},
      query: listQuery,
      response: { description: 'A page of contacts.', schema: ref('ContactList'), example: { data: [CONTACT_LIST_ITEM], meta: META } },
      errors: [422],
    },
  }),
  route({
    method: 'GET',
    path: '/contact/:id',
    api: 'messaging',
    document: graphql(`query ContactDetails($id: ID!) {
      contact(id: $id) {
        id: uuid mobile email firstName familyName otherNames gender organization skypeId whatsappNumber viberNumber
        facebook twitter linkedin groupme wechat youtube selfSubscribed groups { id: uuid name }
      }
    }`),
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
      groups: c.groups.map((g) => ({ uuid: g.id, name: g.name })),
    }),
    openapi: {
      operationId: 'getContact',
      tag: 'Contacts',
      summary: 'Contact details',
      params: { id: contactParam },
      response: {
        description: 'The contact and its groups.',
        schema: ref('ContactDetails'),
        example: {
          contact: {
            uuid: CONTACT_ID,
            phone: '+254712345678',
            email: 'wanjiru@example.com',
            first_name: 'Wanjiru',
            family_name: 'Kamau',
            other_names: null,
            gender: '',
            organization: 'Acme',
            skype_id: null,
            whatsapp_number: null,
            viber_number: null,
            facebook: null,
            twitter: null,
            linkedin: null,
            groupme: null,
            wechat: null,
            youtube: null,
            self_subscribed: 0,
          },
          groups: [{ uuid: GROUP_ID, name: 'Customers' }],
        },
      },
    },
  }),
  route({
    method: 'GET',
    path: '/contact/:id/groups',
    api: 'messaging',
    document: graphql(`query ContactGroups($id: ID!) { contact(id: $id) { groups { id: uuid name } } }`),
    variables: ({ params }) => ({ id: params.id }),
    toLegacy: ({ contact }) => contact.groups.map((g) => ({ uuid: g.id, name: g.name })),
    openapi: {
      operationId: 'getContactGroups',
      tag: 'Contacts',
      summary: 'Groups of a contact',
      params: { id: contactParam },
      response: {
        description: 'A bare array of the groups.',
        schema: array(ref('GroupRef')),
        example: [{ uuid: GROUP_ID, name: 'Customers' }],
      },
    },
  }),
  route({
    method: 'DELETE',
    path: '/contact/:id',
    api: 'messaging',
    document: graphql(`mutation DeleteContact($id: ID!) { deleteContact(id: $id) { deletedId } }`),
    variables: ({ params }) => ({ id: params.id }),
    toLegacy: () => ({ status: 'success' }),
    openapi: {
      operationId: 'deleteContact',
      tag: 'Contacts',
      summary: 'Delete a contact',
      description: 'Permanently, and from every group.',
      params: { id: contactParam },
      response: { description: 'Deleted.', schema: ref('Success'), example: { status: 'success' } },
    },
  }),
]
