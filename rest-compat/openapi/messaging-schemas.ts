// The messaging API's objects (groups, contacts, page meta), as the interface description names them.
import { array, boolean, integer, nullable, object, oneOf, ref, string, uuid, type JsonSchema } from './json-schema.js'

const LEGACY_TIME = 'ISO 8601 UTC with microseconds and a trailing Z, e.g. 2026-01-31T09:00:00.000000Z'

const groupFields = {
  name: string('Group name; unique per account, case-insensitively. At most 100 characters.'),
  description: string('At most 2,000 characters.'),
  subscribable: boolean('Whether users join and leave the group by SMS codes sent to `subscription_sim`. Default false.'),
  subscription_autoresponse: nullable(string('SMS sent to a user on subscribing. At most 1,000 characters.')),
  unsubscribe_autoresponse: nullable(string('SMS sent to a user on unsubscribing. At most 1,000 characters.')),
  optin_code: nullable(string('Code that subscribes a user. At most 50 characters; unique per SIM.')),
  optout_code: nullable(string('Code that unsubscribes a user. At most 50 characters; unique per SIM.')),
  subscription_sim: nullable(string("The account's hosted SIM that receives the codes.")),
}

const contactFields = {
  mobile: {
    ...string('Mobile number; identifies the contact. Written without a country code it is read in DEFAULT_COUNTRY.'),
    type: ['string', 'integer'],
  },
  first_name: string('Given name. At most 100 characters.'),
  email: nullable(string('At most 254 characters.')),
  family_name: nullable(string()),
  other_names: nullable(string()),
  gender: nullable(string()),
  organization: nullable(string()),
  whatsapp_number: nullable(string()),
  viber_number: nullable(string()),
  skype_id: nullable(string()),
  facebook: nullable(string()),
  twitter: nullable(string()),
  linkedin: nullable(string()),
  groupme: nullable(string()),
  wechat: nullable(string()),
  youtube: nullable(string()),
  groups: array(
    uuid(),
    'Group uuids to enlist the contact on; an unknown uuid is a 422 and nothing is saved. Saving never removes the contact from other groups.',
  ),
}

/** Request bodies are open: unknown fields are ignored (except on group update, which the route says). */
const openBody = (properties: Record<string, JsonSchema>, required: string[], description: string): JsonSchema => ({
  type: 'object',
  description,
  properties,
  required,
})

export const messagingSchemas: Record<string, JsonSchema> = {
  GroupInput: openBody(groupFields, ['name'], 'The group fields. `name` is required.'),
  GroupChanges: {
    type: 'object',
    description: 'Any of the group fields; a field that is not one of them is a 422.',
    properties: groupFields,
    additionalProperties: false,
  },
  ContactInput: openBody(
    contactFields,
    ['mobile', 'first_name'],
    'The contact fields. `mobile` and `first_name` are required. Saving an existing mobile overwrites the given fields.',
  ),
  Reference: object({
    reference: uuid('The uuid of the group or contact.'),
    new: boolean('true when it was created, false when it existed.'),
    message: oneOf(['Group Created', 'Group Exists', 'Contact Added', 'Contact Updated']),
  }),
  Success: object({ status: { const: 'success' } }),
  PageMeta: object({
    search: string('The search text as given; "" when none.'),
    total: integer('Items matching the search.', { minimum: 0 }),
    skipped: integer('(page - 1) * perPage', { minimum: 0 }),
    perPage: integer('Page size (default 25, at most 100).', { minimum: 1 }),
    page: integer('1-based.', { minimum: 1 }),
    pageCount: integer('ceil(total / perPage)', { minimum: 0 }),
  }),
  GroupListItem: object({ uuid: uuid(), name: string(), description: string() }),
  GroupList: object({ data: array(ref('GroupListItem')), meta: ref('PageMeta') }),
  GroupDetails: object({
    group: object({
      name: string(),
      uuid: uuid(),
      group_type: { type: 'null', description: 'No group types are defined: always null.' },
      description: string(),
      subscription_object: integer('Contacts currently subscribed by SMS opt-in.', { minimum: 0 }),
      subscribable: oneOf([0, 1]),
      subscription_autoresponse: nullable(string()),
      unsubscribe_autoresponse: nullable(string()),
      subscription_sim: nullable(string()),
      optin_code: nullable(string()),
      optout_code: nullable(string()),
      created_at: string(LEGACY_TIME, { format: 'date-time' }),
      updated_at: string(LEGACY_TIME, { format: 'date-time' }),
    }),
    contacts_endpoint: string("Absolute URL of the group's contacts listing.", { format: 'uri' }),
  }),
  ContactListItem: object({
    uuid: uuid(),
    first_name: string(),
    family_name: string(),
    other_names: nullable(string()),
    mobile: string('E.164 with the leading +.'),
    email: nullable(string()),
    organization: nullable(string()),
    gender: string('"" when unknown.'),
  }),
  ContactList: object({ data: array(ref('ContactListItem')), meta: ref('PageMeta') }),
  GroupRef: object({ uuid: uuid(), name: string() }),
  ContactDetails: object({
    contact: object({
      uuid: uuid(),
      phone: string('The mobile number, E.164 with the leading +.'),
      email: nullable(string()),
      first_name: string(),
      family_name: string(),
      other_names: nullable(string()),
      gender: string('"" when unknown.'),
      organization: nullable(string()),
      skype_id: nullable(string()),
      whatsapp_number: nullable(string()),
      viber_number: nullable(string()),
      facebook: nullable(string()),
      twitter: nullable(string()),
      linkedin: nullable(string()),
      groupme: nullable(string()),
      wechat: nullable(string()),
      youtube: nullable(string()),
      self_subscribed: oneOf([0, 1], '1 when the contact joined a group by SMS opt-in.'),
    }),
    groups: array(ref('GroupRef')),
  }),
}
