import { buildSchema, introspectionFromSchema, printSchema } from 'graphql'
import { schema } from './schema.js'

/** The schema as SDL, sorted (schema.ts sorts it), with a trailing newline. */
export const printedSchema = () => `${printSchema(schema)}\n`

/**
 * The schema's types for gql.tada (src/graphql/typed-documents.ts), from the SDL. Its writer is a
 * development tool (a devDependency), loaded only here.
 */
export async function printedIntrospectionTypes(sdl: string): Promise<string> {
  const { minifyIntrospection, outputIntrospectionFile } = await import('@gql.tada/internal')
  const introspection = minifyIntrospection(introspectionFromSchema(buildSchema(sdl)))
  return outputIntrospectionFile(introspection, { fileType: '.d.ts', shouldPreprocess: true })
}
