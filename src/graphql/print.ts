import { printSchema } from 'graphql'
import { schema } from './schema.js'

/** The schema as SDL, sorted (schema.ts sorts it), with a trailing newline. */
export const printedSchema = () => `${printSchema(schema)}\n`
