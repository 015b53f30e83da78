export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'

export interface RouteInput {
  params: Record<string, string>
  query: URLSearchParams
  /** The parsed JSON body (routes with `body: true` only). */
  body: unknown
}

export interface RestRoute {
  method: Method
  /** `:name` segments are parameters. */
  path: string
  /** Messaging routes need a Bearer key and answer errors as {error, code, details}; channel routes are public, {error}. */
  api: 'messaging' | 'channel'
  /** Answer with an ETag and 304 to a matching If-None-Match. */
  etag?: boolean
  /**
   * Public routes whose answer depends only on the URL and the second: the shaped answer is kept
   * for the rest of that second (and at most the router's `microcacheMs`).
   */
  microcache?: boolean
  /** Whether the route reads a JSON body. */
  body?: boolean
  /** The GraphQL operation the route runs, parsed and validated once at start-up. */
  document: string
  /** Builds the operation's variables from the request; throws AppError for bad input. */
  variables(input: RouteInput): Record<string, unknown>
  /** Shapes the GraphQL data into the documented JSON. */
  toLegacy(data: any, context: { input: RouteInput; publicBaseUrl: string; now: Date; request: Request }): unknown
  /** Extra response headers drawn from the same data (now playing's Cache-Control). */
  headers?(data: any): Record<string, string>
  /** Rewrites domain field names in validation details into the legacy spelling. */
  legacyField?(field: string): string
}

