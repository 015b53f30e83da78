import { z } from 'zod'
import { channelImportSchema } from './import-schema.js'

/** The import format as JSON Schema (draft 2020-12), from the validator itself. */
export function importJsonSchema(): string {
  const schema = z.toJSONSchema(channelImportSchema, { io: 'input', unrepresentable: 'any' })
  return `${JSON.stringify({ ...schema, title: 'Channel import document', $id: 'channel-import.schema.json' }, null, 2)}\n`
}
