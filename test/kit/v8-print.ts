// What V8 says of objects in a child process: the child runs `script` (an ES module, `tsx` loaded,
// `gc()` exposed, `--allow-natives-syntax` set from the script) and this returns what its
// `%DebugPrint` calls printed. For the tests of the shapes the server settles at start-up.
import { execFileSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export function debugPrintOf(script: string): string {
  // %DebugPrint writes through C's stdio, which drops what a full non-blocking pipe refuses: a file.
  const dir = mkdtempSync(join(tmpdir(), 'v8-print-'))
  const fd = openSync(join(dir, 'out'), 'w')
  try {
    execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', fd, 'pipe'],
    })
  } finally {
    closeSync(fd)
  }
  const out = readFileSync(join(dir, 'out'), 'utf8')
  rmSync(dir, { recursive: true })
  return out
}
