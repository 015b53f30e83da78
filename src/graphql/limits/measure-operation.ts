import {
  Kind,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  TypeNameMetaFieldDef,
  getNamedType,
  getNullableType,
  isInterfaceType,
  isListType,
  isObjectType,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql'
import {
  defaultConnectionSize,
  defaultPagingMaximum,
  fixedListSize,
  maxNodeIds,
  pagingArguments,
  pagingMaximum,
  unboundedListSize,
} from './limits.js'

export interface OperationMeasure {
  /** Fields the operation can resolve at worst: each field 1, times the length of every list above it. */
  cost: number
  /** Field depth, fragments inlined; an introspection field counts as one level. */
  depth: number
  /** The most list fields on one path inside __schema / __type (their cost is not counted). */
  introspectionLists: number
}

const none: OperationMeasure = { cost: 0, depth: 0, introspectionLists: 0 }

/**
 * Measures one operation of a parsed (not necessarily valid) document. Each fragment is measured
 * once per mode and reused, so fragment fan-out cannot make this slower than the document is long;
 * recursion is bounded by the nesting limit checked before parsing.
 */
export function measureOperation(
  schema: GraphQLSchema,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  operation: OperationDefinitionNode,
): OperationMeasure {
  const memo = new Map<string, OperationMeasure>()
  const visiting = new Set<string>()

  /** `edges`: the page size when `set` is the selection of a connection (its edges and nodes lists get that length). */
  function selectionSet(
    set: SelectionSetNode,
    parent: GraphQLNamedType | undefined,
    introspection: boolean,
    edges?: number,
  ): OperationMeasure {
    let cost = 0
    let depth = 0
    let introspectionLists = 0
    for (const selection of set.selections) {
      let m: OperationMeasure
      if (selection.kind === Kind.FIELD) m = field(selection, parent, introspection, edges)
      else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent
        m = selectionSet(selection.selectionSet, type ?? undefined, introspection, edges)
      } else m = spread(selection.name.value, introspection, edges)
      cost += m.cost
      depth = Math.max(depth, m.depth)
      introspectionLists = Math.max(introspectionLists, m.introspectionLists)
    }
    return { cost, depth, introspectionLists }
  }

  function spread(name: string, introspection: boolean, edges?: number): OperationMeasure {
    const key = `${introspection}:${edges ?? ''}:${name}`
    const known = memo.get(key)
    if (known) return known
    const fragment = fragments.get(name)
    // Unknown and cyclic fragments are refused by validation; they add nothing here.
    if (!fragment || visiting.has(key)) return none
    visiting.add(key)
    const m = selectionSet(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value) ?? undefined, introspection, edges)
    visiting.delete(key)
    memo.set(key, m)
    return m
  }

  function field(node: FieldNode, parent: GraphQLNamedType | undefined, introspection: boolean, edges?: number): OperationMeasure {
    const name = node.name.value
    const def = fieldDefinition(schema, parent, name)
    const entering = !introspection && (name === '__schema' || name === '__type')
    const inside = introspection || entering
    const type = def ? getNamedType(def.type) : undefined
    // A connection resolves once; its page size multiplies what is under its edges (and nodes), not
    // its totalCount and pageInfo.
    const pageSize = !inside && def && parent && isConnection(type) ? connectionSize(parent, def, node) : undefined
    const child = node.selectionSet ? selectionSet(node.selectionSet, type, inside, pageSize) : none
    if (inside) {
      // The schema is small and fixed: what bounds an introspection answer is how many lists nest.
      const isList = def !== undefined && isListType(getNullableType(def.type))
      return { cost: entering ? 1 : 0, depth: entering ? 1 : 0, introspectionLists: child.introspectionLists + (isList ? 1 : 0) }
    }
    if (pageSize !== undefined) return { cost: 1 + child.cost, depth: 1 + child.depth, introspectionLists: child.introspectionLists }
    const length = edges !== undefined && (name === 'edges' || name === 'nodes') ? edges : def && parent ? listLength(parent, def, node) : 1
    return { cost: 1 + length * child.cost, depth: 1 + child.depth, introspectionLists: child.introspectionLists }
  }

  return selectionSet(operation.selectionSet, schema.getRootType(operation.operation) ?? undefined, false)
}

/** A Relay connection type: an object with `edges` and `pageInfo`. */
function isConnection(type: GraphQLNamedType | undefined): boolean {
  if (!type || !isObjectType(type)) return false
  const fields = type.getFields()
  return 'edges' in fields && 'pageInfo' in fields
}

/** Rows of one connection page, at worst: `first` or `last` as given (a variable counts as the maximum), else the default page size. */
function connectionSize(parent: GraphQLNamedType, def: GraphQLField<unknown, unknown>, node: FieldNode): number {
  const max = pagingMaximum[`${parent.name}.${def.name}`] ?? defaultPagingMaximum
  let n = 0
  let given = false
  for (const argument of node.arguments ?? []) {
    if (argument.name.value !== 'first' && argument.name.value !== 'last') continue
    given = true
    n = Math.max(n, argument.value.kind === Kind.INT ? Number(argument.value.value) : max)
  }
  return Math.min(Math.max(given ? n : defaultConnectionSize, 1), max)
}

function fieldDefinition(
  schema: GraphQLSchema,
  parent: GraphQLNamedType | undefined,
  name: string,
): GraphQLField<unknown, unknown> | undefined {
  if (name === '__typename') return TypeNameMetaFieldDef
  if (parent && parent === schema.getQueryType()) {
    if (name === '__schema') return SchemaMetaFieldDef
    if (name === '__type') return TypeMetaFieldDef
  }
  if (parent && (isObjectType(parent) || isInterfaceType(parent))) return parent.getFields()[name]
  return undefined
}

/**
 * How many times a field's selection is resolved, at worst: its paging argument (literal, else
 * the schema default; a variable counts as the maximum, since validation runs before variables are
 * known), a fixed page size, or a guess for lists nothing bounds.
 */
function listLength(parent: GraphQLNamedType, def: GraphQLField<unknown, unknown>, node: FieldNode): number {
  const coordinate = `${parent.name}.${def.name}`
  const paging = def.args.find((a) => (pagingArguments as readonly string[]).includes(a.name))
  if (paging) {
    const max = pagingMaximum[coordinate] ?? defaultPagingMaximum
    const given = node.arguments?.find((a) => a.name.value === paging.name)
    let n = max
    if (!given) n = typeof paging.defaultValue === 'number' ? paging.defaultValue : max
    else if (given.value.kind === Kind.INT) n = Number(given.value.value)
    return Math.min(Math.max(n, 1), max)
  }
  // nodes(ids:): one object per id given (a variable counts as the most ids allowed).
  const ids = node.arguments?.find((a) => a.name.value === 'ids')
  if (ids && def.args.some((a) => a.name === 'ids')) return ids.value.kind === Kind.LIST ? Math.max(ids.value.values.length, 1) : maxNodeIds
  const fixed = fixedListSize[coordinate]
  if (fixed !== undefined) return fixed
  if (!isListType(getNullableType(def.type))) return 1
  // A page's nodes: their number was counted on the field that returned the page.
  if (def.name === 'nodes' && parent.name.endsWith('Page')) return 1
  return unboundedListSize
}
