import SchemaBuilder from '@pothos/core'
import PrismaPlugin from '@pothos/plugin-prisma'
import RelayPlugin, { resolveNodes } from '@pothos/plugin-relay'
import ExposedColumnsPlugin from './plugins/exposed-columns.js'
import FieldScopesPlugin from './plugins/field-scopes.js'
import type PrismaTypes from '../generated/pothos-types.js'
import { getDatamodel } from '../generated/pothos-types.js'
import type { Context } from './context.js'
import { decodeNodeId, isNodeTarget } from './node-id.js'
import { AppError } from '../core/errors.js'

import { maxNodeIds as MAX_NODE_IDS } from './limits/limits.js'

/** The builder itself, for the `nodes` resolver configured inside its own options. */
let self: Parameters<typeof resolveNodes>[0]

export const builder = new SchemaBuilder<{
  Context: Context
  PrismaTypes: PrismaTypes
  DefaultFieldNullability: false
  DefaultEdgesNullability: { list: false; items: false }
  DefaultNodeNullability: false
  /** Every connection counts its rows only when `totalCount` is selected. */
  Connection: { totalCount: () => Promise<number> }
  Scalars: {
    DateTime: { Input: Date; Output: Date }
  }
}>({
  // ExposedColumnsPlugin first: its resolver wraps the Prisma plugin's (src/graphql/plugins/).
  // FieldScopesPlugin next: its check runs before anything of the field's own.
  plugins: [ExposedColumnsPlugin, FieldScopesPlugin, PrismaPlugin, RelayPlugin],
  defaultFieldNullability: false,
  prisma: {
    client: (ctx) => ctx.deps.db,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    onUnusedQuery: null,
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    // The Cursor Connections specification names this type PageInfo; the offset pages' meta is OffsetPageInfo.
    pageInfoTypeOptions: { description: 'Where a connection page stands (Relay cursor connections).' },
    nodeTypeOptions: { description: 'An object with a global id: fetch it again with `node(id:)`.' },
    idFieldOptions: { description: 'The global id (Relay): opaque; `node(id:)` fetches the object by it. The database id is `uuid`.' },
    // A malformed global id is the client's mistake (BAD_REQUEST), not an unexpected error.
    decodeGlobalID: (globalID) => decodeNodeId(globalID),
    nodeQueryOptions: {
      scope: 'public',
      description:
        'The object with this global id. Null when there is none, when the id names a type that is not a Node, or when it belongs to another account. Account objects need an API key; Channel and Program are public.',
      args: { id: { description: 'A global id, as the `id` field of a Node returns it.' } },
      // Ids of types that are not Node, or of impossible shape, name nothing: null, without a query.
      resolve: (_root, { id }, _ctx, _info, resolveNode) => (isNodeTarget(id) ? resolveNode(id) : null),
    },
    nodesQueryOptions: {
      scope: 'public',
      description:
        'The objects with these global ids, in the same order; null for each id `node(id:)` would answer null for. At most 100 ids.',
      args: { ids: { description: 'Global ids, as the `id` field of a Node returns them.' } },
      resolve: (_root, { ids }, ctx, info) => {
        if (ids.length > MAX_NODE_IDS) throw new AppError('BAD_REQUEST', `ids: at most ${MAX_NODE_IDS} ids`)
        return resolveNodes(
          self,
          ctx,
          info,
          ids.map((id) => (isNodeTarget(id) ? id : null)),
        )
      },
    },
    edgesFieldOptions: {
      nullable: { list: false, items: false },
      description: 'The rows of this page with their cursors, in the connection order.',
    },
    nodeFieldOptions: { nullable: false, description: 'The row.' },
    cursorFieldOptions: { description: 'Opaque position of this row: pass it as `after` or `before`.' },
    pageInfoFieldOptions: { description: 'Whether there are more rows on either side, and the cursors at both ends of the page.' },
    hasNextPageFieldOptions: { description: 'Rows follow this page: beyond `first`, or (paging backward with `last`) from `before` on.' },
    hasPreviousPageFieldOptions: {
      description: 'Rows come before this page: beyond `last`, or (paging forward with `first`) up to `after`.',
    },
    startCursorFieldOptions: { description: 'The cursor of the first edge; null when the page is empty.' },
    endCursorFieldOptions: { description: 'The cursor of the last edge; null when the page is empty.' },
    firstArgOptions: { description: 'Forward: at most this many rows after `after` (0-100; default 25). Not with `last`.' },
    lastArgOptions: { description: 'Backward: at most this many rows before `before` (0-100). Not with `first`.' },
    afterArgOptions: { description: 'A cursor of this connection: only rows after it.' },
    beforeArgOptions: { description: 'A cursor of this connection: only rows before it.' },
  },
})

self = builder as unknown as typeof self

export type BuilderTypes = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never
