import { defaultFieldResolver, GraphQLSchema, isObjectType } from 'graphql'
import { encodeNodeId, NODE_TYPES, type NodeType } from './node-id.js'
import { builder } from './builder.js'
import './types/common.js'
import './connections.js'
import './types/messaging-groups.js'
import './types/messaging-contacts.js'
import './types/sms.js'
import './types/sms-bulk.js'
import './types/webhooks.js'
import './types/account.js'
import './types/audit.js'
import './types/sms-opt-in.js'
import './types/channel.js'
import './types/channel-admin.js'
import './types/live.js'

// Pothos' toSchema takes no schema description, so it is added to the built schema's config.
const description = [
  'SMS and channel gateway: the primary API; the REST paths under /api run these same operations.',
  'Authentication: send `Authorization: Bearer <API key>` (in GraphiQL, the Headers tab). Messaging fields and every mutation need a key and see only its account; `channel` and `program` are public. An unknown or revoked key is UNAUTHENTICATED.',
  'Restricted keys: a key holds scopes (ApiKeyScope); every Query, Mutation and Subscription field ends its description with the scope it needs, and a key without it gets FORBIDDEN naming the scope. Console sessions hold every scope.',
  'Errors carry `extensions.code` from one vocabulary (BAD_REQUEST, UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, CONFLICT, VALIDATION_FAILED with `details`, RATE_LIMITED, IDEMPOTENCY_KEY_REUSED, INTERNAL, SERVICE_UNAVAILABLE).',
  'Mutation requests may carry an `Idempotency-Key` header (1-255 printable ASCII, per account, kept 24 h): a repeat of the same request gets the first answer again with `Idempotency-Replayed: true`; the key with a different request is refused with `IDEMPOTENCY_KEY_REUSED`, a repeat while the first still runs with `CONFLICT`.',
].join('\n\n')

// Pothos' toSchema sorts the schema lexicographically already (its `sortSchema` option, on by
// default), and the schema made from its config keeps that order: a second
// lexicographicSortSchema gave the same printed schema and introspection and cost a start about
// 15 ms (docs/performance.md, "Start-up without the optimising compiler's early work").
export const schema = explicitDefaultResolvers(synchronousNodeIds(new GraphQLSchema({ ...builder.toSchema().toConfig(), description })))

/**
 * Every field without a resolver gets graphql-js's default one, which is what graphql-js runs for
 * it anyway. graphql-jit (REST routes, compiled /graphql queries) reads such a field as a plain
 * property instead: a promise or a getter's promise there (PageInfo.hasPreviousPage after a cursor,
 * src/graphql/keyset.ts) would be serialised as `{}`. With a resolver, it awaits the value as
 * graphql-js does; test/graphql-compiled-execution.test.ts sends such queries.
 */
function explicitDefaultResolvers(built: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(built.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue
    for (const field of Object.values(type.getFields())) field.resolve ??= defaultFieldResolver
  }
  return built
}

/**
 * Every Node's `id`, resolved without a promise. The Relay plugin's global id resolver is async, so
 * a page of 25 nodes selecting `id` handed graphql-js 25 promises to wait for, one per node (about
 * a quarter of a GraphQL page's throughput, issue 19). Each Node here takes its global id from its
 * source's `id` (prismaNode `field: 'id'`; Channel and Program `resolve: (x) => x.id`), encoded as
 * the plugin encodes it (node-id.ts); test/graphql-relay.test.ts compares them.
 */
function synchronousNodeIds(built: GraphQLSchema): GraphQLSchema {
  const nodes = Object.values(built.getTypeMap()).filter((t) => isObjectType(t) && t.getInterfaces().some((i) => i.name === 'Node'))
  const unlisted = nodes.map((t) => t.name).filter((n) => !(NODE_TYPES as readonly string[]).includes(n))
  if (unlisted.length) throw new Error(`Node types missing from NODE_TYPES (node-id.ts): ${unlisted.join(', ')}`)
  for (const name of NODE_TYPES) {
    const type = built.getType(name)
    if (!isObjectType(type) || !type.getInterfaces().some((i) => i.name === 'Node')) throw new Error(`${name} is not a Node`)
    const typename: NodeType = name
    type.getFields().id!.resolve = (source: { id: string | number }) => encodeNodeId(typename, source.id)
  }
  return built
}
