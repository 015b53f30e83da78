// Writes a new migration for every database target from the change in prisma/models.prisma.
//   npm run migration:new -- <name>
// The previous datamodel is rebuilt from the migrations already checked in (prisma migrate diff
// --from-migrations needs a shadow database, which adapter mode lacks), so this compares against
// the snapshot written next to the migrations: prisma/<target>/migrations/schema.snapshot.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const name = process.argv[2]
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error('usage: npm run migration:new -- <name in snake_case>')
  process.exit(1)
}
const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14)
const prismaCli = join('node_modules', 'prisma', 'build', 'index.js')

for (const [target, url] of [
  ['sqlite', 'file::memory:'],
  // Diffing runs through a live connection in adapter mode; any reachable PostgreSQL will do.
  ['postgresql', process.env.MIGRATION_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'],
] as const) {
  const dir = join('prisma', target, 'migrations')
  const snapshot = join(dir, 'schema.snapshot')
  const from = existsSync(snapshot) ? ['--from-schema-datamodel', snapshot] : ['--from-empty']
  const out = execFileSync(
    process.execPath,
    [prismaCli, 'migrate', 'diff', ...from, '--to-schema-datamodel', join('prisma', target), '--script'],
    { env: { ...process.env, DATABASE_URL: url }, encoding: 'utf8' },
  )
  // The first line is Prisma's "Loaded Prisma config" notice.
  const sql = out
    .split('\n')
    .filter((line, i) => !(i === 0 && line.startsWith('Loaded Prisma config')))
    .join('\n')
    .trim()
  if (!sql || sql === '-- This is an empty migration.') {
    console.log(`${target}: no change`)
    continue
  }
  const folder = join(dir, `${stamp}_${name}`)
  mkdirSync(folder, { recursive: true })
  writeFileSync(join(folder, 'migration.sql'), sql + '\n')
  // The snapshot is schema + models in one file, what the next diff starts from.
  const schema = readFileSync(join('prisma', target, 'schema.prisma'), 'utf8')
  const models = readFileSync(join('prisma', 'models.prisma'), 'utf8')
  writeFileSync(snapshot, `${schema}\n${models}`)
  if (!existsSync(join(dir, 'migration_lock.toml'))) {
    writeFileSync(join(dir, 'migration_lock.toml'), `provider = "${target}"\n`)
  }
  console.log(`${target}: wrote ${folder}/migration.sql`)
}
