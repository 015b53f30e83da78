import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core'
import type { GraphQLFieldResolver } from 'graphql'
import { isScope, type Scope } from '../../auth/scopes.js'
import type { Context } from '../context.js'
import { requireScope } from '../require-scope.js'

/**
 * What a root field needs: an API key scope (src/auth/scopes.ts); `public` for fields anyone may
 * use (channel data), `connector` for the carrier connector's token (the resolver checks it).
 */
export type FieldScope = Scope | 'public' | 'connector'

const ROOT_TYPES = new Set(['Query', 'Mutation', 'Subscription'])

/** The sentence every root field's description ends with; test/api-key-scopes.test.ts reads it back. */
export const scopeSentence = (scope: FieldScope) =>
  scope === 'public'
    ? 'Scope: public (no API key needed).'
    : scope === 'connector'
      ? 'Scope: connector (the carrier connector token, not an API key).'
      : `Scope: \`${scope}\`.`

/**
 * Every Query, Mutation and Subscription field states the scope it needs (`scope:` in its options):
 * the schema refuses to build without it, its description says it, and its resolver (a
 * subscription's subscribe) checks it before anything else runs. The REST routes run GraphQL
 * documents, and the WebSocket and SSE transports run the same schema, so every door inherits the
 * check. Objects reached through a root field need nothing more: `node(id:)` checks `read` for
 * account objects (src/graphql/account-scoped.ts).
 */
export class FieldScopesPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override onOutputFieldConfig(fieldConfig: PothosOutputFieldConfig<Types>): PothosOutputFieldConfig<Types> {
    if (!ROOT_TYPES.has(fieldConfig.parentType)) return fieldConfig
    const scope = scopeOf(fieldConfig)
    if (!scope) throw new Error(`${fieldConfig.parentType}.${fieldConfig.name} states no scope (field option \`scope\`)`)
    const description = fieldConfig.description ? `${fieldConfig.description} ${scopeSentence(scope)}` : scopeSentence(scope)
    return { ...fieldConfig, description, extensions: { ...fieldConfig.extensions, scope } }
  }

  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    if (fieldConfig.parentType === 'Subscription') return resolver
    return guarded(resolver, fieldConfig)
  }

  override wrapSubscribe(
    subscribe: GraphQLFieldResolver<unknown, Types['Context'], object> | undefined,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> | undefined {
    return subscribe && guarded(subscribe, fieldConfig)
  }
}

function scopeOf<Types extends SchemaTypes>(fieldConfig: PothosOutputFieldConfig<Types>): FieldScope | null {
  const scope = (fieldConfig.pothosOptions as { scope?: unknown }).scope
  return typeof scope === 'string' && (scope === 'public' || scope === 'connector' || isScope(scope)) ? scope : null
}

function guarded<Types extends SchemaTypes>(
  resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
  fieldConfig: PothosOutputFieldConfig<Types>,
): GraphQLFieldResolver<unknown, Types['Context'], object> {
  if (!ROOT_TYPES.has(fieldConfig.parentType)) return resolver
  const scope = scopeOf(fieldConfig)
  if (!scope || scope === 'public' || scope === 'connector') return resolver
  return async (parent, args, context, info) => {
    await requireScope(context as Context, scope)
    return resolver(parent, args, context, info)
  }
}

const pluginName = 'fieldScopes'
SchemaBuilder.registerPlugin(pluginName, FieldScopesPlugin)
/** The name to list in the builder's plugins (importing it registers the plugin). */
export default pluginName

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      fieldScopes: FieldScopesPlugin<Types>
    }
    export interface FieldOptions<Types extends SchemaTypes, ParentShape, Type, Nullable, Args, ResolveShape, ResolveReturnShape> {
      /** What the field needs (root fields only): src/graphql/plugins/field-scopes.ts. */
      scope?: FieldScope
    }
  }
}
