// Writes the sorted SDL to schema.graphql (npm run schema:print), and from it the schema's types for
// typed documents (src/graphql/schema-introspection.d.ts, read by src/graphql/typed-documents.ts).
// test/schema-artifact.test.ts fails when either file is stale.
import { writeFileSync } from 'node:fs'
import { printedSchema, printedIntrospectionTypes } from '../src/graphql/print.js'

const schema = printedSchema()
writeFileSync(new URL('../schema.graphql', import.meta.url), schema)
writeFileSync(new URL('../src/graphql/schema-introspection.d.ts', import.meta.url), await printedIntrospectionTypes(schema))
console.log('wrote schema.graphql and src/graphql/schema-introspection.d.ts')
