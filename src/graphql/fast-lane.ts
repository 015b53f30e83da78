// The fast lane of POST /graphql: a query document that Yoga has already answered, compiled and
// without errors, is answered again by its compiled function directly (docs/graphql.md, "The fast
// lane"; docs/performance.md).
import type { CompiledQuery } from 'graphql-jit'
import type { Context } from './context.js'
import type { OperationObserver } from '../metrics/graphql-plugin.js'
import type { Metrics } from '../metrics/create-metrics.js'
import { AnswerResponse } from '../http/answer-response.js'

/** Documents kept, least recently learned out: as many as the compiled queries (COMPILED_MAX). */
const MAX_DOCUMENTS = 200
/** Accept headers remembered with the media type Yoga answered them with. */
const MAX_ACCEPTS = 32

interface Learned {
  query: CompiledQuery
  /** The operation's name, for the metrics' label (undefined: anonymous). */
  name: string | undefined
}

/** What the compiled-execution plugin saw of a request it answered compiled and without errors. */
export interface CompiledAnswer {
  query: CompiledQuery
  name: string | undefined
}

const isPromise = <T>(value: T | Promise<T>): value is Promise<T> => typeof (value as Promise<T>)?.then === 'function'

/**
 * Yoga runs every request through its whole pipeline: reading the body, the plugins' hooks for
 * params, parse, validate, context and execute (each parse and validation answered from a cache),
 * then its result processing. For a contacts page that was about 45% of the request's CPU beyond
 * the REST route running the same compiled document. Everything those steps decide depends only on
 * the document's text, its operation name and the Accept header, except what the compiled
 * function itself checks (the variables) or the resolvers check (the credentials, scopes and
 * budgets of the context): so once Yoga has answered a text under a name with a compiled query and
 * no errors, a request with the same text, name and Accept header is answered here.
 *
 * Only plain JSON bodies without `extensions` (no persisted-query hash) take the lane. An answer
 * with errors is thrown away and the request goes to Yoga, which words and masks errors (a query
 * writes nothing, so running it again is safe). The access line, the door's stages and the
 * metrics are the same either way.
 */
export function createFastLane(
  observe: OperationObserver,
  answered: Pick<Metrics['graphqlFastLane'], 'inc'>,
  { max = MAX_DOCUMENTS } = {},
) {
  const documents = new Map<string, Learned>()
  const accepts = new Map<string, string>()
  /** Requests Yoga answered compiled, by request (set by the compiled-execution plugin). */
  const compiled = new WeakMap<Request, CompiledAnswer>()

  const keyOf = (query: string, operationName: string | null | undefined) => `${operationName ?? ''}\n${query}`

  return {
    /** Called by the compiled-execution plugin when a request's compiled answer had no errors. */
    compiledAnswer(request: Request, answer: CompiledAnswer) {
      compiled.set(request, answer)
    },

    /** After Yoga answered `request` (whose body was `params`): learns the document if it ran compiled. */
    learn(request: Request, params: { query: string; operationName?: string | null }, response: Response) {
      const answer = compiled.get(request)
      const contentType = response.headers.get('content-type')
      if (!answer || response.status !== 200 || !contentType) return
      const key = keyOf(params.query, params.operationName)
      if (!documents.has(key)) {
        if (documents.size >= max) documents.delete(documents.keys().next().value!)
        documents.set(key, { query: answer.query, name: answer.name })
      }
      const accept = request.headers.get('accept') ?? ''
      if (!accepts.has(accept) && accepts.size < MAX_ACCEPTS) accepts.set(accept, contentType)
    },

    /**
     * The answer to a JSON body already parsed, or null when the lane does not take it (unknown
     * document or Accept header, extensions, or an answer with errors): then Yoga answers.
     */
    async answer(request: Request, params: Record<string, unknown>, context: () => Context): Promise<Response | null> {
      const { query, operationName, variables } = params
      if (typeof query !== 'string' || params.extensions !== undefined) return null
      if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return null
      if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) return null
      const contentType = accepts.get(request.headers.get('accept') ?? '')
      const learned = contentType && documents.get(keyOf(query, operationName))
      if (!learned) return null
      const ctx = context()
      const started = observe(learned.name, 'query', { request, account: ctx.account })
      const result = learned.query.query(undefined, ctx, (variables ?? {}) as Record<string, unknown>)
      const [observation, answer] = await Promise.all([started, isPromise(result) ? result : Promise.resolve(result)])
      if (answer.errors) return null
      observation.done(false)
      answered.inc()
      return new AnswerResponse(JSON.stringify(answer), { status: 200, headers: { 'Content-Type': contentType } })
    },
  }
}
