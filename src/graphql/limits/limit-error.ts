import { GraphQLError, type ASTNode } from 'graphql'

const refusals = new WeakSet<GraphQLError>()

/**
 * A document over one of the limits: BAD_REQUEST (400). Yoga takes `http.status` as the response
 * status and drops it from the body.
 */
export function limitError(message: string, nodes?: ASTNode | readonly ASTNode[]): GraphQLError {
  const error = new GraphQLError(message, { nodes, extensions: { code: 'BAD_REQUEST', http: { status: 400 } } })
  refusals.add(error)
  return error
}

/**
 * Yoga marks parse and validation errors as "spec" errors, which it answers with 200 to clients
 * that accept only application/json; a refusal over a limit keeps its 400 for every client.
 */
export function keepRefusalStatus(errors: readonly unknown[]): void {
  for (const error of errors) {
    if (!(error instanceof GraphQLError) || !refusals.has(error)) continue
    const http = (error.extensions as { http?: { spec?: boolean } }).http
    if (http) http.spec = false
  }
}
