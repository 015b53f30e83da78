/**
 * The bounds every GraphQL request must fit before anything expensive runs. They hold one request
 * under ~100 ms of event-loop time and ~100 MiB of memory (see docs/security.md and
 * bench/graphql-attacks.ts); the REST documents in rest-compat/ stay well inside them.
 */
export const graphqlLimits = {
  /** Characters of the document itself (variables are separate). */
  maxDocumentLength: 32 * 1024,
  /** Lexical tokens (comments and commas are not tokens). */
  maxTokens: 2000,
  /**
   * Lines: graphql-js finds an error's line by scanning every line break before it, so error
   * reporting grows with lines times errors.
   */
  maxLines: 1000,
  /** Nested { ( [ before the recursive parser runs: stops stack overflows on deep documents. */
  maxNesting: 40,
  /**
   * Arguments on one field or directive, fields of one input object, variables of one operation,
   * directives on one node: some validation rules report every duplicate with every other.
   */
  maxArguments: 16,
  maxVariables: 50,
  /** Operations and fragments in one document. */
  maxDefinitions: 100,
  maxDirectives: 8,
  /** Times one response name may be selected in one selection set (field merging compares each pair). */
  maxFieldRepeats: 10,
  /** Field depth of an operation (fragments inlined). */
  maxDepth: 12,
  maxAliases: 30,
  /** List-aware cost: see query-cost.ts. */
  maxCost: 10_000,
  /** A GET /graphql query string (percent-encoded), longer is refused before it is decoded. */
  maxQueryStringLength: 3 * 32 * 1024,
} as const

/** Arguments that bound the length of a list field's answer (or of a page's nodes). */
export const pagingArguments = ['perPage', 'first', 'last', 'limit'] as const

/** The largest value each paging argument is clamped to by its resolver (src/graphql/*). */
export const pagingMaximum: Record<string, number> = {
  'Query.contacts': 100,
  'Query.groups': 100,
  'Group.contacts': 100,
  'Group.subscriptionEvents': 200,
  'Query.webhookDeliveries': 200,
  'Channel.programs': 50,
  'Channel.upcomingAirings': 50,
  'Program.episodes': 50,
}

/** A paging argument on a field not in the table above is assumed to allow this many. */
export const defaultPagingMaximum = 100

/** Rows of a connection page when neither `first` nor `last` is given (src/graphql/keyset.ts); `first`/`last` allow up to defaultPagingMaximum. */
export const defaultConnectionSize = 25

/** The most ids `nodes(ids:)` takes (src/graphql/builder.ts). */
export const maxNodeIds = 100

/** List fields with a fixed length that have no paging argument. */
export const fixedListSize: Record<string, number> = {
  'Channel.catchups': 15,
}

/** Multiplier for a list field with no paging argument and no fixed size (Contact.groups, ...). */
export const unboundedListSize = 10

/** Introspection: at most this many list fields on one path (the standard query needs 3). */
export const maxIntrospectionListNesting = 3
