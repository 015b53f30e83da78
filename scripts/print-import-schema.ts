// Writes docs/channel-import.schema.json from the import validator (npm run schema:print does both).
import { writeFileSync } from 'node:fs'
import { importJsonSchema } from '../src/channel/import-json-schema.js'

writeFileSync(new URL('../docs/channel-import.schema.json', import.meta.url), importJsonSchema())
console.log('wrote docs/channel-import.schema.json')
