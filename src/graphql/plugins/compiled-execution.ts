import { getOperationAST, type DocumentNode, type GraphQLSchema } from 'graphql'
import type { CompiledQuery } from 'graphql-jit'
import type { Plugin } from 'graphql-yoga'
import { loadJit, loadedJit } from '../jit.js'
import type { CompiledAnswer } from '../fast-lane.js'

const isPromise = <T>(value: T | Promise<T>): value is Promise<T> => typeof (value as Promise<T>)?.then === 'function'

/** A document's second query runs compiled: one-off documents never pay for a compilation. */
export const COMPILE_ON_USE = 2
/** Compiled queries kept per process, least recently compiled out (each holds generated functions). */
export const COMPILED_MAX = 200

interface Uses {
  schema: GraphQLSchema
  document: DocumentNode
  operationName: string | null
  /** The operation's own name (undefined: anonymous), for the fast lane's metrics. */
  name?: string
  count: number
  /** Undefined until compiled; null when graphql-jit cannot compile it (then it stays on graphql-js). */
  compiled?: CompiledQuery | null
}

/**
 * Queries on /graphql run as functions that graphql-jit compiled from their document, as the REST
 * routes' documents already do (rest-compat/router.ts): the same resolvers and results, without
 * graphql-js building a resolve info, an argument object and a promise for every field of every
 * row (a 25-row contacts page executes about 240 fields). Only a document's COMPILE_ON_USE-th use
 * compiles it, so a stream of one-off documents costs no compilation; at most COMPILED_MAX
 * compiled documents are kept. Mutations and subscriptions stay on Yoga's executor (mutations run
 * their fields in order and are rare; subscriptions do not execute here). Documents come from
 * Yoga's parse cache, the same object for the same text, so a WeakMap finds their uses; parsing,
 * validation and the limits plugin run before this as always.
 */
export function compiledExecutionPlugin({
  compileOnUse = COMPILE_ON_USE,
  max = COMPILED_MAX,
  onAnswer,
}: {
  compileOnUse?: number
  max?: number
  /** Told of each request whose compiled answer had no errors (the fast lane learns from it: src/graphql/fast-lane.ts). */
  onAnswer?: (request: Request, answer: CompiledAnswer) => void
} = {}): Plugin {
  const uses = new WeakMap<DocumentNode, Uses>()
  const compiled = new Set<Uses>()

  function compiledFor(
    schema: GraphQLSchema,
    document: DocumentNode,
    operationName: string | null,
  ): CompiledQuery | null | Promise<CompiledQuery | null> {
    let entry = uses.get(document)
    if (!entry || entry.schema !== schema || entry.operationName !== operationName) {
      entry = { schema, document, operationName, count: 0 }
      uses.set(document, entry)
    }
    if (entry.compiled !== undefined) return entry.compiled
    if (++entry.count < compileOnUse) return null
    const operation = getOperationAST(document, operationName)
    if (operation?.operation !== 'query') {
      entry.compiled = null
      return null
    }
    entry.name = operation.name?.value
    const jit = loadedJit()
    // The first compilation of the process waits for graphql-jit to load (src/graphql/jit.ts).
    if (!jit) return loadJit().then(() => compile(entry))
    return compile(entry)
  }

  function compile(entry: Uses): CompiledQuery | null {
    if (entry.compiled !== undefined) return entry.compiled
    const { compileQuery, isCompiledQuery } = loadedJit()!
    const result = compileQuery(entry.schema, entry.document, entry.operationName ?? undefined)
    entry.compiled = isCompiledQuery(result) ? result : null
    if (entry.compiled) {
      compiled.add(entry)
      if (compiled.size > max) {
        const oldest = compiled.values().next().value!
        compiled.delete(oldest)
        // Counted again from zero: compiled again if it is still in use.
        oldest.compiled = undefined
        oldest.count = 0
      }
    }
    return entry.compiled
  }

  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const query = compiledFor(args.schema, args.document, args.operationName ?? null)
      const told = onAnswer && (args.contextValue as { request?: Request }).request
      const tell = told ? (answer: CompiledAnswer) => onAnswer(told, answer) : undefined
      const name = () => uses.get(args.document)?.name
      if (isPromise(query)) return query.then((loaded) => void (loaded && runCompiled(loaded, executeFn, setExecuteFn, tell, name)))
      if (query) runCompiled(query, executeFn, setExecuteFn, tell, name)
    },
  }
}

type ExecuteFn = Parameters<Parameters<NonNullable<Plugin['onExecute']>>[0]['setExecuteFn']>[0]

function runCompiled(
  query: CompiledQuery,
  executeFn: ExecuteFn,
  setExecuteFn: (fn: ExecuteFn) => void,
  tell: ((answer: CompiledAnswer) => void) | undefined,
  name: () => string | undefined,
) {
  setExecuteFn((run) => {
    // An answer with errors is graphql-js's own: graphql-jit words variable errors differently,
    // leaves out locations and orders data before errors. A query writes nothing, so running
    // it again is safe; only answers with errors pay for it.
    const answer = query.query(run.rootValue, run.contextValue, run.variableValues ?? {})
    const settled = (a: Awaited<typeof answer>) => {
      if (a.errors) return executeFn(run)
      tell?.({ query, name: name() })
      return a
    }
    return isPromise(answer) ? answer.then(settled) : settled(answer)
  })
}
