import { Prisma } from '../generated/sqlite/client.js'
import type { DatabaseKind } from './connection-url.js'

/** A set of texts bound as one JSON array (one parameter, one statement shape), as rows of one column "value", for `IN (...)` or `FROM (...)`. */
export function jsonTexts(kind: DatabaseKind, texts: readonly string[]): Prisma.Sql {
  const json = JSON.stringify(texts)
  return kind === 'sqlite'
    ? Prisma.sql`SELECT value FROM json_each(${json})`
    : Prisma.sql`SELECT jsonb_array_elements_text(${json}::jsonb) AS value`
}
