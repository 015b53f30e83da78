// What dist/ is made from: every input's path, size and modification time, hashed (the sources,
// migrations, console, package.json, the tsconfigs and the build scripts). scripts/build.mjs records
// the hash in dist/.inputs; when it still matches, nothing needs building: starting esbuild to learn
// that nothing changed cost about 2 s of a start (docs/operations.md, "Start-up").
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

/** The inputs' count and hash, and whether dist/ was built from exactly these. */
export function distInputs(root) {
  const files = ['src', 'rest-compat', 'console', join('prisma', 'sqlite', 'migrations'), join('prisma', 'postgresql', 'migrations')]
    .flatMap((dir) =>
      readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath ?? entry.path, entry.name)),
    )
    .concat(
      ['package.json', 'tsconfig.json', 'tsconfig.build.json', join('scripts', 'build.mjs'), join('scripts', 'dist-inputs.mjs')].map(
        (file) => join(root, file),
      ),
    )
    .sort()
  const fingerprint = createHash('sha256')
  for (const file of files) {
    const { size, mtimeMs } = statSync(file)
    fingerprint.update(`${relative(root, file)}\0${size}\0${mtimeMs}\n`)
  }
  const hash = fingerprint.digest('hex')
  const stamp = join(root, 'dist', '.inputs')
  const upToDate = existsSync(join(root, 'dist', 'server.js')) && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash
  return { count: files.length, hash, upToDate }
}
