import {
  Kind,
  visit,
  BREAK,
  type DocumentNode,
  type SelectionSetNode,
  type FragmentDefinitionNode,
  type GraphQLError,
  type GraphQLSchema,
} from 'graphql'
import { graphqlLimits, maxIntrospectionListNesting } from './limits.js'
import { limitError } from './limit-error.js'
import { measureOperation } from './measure-operation.js'

/**
 * The limits on a parsed document, checked before graphql-js validation (some of whose rules grow
 * with the square of a repeated argument or field). Returns the first limit broken, or null.
 * Linear in the document: one walk, then each operation measured with fragments memoised.
 */
export function checkDocumentLimits(schema: GraphQLSchema, document: DocumentNode, limits = graphqlLimits): GraphQLError | null {
  if (document.definitions.length > limits.maxDefinitions) {
    return limitError(`More than ${limits.maxDefinitions} operations and fragments in one document`)
  }
  let refusal: GraphQLError | null = null
  let aliases = 0
  visit(document, {
    enter(node) {
      if ('arguments' in node && node.arguments && node.arguments.length > limits.maxArguments) {
        refusal = limitError(`More than ${limits.maxArguments} arguments on one field or directive`, node)
      } else if (node.kind === Kind.OBJECT && node.fields.length > limits.maxArguments) {
        refusal = limitError(`More than ${limits.maxArguments} fields in one input object`, node)
      } else if (node.kind === Kind.OPERATION_DEFINITION && (node.variableDefinitions?.length ?? 0) > limits.maxVariables) {
        refusal = limitError(`More than ${limits.maxVariables} variables in one operation`, node)
      } else if (node.kind === Kind.SELECTION_SET && mostRepeated(node) > limits.maxFieldRepeats) {
        refusal = limitError(`A field is selected more than ${limits.maxFieldRepeats} times in one selection set`, node)
      } else if ('directives' in node && node.directives && node.directives.length > limits.maxDirectives) {
        refusal = limitError(`More than ${limits.maxDirectives} directives on one node`, node)
      } else if (node.kind === Kind.FIELD && node.alias && ++aliases > limits.maxAliases) {
        refusal = limitError(`More than ${limits.maxAliases} aliases in the document`, node)
      }
      return refusal ? BREAK : undefined
    },
  })
  if (refusal) return refusal

  const fragments = new Map<string, FragmentDefinitionNode>()
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d)
  for (const operation of document.definitions) {
    if (operation.kind !== Kind.OPERATION_DEFINITION) continue
    const m = measureOperation(schema, fragments, operation)
    if (m.depth > limits.maxDepth) return limitError(`Query depth ${m.depth} is over the limit of ${limits.maxDepth}`, operation)
    if (m.introspectionLists > maxIntrospectionListNesting) {
      return limitError(`Introspection nests more than ${maxIntrospectionListNesting} lists`, operation)
    }
    if (m.cost > limits.maxCost) {
      return limitError(`Query cost ${m.cost} is over the limit of ${limits.maxCost} (lists count as their page size)`, operation)
    }
  }
  return null
}

/** The most times one response name is selected in a set, inline fragments merged as graphql-js merges them. */
function mostRepeated(set: SelectionSetNode): number {
  const counts = new Map<string, number>()
  let most = 0
  const count = (s: SelectionSetNode) => {
    for (const selection of s.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) count(selection.selectionSet)
      else if (selection.kind === Kind.FIELD) {
        const name = selection.alias?.value ?? selection.name.value
        const n = (counts.get(name) ?? 0) + 1
        counts.set(name, n)
        most = Math.max(most, n)
      }
    }
  }
  count(set)
  return most
}
