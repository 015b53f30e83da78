// npm run bench -- <name>: runs bench/<name>.ts (all of them without a name).
import { readdirSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const dir = fileURLToPath(new URL('.', import.meta.url))
const names = process.argv.slice(2)
const all = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && !['harness.ts', 'run-all.ts'].includes(f))
  .map((f) => f.replace(/\.ts$/, ''))
for (const name of names.length ? names : all) {
  if (!all.includes(name)) {
    console.error(`no benchmark ${name}; have: ${all.join(', ')}`)
    process.exit(2)
  }
  console.log(`\n## ${name}`)
  const { status } = spawnSync(process.execPath, ['--import', 'tsx', `${dir}${name}.ts`], { stdio: 'inherit' })
  if (status !== 0) process.exit(status ?? 1)
}
