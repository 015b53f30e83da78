// Prisma CLI configuration (tooling only; the service applies migrations itself, see src/db/migrate.ts).
// The target follows DATABASE_URL: postgresql://... selects prisma/postgresql, anything else prisma/sqlite.
import { defineConfig } from 'prisma/config'

const url = process.env.DATABASE_URL ?? 'file:./data/gateway.db'
const target = /^postgres(ql)?:\/\//.test(url) ? 'postgresql' : 'sqlite'

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  schema: `prisma/${target}`,
  async adapter() {
    if (target === 'sqlite') {
      const { PrismaBetterSQLite3 } = await import('@prisma/adapter-better-sqlite3')
      return new PrismaBetterSQLite3({ url })
    }
    const { PrismaPg } = await import('@prisma/adapter-pg')
    const pg = (await import('pg')).default
    // prisma/orm#27403: the Wasm schema engine cannot read PostgreSQL's `name` type; report it as text.
    class NameAsTextPool extends pg.Pool {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      async query(...args: any[]): Promise<any> {
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        const result: any = await (super.query as any)(...args)
        for (const field of result?.fields ?? []) if (field.dataTypeID === 19) field.dataTypeID = 25
        return result
      }
    }
    return new PrismaPg(new NameAsTextPool({ connectionString: url }))
  },
})
