import { GraphQLSchema, lexicographicSortSchema } from 'graphql'
import { builder } from './builder.js'
import './common.js'
import './messaging-groups.js'
import './messaging-contacts.js'
import './sms.js'
import './webhooks.js'
import './subscriptions.js'
import './channel.js'
import './channel-admin.js'

// Pothos' toSchema takes no schema description, so it is added to the built schema's config.
const description = `SMS and channel gateway. Mutation requests may carry an \`Idempotency-Key\` header (1-255 printable ASCII, per account, kept 24 h): a repeat of the same request gets the first answer again with \`Idempotency-Replayed: true\`; the key with a different request is refused with \`IDEMPOTENCY_KEY_REUSED\`, a repeat while the first still runs with \`CONFLICT\`.`

export const schema = lexicographicSortSchema(new GraphQLSchema({ ...builder.toSchema().toConfig(), description }))
