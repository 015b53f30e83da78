import { parse, type DocumentNode, type GraphQLError, type GraphQLSchema } from 'graphql'
import type { Plugin } from 'graphql-yoga'
import { graphqlLimits } from './limits.js'
import { scanDocument } from './scan-document.js'
import { checkDocumentLimits } from './check-document-limits.js'
import { keepRefusalStatus } from './limit-error.js'

/**
 * Every request-size limit of /graphql that lives inside Yoga: the document is scanned before the
 * parser runs, and its shape and list-aware cost are checked before validation, so a refusal
 * costs time linear in the (bounded) document. See docs/security.md.
 *
 * Both run once per document text: Yoga's parser cache (on by default, an LRU keyed by the text)
 * answers a known text with the same DocumentNode without calling the parse function, so the
 * scan runs on a miss only; the shape check, about a tenth of a millisecond for a contacts page
 * and a pure function of schema and document, is kept per DocumentNode here (weakly: it goes when
 * Yoga's LRU drops the document).
 */
export function graphqlLimitsPlugin(limits = graphqlLimits): Plugin {
  const checked = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, GraphQLError | null>>()
  function check(schema: GraphQLSchema, document: DocumentNode) {
    let bySchema = checked.get(schema)
    if (!bySchema) checked.set(schema, (bySchema = new WeakMap()))
    let refusal = bySchema.get(document)
    if (refusal === undefined) bySchema.set(document, (refusal = checkDocumentLimits(schema, document, limits)))
    return refusal
  }
  return {
    onParse({ setParseFn }) {
      setParseFn((source, options) => {
        const text = typeof source === 'string' ? source : source.body
        scanDocument(text, limits)
        return parse(source, { ...options, maxTokens: limits.maxTokens })
      })
    },
    onValidate({ params, setResult }) {
      const refusal = check(params.schema, params.documentAST)
      if (refusal) setResult([refusal])
    },
    onResultProcess({ result }) {
      if (!Array.isArray(result) && 'errors' in result && result.errors) keepRefusalStatus(result.errors)
    },
  }
}
