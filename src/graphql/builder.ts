import SchemaBuilder from '@pothos/core'
import PrismaPlugin from '@pothos/plugin-prisma'
import ExposedColumnsPlugin from './plugins/exposed-columns.js'
import type PrismaTypes from '../generated/pothos-types.js'
import { getDatamodel } from '../generated/pothos-types.js'
import type { Context } from './context.js'

export const builder = new SchemaBuilder<{
  Context: Context
  PrismaTypes: PrismaTypes
  DefaultFieldNullability: false
  Scalars: {
    DateTime: { Input: Date; Output: Date }
  }
}>({
  // ExposedColumnsPlugin first: its resolver wraps the Prisma plugin's (src/graphql/plugins/).
  plugins: [ExposedColumnsPlugin, PrismaPlugin],
  defaultFieldNullability: false,
  prisma: {
    client: (ctx) => ctx.deps.db,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    onUnusedQuery: null,
  },
})

export type BuilderTypes = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never
