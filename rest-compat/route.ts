import type { TadaDocumentNode } from '../src/graphql/typed-documents.js'
import type { JsonSchema } from './openapi/json-schema.js'

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'

export interface RouteInput {
  params: Record<string, string>
  query: URLSearchParams
  /** The parsed JSON body (routes with `body: true` only). */
  body: unknown
}

/** A path or query parameter as the OpenAPI document describes it. */
export interface ParameterDoc {
  description: string
  schema: JsonSchema
  example?: unknown
}

/**
 * What the OpenAPI document says about a route (rest-compat/openapi/ builds the document from these).
 * Error responses common to the route's API, and those that follow from `body`, are added by the
 * builder; `errors` lists the statuses particular to this route.
 */
export interface RouteDoc {
  operationId: string
  /** Groups operations in the reference (Groups, Contacts, Delivery reports, Channel, ...). */
  tag: string
  summary: string
  description?: string
  /** One entry per `:name` segment of the path. */
  params: Record<string, ParameterDoc>
  query?: Record<string, ParameterDoc>
  requestBody?: { schema: JsonSchema; example: unknown }
  /** `contentType` defaults to application/json; another type (a guide's XML, iCalendar, M3U) has a string schema. */
  response: { description: string; schema: JsonSchema; example: unknown; contentType?: string }
  /** Route-specific error statuses (for instance 409 on a rename, 400 on a bad query parameter). */
  errors?: number[]
}

/**
 * One REST path and the GraphQL operation it runs. `Result` is the operation's result type, known to
 * the compiler from the typed document (src/graphql/typed-documents.ts): write routes with `route()`
 * so it is inferred, and `toLegacy` reads only what the selection holds.
 */
export interface RestRoute<Result = unknown> {
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
  /**
   * How many seconds one microcached answer serves (default 1): the program guides, which cost far
   * more than they change, keep theirs for a minute. The key is the path and only the query
   * parameters the route documents (`openapi.query`), so other parameters cannot bypass it.
   */
  microcacheSeconds?: number
  /** Whether the route reads a JSON body. */
  body?: boolean
  /** The GraphQL operation the route runs (a typed document), validated and compiled once at start-up. */
  document: TadaDocumentNode<Result, never>
  /**
   * Builds the operation's variables from the request; throws AppError for bad input. Not typed by
   * the document: they come from the body rules and the query string, checked at run time, and
   * GraphQL coerces them again (a wrong one answers as bad input, like any other).
   */
  variables(input: RouteInput): Record<string, unknown>
  /**
   * The media type of an answer that is not JSON (for instance `text/calendar; charset=utf-8`):
   * `toLegacy` then returns the body text, sent as it is, with the same ETag and microcache rules.
   */
  contentType?: string
  /** Shapes the GraphQL data into the documented JSON (or, with `contentType`, the body text). */
  toLegacy(data: Found<Result>, context: { input: Omit<RouteInput, 'body'>; publicBaseUrl: string; now: Date; request: Request }): unknown
  /** Extra response headers drawn from the same data (now playing's Cache-Control). */
  headers?(data: Found<Result>): Record<string, string>
  /**
   * A paged list: where the answer stands, so that the router adds `Link` (first, prev, next, last)
   * and `X-Total-Count` to it (rest-compat/paging-headers.ts). The body stays as `toLegacy` built it.
   */
  paging?(data: Found<Result>): PagePosition
  /** Rewrites domain field names in validation details into the legacy spelling. */
  legacyField?(field: string): string
  /**
   * The route's OpenAPI description. Optional in the type so a new route compiles while it is being
   * written, but test/openapi.test.ts fails for any route without one.
   */
  openapi?: RouteDoc
}

/** The page a list answer holds, its last page and how many items the whole list has. */
export interface PagePosition {
  page: number
  /** 0 for an empty list is read as 1: the first page is also the last. */
  lastPage: number
  total: number
}

/**
 * The data a route's methods receive: the operation's result with every root field present. A
 * nullable root field (`group(id)`, `channel(id)`) is null only beside an error, and an error never
 * reaches `toLegacy`: the router answers it (and treats a null root without one as a fault).
 */
export type Found<Result> = { [Field in keyof Result]: NonNullable<Result[Field]> }

/**
 * A route, with its operation's result type inferred from the document, so that `toLegacy` and
 * `headers` are checked against the selection. The route table holds `RestRoute` (of unknown
 * result): a route's methods take its own result only, which the router passes.
 */
export const route = <Result>(definition: RestRoute<Result>): RestRoute => definition as RestRoute
