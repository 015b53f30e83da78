import { getOperationAST, type DocumentNode, type ExecutionResult } from 'graphql'
import type { Plugin } from 'graphql-yoga'
import { bearerToken } from '../auth/api-keys.js'
import type { Metrics } from './create-metrics.js'

/** Past this many names learned from authenticated clients, further new names count as `other`. */
const MAX_LEARNED_NAMES = 200
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/

export interface OperationLabelOptions {
  /** Operation names that are always labels: the REST routes' documents (see operationNamesOf). */
  known?: Iterable<string>
  /**
   * The operation names of trusted documents, when there are any (a persisted-documents manifest
   * would hand its names here): always labels, like `known`.
   */
  trusted?: Iterable<string>
  /** How many names authenticated clients may add (default 200). */
  maxLearned?: number
}

/**
 * The names of the named operations in `documents` (for `known`): the parsed documents, which the
 * REST routes hold already (parsing their texts again cost a start about 4 ms).
 */
export function operationNamesOf(documents: Iterable<DocumentNode>): string[] {
  const names: string[] = []
  for (const document of documents) {
    for (const definition of document.definitions) {
      if (definition.kind === 'OperationDefinition' && definition.name) names.push(definition.name.value)
    }
  }
  return names
}

interface LabelContext {
  request?: Request
  account?: () => Promise<unknown>
}

/** One operation's outcome, once it is known: its duration and whether it had errors. */
export interface OperationObservation {
  done(errors: boolean): void
}

/**
 * The operation counter and timer of /graphql, labelled by operation name only when the name is the
 * operator's: a REST route's or trusted document's, or one an authenticated client (a valid API key)
 * used, up to `maxLearned`. Anonymous clients' names count as `other`, so they can neither grow the
 * series nor use up the room of real operations. Shared by the Yoga plugin below and the fast lane
 * (src/graphql/fast-lane.ts), so an operation counts the same whichever answers it.
 */
export function createOperationObserver(metrics: Metrics, options: OperationLabelOptions = {}) {
  const fixed = new Set([...(options.known ?? []), ...(options.trusted ?? [])])
  const learned = new Set<string>()
  const maxLearned = options.maxLearned ?? MAX_LEARNED_NAMES

  /** The label when it needs no authentication; undefined when only an authenticated client could add it. */
  function quickLabel(name: string | undefined): string | undefined {
    if (!name) return 'anonymous'
    if (!NAME.test(name)) return 'other'
    if (fixed.has(name) || learned.has(name)) return name
    if (learned.size >= maxLearned) return 'other'
    return undefined
  }

  function learn(name: string): string {
    if (learned.size >= maxLearned) return 'other'
    learned.add(name)
    return name
  }

  function observe(label: string, operationType: string): OperationObservation {
    const labels = { operation_name: label, operation_type: operationType }
    const started = performance.now()
    return {
      done(errors) {
        metrics.graphqlDuration.observe(labels, (performance.now() - started) / 1000)
        if (errors) metrics.graphqlErrors.inc({ phase: 'execute' })
        metrics.graphqlOperations.inc({ ...labels, outcome: errors ? 'error' : 'ok' })
      },
    }
  }

  /** Starts timing an operation named `name` (undefined: anonymous) of `operationType`. */
  return function start(
    name: string | undefined,
    operationType: string,
    context: LabelContext,
  ): OperationObservation | Promise<OperationObservation> {
    const quick = quickLabel(name)
    if (quick !== undefined) return observe(quick, operationType)
    if (!context.account || !bearerToken(context.request?.headers.get('authorization') ?? null)) return observe('other', operationType)
    // The resolvers share this lookup (the context remembers it); a refused key is their error to report.
    return context.account().then(
      () => observe(learn(name!), operationType),
      () => observe('other', operationType),
    )
  }
}

export type OperationObserver = ReturnType<typeof createOperationObserver>

/** Counts the operations Yoga executes at /graphql, their errors and execution time (createOperationObserver). */
export function graphqlMetricsPlugin(
  metrics: Metrics,
  options: OperationLabelOptions = {},
  start: OperationObserver = createOperationObserver(metrics, options),
): Plugin {
  return {
    onParse() {
      return ({ result }) => {
        if (result instanceof Error) metrics.graphqlErrors.inc({ phase: 'parse' })
      }
    },
    onValidate() {
      return ({ valid }) => {
        if (!valid) metrics.graphqlErrors.inc({ phase: 'validate' })
      }
    },
    onExecute({ args }) {
      const operation = getOperationAST(args.document, args.operationName)
      const name = operation?.name?.value ?? args.operationName ?? undefined
      const operationType = operation?.operation ?? 'unknown'
      const whenDone = (observation: OperationObservation) => ({
        onExecuteDone({ result }: { result: unknown }) {
          // A subscription's stream is not a single result: its start counts as the outcome.
          const errors = Symbol.asyncIterator in (result as object) ? undefined : (result as ExecutionResult).errors
          observation.done(Boolean(errors?.length))
        },
      })
      const observation = start(name, operationType, args.contextValue as LabelContext)
      return observation instanceof Promise ? observation.then(whenDone) : whenDone(observation)
    },
  }
}
