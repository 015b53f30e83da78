import { getOperationAST, type ExecutionResult } from 'graphql'
import type { Plugin } from 'graphql-yoga'
import type { Metrics } from './create-metrics.js'

/** Clients choose operation names: past this many distinct ones, new names are counted as `other`. */
const MAX_OPERATION_NAMES = 200
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/

/** Counts the operations Yoga executes at /graphql, their errors and execution time. */
export function graphqlMetricsPlugin(metrics: Metrics): Plugin {
  const seen = new Set<string>()
  function label(name: string | undefined): string {
    if (!name) return 'anonymous'
    if (!NAME.test(name)) return 'other'
    if (seen.has(name)) return name
    if (seen.size >= MAX_OPERATION_NAMES) return 'other'
    seen.add(name)
    return name
  }

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
      const labels = { operation_name: label(operation?.name?.value ?? args.operationName ?? undefined), operation_type: operation?.operation ?? 'unknown' }
      const started = performance.now()
      return {
        onExecuteDone({ result }) {
          metrics.graphqlDuration.observe(labels, (performance.now() - started) / 1000)
          // A subscription's stream is not a single result: its start counts as the outcome.
          const errors = Symbol.asyncIterator in result ? undefined : (result as ExecutionResult).errors
          if (errors?.length) metrics.graphqlErrors.inc({ phase: 'execute' })
          metrics.graphqlOperations.inc({ ...labels, outcome: errors?.length ? 'error' : 'ok' })
        },
      }
    },
  }
}
