export type DatabaseKind = 'sqlite' | 'postgresql'

export interface ParsedDatabaseUrl {
  kind: DatabaseKind
  /** SQLite: the file path (":memory:" allowed). */
  file?: string
  /** PostgreSQL: the connection string without the `schema` parameter. */
  connectionString?: string
  /** PostgreSQL: the schema to use (the `?schema=` parameter, as Prisma spells it), default public. */
  schema?: string
}

export function parseDatabaseUrl(url: string): ParsedDatabaseUrl {
  if (/^postgres(ql)?:\/\//.test(url)) {
    const parsed = new URL(url)
    const schema = parsed.searchParams.get('schema') ?? 'public'
    parsed.searchParams.delete('schema')
    return { kind: 'postgresql', connectionString: parsed.toString(), schema }
  }
  return { kind: 'sqlite', file: url.replace(/^file:/, '') }
}
