// Writes the sorted SDL to schema.graphql (npm run schema:print). A test fails when it is stale.
import { writeFileSync } from 'node:fs'
import { printedSchema } from '../src/graphql/print.js'

writeFileSync(new URL('../schema.graphql', import.meta.url), printedSchema())
console.log('wrote schema.graphql')
