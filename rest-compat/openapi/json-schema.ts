// JSON Schema 2020-12 (the dialect OpenAPI 3.1 uses) and the few shorthands the route table writes
// its schemas with. Every object schema is closed (`additionalProperties: false`), so a field the
// document does not name is caught by the test kit's response check rather than slipping through.

export type JsonSchema = { [keyword: string]: unknown }

/** A reference to a schema in `components.schemas`. */
export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` })

export const string = (description?: string, extra: JsonSchema = {}): JsonSchema => ({
  type: 'string',
  ...(description ? { description } : {}),
  ...extra,
})
export const integer = (description?: string, extra: JsonSchema = {}): JsonSchema => ({
  type: 'integer',
  ...(description ? { description } : {}),
  ...extra,
})
export const boolean = (description?: string): JsonSchema => ({ type: 'boolean', ...(description ? { description } : {}) })
export const uuid = (description?: string): JsonSchema => string(description, { format: 'uuid' })
export const oneOf = (values: readonly (string | number)[], description?: string): JsonSchema => ({
  enum: [...values],
  ...(description ? { description } : {}),
})

/** `schema` or null. */
export function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] }
  if (Array.isArray(schema.enum)) return { ...schema, enum: [...schema.enum, null] }
  return { anyOf: [schema, { type: 'null' }] }
}

export const array = (items: JsonSchema, description?: string): JsonSchema => ({
  type: 'array',
  items,
  ...(description ? { description } : {}),
})

/**
 * A closed object. Every property is required unless named in `optional`: the legacy shapes always
 * carry their fields (null when empty), so a missing field is drift.
 */
export function object(properties: Record<string, JsonSchema>, options: { optional?: string[]; description?: string } = {}): JsonSchema {
  const optional = new Set(options.optional ?? [])
  return {
    type: 'object',
    ...(options.description ? { description: options.description } : {}),
    properties,
    required: Object.keys(properties).filter((name) => !optional.has(name)),
    additionalProperties: false,
  }
}
