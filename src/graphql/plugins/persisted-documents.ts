// Persisted documents on /graphql (docs/graphql.md "Persisted documents"):
// - automatic persisted queries, Apollo's protocol: `extensions.persistedQuery
//   { version: 1, sha256Hash }` without a query is answered from the documents this instance was
//   sent before (with a query, the hash is checked and the pair kept), else PersistedQueryNotFound
//   and the client sends the text once;
// - trusted documents: the REST routes' and the console's, by construction, plus the operator's
//   manifest (GRAPHQL_TRUSTED_DOCUMENTS_FILE); with GRAPHQL_TRUSTED_DOCUMENTS=only nothing else runs.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { GraphQLError } from 'graphql'
import type { Plugin } from 'graphql-yoga'
import { graphqlLimits } from '../limits/limits.js'

/** What the automatic store may hold per instance, least recently used out; only documents within the document limit are kept. */
export const APQ_STORE_BYTES = 8 * 1024 * 1024

const HASH = /^[0-9a-f]{64}$/
export const documentHash = (document: string) => createHash('sha256').update(document).digest('hex')

export interface TrustedDocuments {
  mode: 'open' | 'only'
  /** sha256 hex -> document. */
  documents: Map<string, string>
}

/** The trusted documents: `builtIn` (REST routes, console) and the operator's manifest file, whose every entry must hash to its key. */
export function loadTrustedDocuments(mode: 'open' | 'only', builtIn: string[], manifestFile?: string): TrustedDocuments {
  const documents = new Map(builtIn.map((d) => [documentHash(d), d]))
  if (manifestFile) {
    let manifest: unknown
    try {
      manifest = JSON.parse(readFileSync(manifestFile, 'utf8'))
    } catch (error) {
      throw new Error(`GRAPHQL_TRUSTED_DOCUMENTS_FILE ${manifestFile}: ${(error as Error).message}`, { cause: error })
    }
    if (!manifest || typeof manifest !== 'object' || Array.isArray(manifest))
      throw new Error(`GRAPHQL_TRUSTED_DOCUMENTS_FILE ${manifestFile}: expected an object { "<sha256 hex>": "<document>" }`)
    for (const [hash, document] of Object.entries(manifest)) {
      if (typeof document !== 'string' || documentHash(document) !== hash)
        throw new Error(`GRAPHQL_TRUSTED_DOCUMENTS_FILE ${manifestFile}: the entry ${hash.slice(0, 16)}… is not the sha256 of its document`)
      documents.set(hash, document)
    }
  }
  return { mode, documents }
}

const refusal = (message: string, code: string, status: number) => new GraphQLError(message, { extensions: { code, http: { status } } })

/** A document store bounded by bytes, least recently used out. */
function boundedStore(maxBytes: number) {
  const entries = new Map<string, string>()
  let bytes = 0
  return {
    get(hash: string) {
      const document = entries.get(hash)
      if (document !== undefined) {
        entries.delete(hash)
        entries.set(hash, document)
      }
      return document
    },
    set(hash: string, document: string) {
      // A document over the limit is refused at parse anyway: it is never kept.
      if (entries.has(hash) || document.length > graphqlLimits.maxDocumentLength) return
      entries.set(hash, document)
      bytes += document.length * 2
      for (const [oldest, old] of entries) {
        if (bytes <= maxBytes) break
        entries.delete(oldest)
        bytes -= old.length * 2
      }
    },
  }
}

/**
 * The document of a request's parameters: its query, or the one its persisted-query hash names.
 * Throws the protocol's errors; in `only` mode, a document that is not trusted.
 */
export function createDocumentResolver(trusted: TrustedDocuments) {
  const store = boundedStore(APQ_STORE_BYTES)
  return function resolve(params: { query?: unknown; extensions?: unknown }): unknown {
    // A query that is not a string is the parameter checks' to refuse (graphqlParamsPlugin, Yoga).
    if (params.query !== undefined && params.query !== null && typeof params.query !== 'string') return params.query
    const persisted = (params.extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | null | undefined)
      ?.persistedQuery
    let query = typeof params.query === 'string' ? params.query : undefined
    if (persisted !== undefined && persisted !== null) {
      const hash = persisted.sha256Hash
      if (persisted.version !== 1 || typeof hash !== 'string' || !HASH.test(hash))
        throw refusal('extensions.persistedQuery needs version 1 and a sha256Hash of 64 lower-case hex digits', 'BAD_REQUEST', 400)
      if (query === undefined) {
        query = trusted.documents.get(hash) ?? (trusted.mode === 'open' ? store.get(hash) : undefined)
        // Apollo's clients look for this message, then send the document with its hash.
        if (query === undefined) throw refusal('PersistedQueryNotFound', 'PERSISTED_QUERY_NOT_FOUND', 200)
        return query
      }
      if (documentHash(query) !== hash)
        throw refusal('The query is not the document extensions.persistedQuery.sha256Hash names', 'BAD_REQUEST', 400)
      if (trusted.mode === 'open') store.set(hash, query)
    }
    if (trusted.mode === 'only' && query !== undefined && !trusted.documents.has(documentHash(query)))
      throw refusal(
        'This service answers trusted documents only (GRAPHQL_TRUSTED_DOCUMENTS=only): send a document from its manifest, or its sha256 in extensions.persistedQuery',
        'PERSISTED_QUERY_NOT_ALLOWED',
        400,
      )
    return query
  }
}

/** The Yoga side: resolves `params.query` before anything reads it. */
export function persistedDocumentsPlugin(resolve: ReturnType<typeof createDocumentResolver>): Plugin {
  return {
    onParams({ params, setParams }) {
      const query = resolve(params)
      if (query !== params.query) setParams({ ...params, query: query as string })
    },
  }
}
