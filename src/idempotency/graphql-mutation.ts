import { Kind, parse, type OperationDefinitionNode } from 'graphql'

/**
 * Whether a POST /graphql body may run a mutation, read the way Yoga reads it: a JSON body
 * (`query` + `operationName`, a leading byte-order mark allowed), an `application/graphql` body
 * (the document itself, operationName in the query string) or a form body. Only a body proven to
 * select a query or a subscription is not one; anything else (multipart/form-data, a body this
 * cannot read) counts as a mutation, so the Idempotency-Key is honoured on every transport Yoga
 * may accept, now or later. (Multipart and a byte-order mark used to run a mutation again on a retry.)
 */
export function isMutationRequest(contentType: string | null, url: URL, body: Uint8Array): boolean {
  return !selectsOnlyReads(contentType, url, body)
}

function selectsOnlyReads(contentType: string | null, url: URL, body: Uint8Array): boolean {
  const text = Buffer.from(body)
    .toString('utf8')
    .replace(/^\uFEFF/, '')
  let query: unknown
  let operationName: unknown
  if (/^application\/graphql\s*(;|$)/i.test(contentType ?? '')) {
    query = text
    operationName = url.searchParams.get('operationName')
  } else if (/^application\/x-www-form-urlencoded\s*(;|$)/i.test(contentType ?? '')) {
    const form = new URLSearchParams(text)
    query = form.get('query')
    operationName = form.get('operationName')
  } else if (/^multipart\//i.test(contentType ?? '')) {
    return false
  } else {
    try {
      const parsed = JSON.parse(text) as { query?: unknown; operationName?: unknown } | null
      query = parsed?.query
      operationName = parsed?.operationName
    } catch {
      return false
    }
  }
  if (typeof query !== 'string') return false
  let operations: OperationDefinitionNode[]
  try {
    operations = parse(query, { noLocation: true }).definitions.filter(
      (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
    )
  } catch {
    return false
  }
  const selected =
    typeof operationName === 'string' && operationName
      ? operations.find((o) => o.name?.value === operationName)
      : operations.length === 1
        ? operations[0]
        : undefined
  return selected !== undefined && selected.operation !== 'mutation'
}
