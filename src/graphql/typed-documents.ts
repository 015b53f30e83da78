// Typed GraphQL documents: `graphql(text, fragments?)` returns the parsed document, and the
// compiler knows its result and variables (gql.tada's types over src/graphql/schema-introspection.d.ts,
// which `npm run schema:print` writes from schema.graphql). A selection that does not fit the
// schema, or code that reads a field the selection does not hold, fails `tsc`.
//
// Only gql.tada's types are used: the document is parsed here by graphql-js, once, when the module
// that holds it loads. Fragments are passed beside the text, as gql.tada wants them, and their
// definitions are appended to the document (each once, however often it is reached).
import { Kind, parse, type DocumentNode } from 'graphql'
import type { initGraphQLTada } from 'gql.tada'
import type { introspection } from './schema-introspection.js'

export type { ResultOf, TadaDocumentNode } from 'gql.tada'

type Setup = {
  introspection: introspection
  scalars: { DateTime: string }
  // A fragment's fields are read where it is spread: nothing here hides them behind readFragment.
  disableMasking: true
}

/** The text a document was written as (its fragments appended): what a client would send. */
export const documentText = (document: DocumentNode): string => document.loc!.source.body

function typedDocument(text: string, fragments: readonly DocumentNode[] = []): DocumentNode {
  const own = parse(text)
  const defined = new Set(own.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [d.name.value] : [])))
  const appended: string[] = []
  for (const fragment of fragments) {
    const body = documentText(fragment)
    for (const definition of fragment.definitions) {
      if (definition.kind !== Kind.FRAGMENT_DEFINITION || defined.has(definition.name.value)) continue
      defined.add(definition.name.value)
      appended.push(body.slice(definition.loc!.start, definition.loc!.end))
    }
  }
  return appended.length ? parse([text, ...appended].join('\n')) : own
}

export const graphql = typedDocument as unknown as initGraphQLTada<Setup>
