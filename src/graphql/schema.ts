import { GraphQLSchema, lexicographicSortSchema } from 'graphql'
import { builder } from './builder.js'
import './types/common.js'
import './connections.js'
import './types/messaging-groups.js'
import './types/messaging-contacts.js'
import './types/sms.js'
import './types/webhooks.js'
import './types/account.js'
import './types/sms-opt-in.js'
import './types/channel.js'
import './types/channel-admin.js'
import './types/live.js'

// Pothos' toSchema takes no schema description, so it is added to the built schema's config.
const description = [
  'SMS and channel gateway: the primary API; the REST paths under /api run these same operations.',
  'Authentication: send `Authorization: Bearer <API key>` (in GraphiQL, the Headers tab). Messaging fields and every mutation need a key and see only its account; `channel` and `program` are public. An unknown or revoked key is UNAUTHENTICATED.',
  'Errors carry `extensions.code` from one vocabulary (BAD_REQUEST, UNAUTHENTICATED, NOT_FOUND, CONFLICT, VALIDATION_FAILED with `details`, RATE_LIMITED, IDEMPOTENCY_KEY_REUSED, INTERNAL, SERVICE_UNAVAILABLE).',
  'Mutation requests may carry an `Idempotency-Key` header (1-255 printable ASCII, per account, kept 24 h): a repeat of the same request gets the first answer again with `Idempotency-Replayed: true`; the key with a different request is refused with `IDEMPOTENCY_KEY_REUSED`, a repeat while the first still runs with `CONFLICT`.',
].join('\n\n')

export const schema = lexicographicSortSchema(new GraphQLSchema({ ...builder.toSchema().toConfig(), description }))
