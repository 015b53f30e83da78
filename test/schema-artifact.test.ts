import { readFileSync } from 'node:fs'
import { expect, it } from 'vitest'
import { printedIntrospectionTypes, printedSchema } from '../src/graphql/print.js'

it('schema.graphql is the current sorted SDL (run `npm run schema:print` after a schema change)', () => {
  const committed = readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8')
  // A diff of the two texts shows what changed; run `npm run schema:print` to bring the file up to date.
  expect(committed).toBe(printedSchema())
})

it('the typed documents read the current schema (src/graphql/schema-introspection.d.ts, written by `npm run schema:print`)', async () => {
  const committed = readFileSync(new URL('../src/graphql/schema-introspection.d.ts', import.meta.url), 'utf8')
  expect(committed).toBe(await printedIntrospectionTypes(printedSchema()))
})
