import { afterAll, beforeAll } from 'vitest'
import type { DocumentNode } from 'graphql'
import type { ErrorDetail } from '../../src/core/errors.js'
import { documentText, type TadaDocumentNode } from '../../src/graphql/typed-documents.js'
import { createApp, type App } from '../../src/app.js'
import { applyMigrations } from '../../src/db/migrate.js'
import { databaseTimeouts, openDatabase, type Database } from '../../src/db/client.js'
import { parseEnv } from '../../src/core/env.js'
import { fixedClock, type Clock } from '../../src/core/clock.js'
import { createDeps, type Deps } from '../../src/deps.js'
import type { SmsGateway } from '../../src/sms/gateway.js'
import type { TestTarget, TestDatabase } from './databases.js'
import { Seed } from './seed.js'
import { ResponseContract } from './response-contract.js'

export interface KitOptions {
  env?: Record<string, string>
  clock?: Clock
  gateway?: SmsGateway
}

export interface RestResult {
  status: number
  headers: Headers
  /**
   * The parsed JSON (or the text of another media type). Left untyped on purpose: every answer is
   * checked against the served OpenAPI document before it gets here (ResponseContract), and tests
   * read the legacy shapes as integrators do.
   */
  // oxlint-disable-next-line typescript/no-explicit-any
  body: any
}

/**
 * The data of a GraphQL document written as plain text in a test (a hostile or malformed one, or one
 * whose exact text matters): no type can be derived from it. Typed documents get their own types.
 */
// oxlint-disable-next-line typescript/no-explicit-any
export type Untyped = any

export interface GraphqlAnswer<Data> {
  data?: Data
  /** Every error of this service carries a code (docs/graphql.md "Errors"); validation failures list their details. */
  errors?: {
    message: string
    extensions: { code: string; details?: ErrorDetail[] } & Record<string, unknown>
    path?: (string | number)[]
  }[]
}

export class TestKit {
  /** Every SQL statement sent since the last `statements.length = 0`. */
  readonly statements: string[] = []
  deps!: Deps
  app!: App
  database!: Database
  url!: string
  private handle!: TestDatabase
  private contract?: Promise<ResponseContract>

  constructor(
    readonly target: TestTarget,
    private readonly options: KitOptions = {},
  ) {}

  async start() {
    this.handle = await this.target.create()
    this.url = this.handle.url
    await applyMigrations(this.url)
    return this.attach(this.url)
  }

  /** A second instance on the database of another kit (its own Prisma client and app). */
  async attach(url: string) {
    this.url = url
    const env = parseEnv({ DATABASE_URL: url, LOG_LEVEL: 'silent', RATE_LIMIT_PER_SECOND: '0', ...this.options.env })
    this.database = await openDatabase(url, { onQuery: (sql) => this.statements.push(sql), timeouts: databaseTimeouts(env) })
    this.deps = createDeps(this.database, env, { clock: this.options.clock, gateway: this.options.gateway })
    this.app = createApp({ deps: this.deps, ready: this.database.ready })
    return this
  }

  async detach() {
    // A key's lastUsedAt write may still run (off the request's path): closing under it could hang the pool's end.
    await this.deps.apiKeyCache.idle()
    await this.database.close()
  }

  async stop() {
    await this.deps?.apiKeyCache.idle()
    await this.database?.close()
    await this.handle?.drop()
  }

  get db() {
    return this.deps.db
  }

  /**
   * Deps for another app on this kit's database, with its own settings: the kit's event bus and API
   * key cache, so that stop() waits for that app's lastUsedAt writes too (a write still running when
   * the pool ends held the pool's end, and the test's afterAll, for ever).
   */
  depsWith(env: Record<string, string> = {}, overrides: Partial<Omit<Deps, 'db' | 'dbKind' | 'env'>> = {}) {
    const settings = parseEnv({ DATABASE_URL: this.url, LOG_LEVEL: 'silent', RATE_LIMIT_PER_SECOND: '0', ...env })
    return createDeps(this.database, settings, { events: this.deps.events, apiKeyCache: this.deps.apiKeyCache, ...overrides })
  }

  seed() {
    return new Seed(this)
  }

  /** A REST call in-process; `body` is sent as JSON unless `rawBody` is given. */
  async rest(
    method: string,
    path: string,
    options: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
  ): Promise<RestResult> {
    const headers: Record<string, string> = { ...options.headers }
    if (options.key) headers.authorization = `Bearer ${options.key}`
    let body: string | undefined = options.rawBody
    if (options.body !== undefined) {
      body = JSON.stringify(options.body)
      headers['content-type'] ??= 'application/json'
    }
    const response = await this.app.fetch(new Request(`http://localhost${path}`, { method, headers, body }))
    const text = await response.text()
    const contentType = response.headers.get('content-type')
    let parsed: unknown = text === '' ? null : text
    // Other media types (a guide's XML, iCalendar or M3U) stay text, even when the text would parse as JSON.
    if (!contentType || /^application\/([\w.-]+\+)?json\b/i.test(contentType)) {
      try {
        parsed = text ? JSON.parse(text) : null
      } catch {
        // not JSON; keep the text
      }
    }
    // Every REST answer must match the OpenAPI document the service serves: a mismatch fails the caller.
    const problem = (await this.responseContract()).check(method, path, response.status, parsed, text !== '', contentType)
    if (problem) throw new Error(problem)
    return { status: response.status, headers: response.headers, body: parsed }
  }

  /** The served /api/openapi.json, fetched once per kit. */
  responseContract(): Promise<ResponseContract> {
    this.contract ??= this.app
      .fetch(new Request('http://localhost/api/openapi.json'))
      .then((r) => r.json())
      .then((document) => new ResponseContract(document))
    return this.contract
  }

  /**
   * Runs a GraphQL operation over HTTP in-process. A typed document (`graphql()` of
   * src/graphql/typed-documents.ts) types its variables and data; a plain text document, written to
   * test what a hostile or malformed one does, answers untyped data (`Untyped`).
   */
  graphql<Result, Variables>(
    document: TadaDocumentNode<Result, Variables>,
    variables?: Variables,
    key?: string,
  ): Promise<GraphqlAnswer<Result>>
  graphql(document: string, variables?: Record<string, unknown>, key?: string): Promise<GraphqlAnswer<Untyped>>
  async graphql(document: DocumentNode | string, variables: unknown = {}, key?: string): Promise<GraphqlAnswer<unknown>> {
    const query = typeof document === 'string' ? document : documentText(document)
    const res = await this.rest('POST', '/graphql', { key, body: { query, variables } })
    return res.body as GraphqlAnswer<unknown>
  }

  /** Like graphql() but fails, printing the operation and the answer, when there are errors. */
  gql<Result, Variables>(document: TadaDocumentNode<Result, Variables>, variables?: Variables, key?: string): Promise<Result>
  gql(document: string, variables?: Record<string, unknown>, key?: string): Promise<Untyped>
  async gql(document: DocumentNode | string, variables: Record<string, unknown> = {}, key?: string): Promise<unknown> {
    const result = await this.graphql(document as string, variables, key)
    if (result.errors?.length || !result.data) {
      const query = typeof document === 'string' ? document : documentText(document)
      throw new Error(
        `GraphQL operation failed\n--- query\n${query}\n--- variables\n${JSON.stringify(variables, null, 2)}\n--- response\n${JSON.stringify(result, null, 2)}`,
      )
    }
    return result.data
  }
}

/** A kit per test file, started before its tests and dropped after. */
export function useKit(target: TestTarget, options: KitOptions = {}) {
  const kit = new TestKit(target, options)
  beforeAll(() => kit.start().then(() => undefined))
  afterAll(() => kit.stop())
  return kit
}

export { fixedClock }
