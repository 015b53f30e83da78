// graphql-jit, loaded on first use: with fast-json-stringify and ajv under it, importing it took about
// a tenth of a second of every start-up (docs/operations.md, "Start-up"), before any query asked for it.
type Jit = typeof import('graphql-jit')

let jit: Jit | undefined
let loading: Promise<Jit> | undefined

/** graphql-jit, once loaded. */
export function loadJit(): Promise<Jit> {
  return (loading ??= import('graphql-jit').then((module) => (jit = module)))
}

/** graphql-jit if it is loaded already (no promise on the path of every query after the first). */
export function loadedJit(): Jit | undefined {
  return jit
}
