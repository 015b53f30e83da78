import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core'
import type { GraphQLFieldResolver } from 'graphql'

/**
 * A field that exposes a column (`t.exposeString('firstName')` on a select-mode prismaObject)
 * answers from the row when the row holds that column.
 *
 * The Prisma plugin wraps every such field so that a row loaded without the column gets it loaded
 * on demand; the wrapper finds the row's loader mapping first, which for a 25-row page of 8 columns
 * is 200 lookups building string keys, about a tenth of a contacts page request's CPU
 * (`npm run bench -- peers`). A column present on the row, null included, is the answer the
 * wrapped resolver would give, so only rows without it take the wrapped path. Listed first among
 * the plugins, so its wrapper is the outermost.
 */
export class ExposedColumnsPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    const column = exposedColumn(fieldConfig)
    if (!column) return resolver
    return (parent, args, context, info) => {
      const value = (parent as Record<string, unknown>)[column]
      return value !== undefined ? value : resolver(parent, args, context, info)
    }
  }
}

/** The column a Prisma object field exposes as it is (expose*), or null for any other field. */
export function exposedColumn<Types extends SchemaTypes>(fieldConfig: PothosOutputFieldConfig<Types>): string | null {
  if (fieldConfig.kind !== 'PrismaObject') return null
  const extensions = fieldConfig.extensions as { pothosPrismaVariant?: unknown; pothosPrismaSelect?: unknown } | undefined
  const column = extensions?.pothosPrismaVariant
  const select = extensions?.pothosPrismaSelect
  if (typeof column !== 'string' || !select || typeof select !== 'object') return null
  const keys = Object.keys(select)
  return keys.length === 1 && keys[0] === column && (select as Record<string, unknown>)[column] === true ? column : null
}

const pluginName = 'exposedColumns'
SchemaBuilder.registerPlugin(pluginName, ExposedColumnsPlugin)
/** The name to list in the builder's plugins (importing it registers the plugin). */
export default pluginName

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      exposedColumns: ExposedColumnsPlugin<Types>
    }
  }
}
