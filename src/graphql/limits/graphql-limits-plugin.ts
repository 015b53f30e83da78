import { parse } from 'graphql'
import type { Plugin } from 'graphql-yoga'
import { graphqlLimits } from './limits.js'
import { scanDocument } from './scan-document.js'
import { checkDocumentLimits } from './check-document-limits.js'
import { keepRefusalStatus } from './limit-error.js'

/**
 * Every request-size limit of /graphql that lives inside Yoga: the document is scanned before the
 * parser runs, and its shape and list-aware cost are checked before validation, so a refusal
 * costs time linear in the (bounded) document. See docs/security.md.
 */
export function graphqlLimitsPlugin(limits = graphqlLimits): Plugin {
  return {
    onParse({ setParseFn }) {
      setParseFn((source, options) => {
        const text = typeof source === 'string' ? source : source.body
        scanDocument(text, limits)
        return parse(source, { ...options, maxTokens: limits.maxTokens })
      })
    },
    onValidate({ params, setResult }) {
      const refusal = checkDocumentLimits(params.schema, params.documentAST, limits)
      if (refusal) setResult([refusal])
    },
    onResultProcess({ result }) {
      if (!Array.isArray(result) && 'errors' in result && result.errors) keepRefusalStatus(result.errors)
    },
  }
}
