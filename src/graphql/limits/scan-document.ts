import { Lexer, Source, TokenKind, GraphQLError } from 'graphql'
import { graphqlLimits } from './limits.js'
import { limitError } from './limit-error.js'

const opening = new Set<string>([TokenKind.BRACE_L, TokenKind.PAREN_L, TokenKind.BRACKET_L])
const closing = new Set<string>([TokenKind.BRACE_R, TokenKind.PAREN_R, TokenKind.BRACKET_R])

/**
 * Checks a document's length, lines, token count and nesting with one linear pass of the lexer, before the
 * (recursive) parser sees it. Throws a BAD_REQUEST GraphQLError; syntax errors are left to the parser.
 */
export function scanDocument(source: string, limits = graphqlLimits): void {
  if (source.length > limits.maxDocumentLength) {
    throw limitError(`The document is longer than ${limits.maxDocumentLength} characters`)
  }
  let lines = 1
  for (let i = source.indexOf('\n'); i !== -1; i = source.indexOf('\n', i + 1)) lines++
  if (lines > limits.maxLines) throw limitError(`The document has more than ${limits.maxLines} lines`)
  const lexer = new Lexer(new Source(source))
  let tokens = 0
  let nesting = 0
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      if (++tokens > limits.maxTokens) throw limitError(`The document has more than ${limits.maxTokens} tokens`)
      if (opening.has(token.kind) && ++nesting > limits.maxNesting) {
        throw limitError(`The document nests deeper than ${limits.maxNesting} levels`)
      }
      if (closing.has(token.kind)) nesting--
    }
  } catch (error) {
    if (error instanceof GraphQLError && error.extensions.code === 'BAD_REQUEST') throw error
    // A lexical error: the parser reports it with its usual message.
  }
}
