// Every shell example of README.md and docs/*.md, run verbatim with bash in the order written,
// against a real server on a fresh database, offline (issue 17: "every README and docs example
// works verbatim on a fresh machine with no internet, in the order written").
//
// The convention: a fenced ```sh block is an example that runs. A block that cannot run here says so
// in an HTML comment on the line before it, which readers do not see rendered:
//   <!-- example: not run, <the reason> -->
// The reasons are printed, so a skipped example is never silent. Within a block, a comment line
// `# <output>` after a command is what it prints: some line of the block's output must match it,
// with `…` standing for any text. Variables set by one block (KEY=..., ACCOUNT=...) reach the next
// ones: every file is one bash session, README.md first.
//
// Two shims stand between the examples and this machine, and change nothing a reader sees:
// `localhost:4000` goes to the test's server (its port is chosen at random), and curl fails on an
// HTTP error status (--fail-with-body), so an example that answers 4xx fails the test; a stream the
// example itself cuts with --max-time ends normally. Each answer ends its line, as in a terminal
// (JSON answers have no newline of their own).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import { readFileSync, readdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnServer } from './kit/server-process.js'
import { applyMigrations } from '../src/db/migrate.js'

interface Example {
  file: string
  line: number
  code: string
  skip?: string
}

/** The ```sh blocks of a Markdown file, with the `<!-- example: not run, … -->` reason of those that are not run. */
function examplesOf(file: string): Example[] {
  const lines = readFileSync(file, 'utf8').split('\n')
  const examples: Example[] = []
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```sh') continue
    const start = i
    const body: string[] = []
    while (++i < lines.length && lines[i]!.trim() !== '```') body.push(lines[i]!)
    const skip = /<!--\s*example:\s*not run,\s*(.+?)\s*-->/.exec(lines[start - 1] ?? '')?.[1]
    examples.push({ file, line: start + 1, code: body.join('\n'), ...(skip ? { skip } : {}) })
  }
  return examples
}

const files = [
  'README.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
]
const examples = files.flatMap(examplesOf)

/** `# <output>` lines after a command: patterns of what the block prints (`…` is any text). */
function expectedOutputs(code: string): RegExp[] {
  return code
    .split('\n')
    .filter((l) => /^#\s*([[{"]|data: )/.test(l.trim()))
    .map((l) => l.trim().replace(/^#\s*/, ''))
    .map(
      (l) =>
        new RegExp(
          `^${l
            .split('…')
            .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
            .join('.*')}$`,
        ),
    )
}

describe('the examples of README.md and docs/', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-examples-'))
  const url = `file:${join(dir, 'examples.db')}`
  let server: ReturnType<typeof spawnServer>
  let port = ''

  beforeAll(async () => {
    await applyMigrations(url)
    // As the README's "Run it" starts it, with private webhook receivers allowed, as the webhook example says for local trials.
    server = spawnServer({ DATABASE_URL: url, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', SANDBOX_DELIVERY_DELAY_MS: '100' })
    port = new URL(await server.listening()).port
  }, 120_000)

  afterAll(async () => {
    server?.child.kill('SIGTERM')
    await server?.exited
    rmSync(dir, { recursive: true, force: true })
  })

  it('finds the examples, and says why each one it does not run is left out', () => {
    expect(examples.filter((e) => !e.skip).length).toBeGreaterThan(8)
    for (const e of examples.filter((e) => e.skip)) console.log(`not run: ${e.file}:${e.line}: ${e.skip}`)
  })

  it('runs every other one in order, each ending with status 0 and printing what it says it prints', () => {
    const state = join(dir, 'state.sh')
    const preamble = [
      'set -o pipefail',
      `export DATABASE_URL='${url}' WEBHOOK_ALLOW_PRIVATE_NETWORKS=true LOG_LEVEL=silent`,
      // An example that gives --max-time itself cuts a stream on purpose: curl's 28 (timed out) is its normal end.
      `curl() { local a=() cut=; for x in "$@"; do a+=("\${x//localhost:4000/127.0.0.1:${port}}"); [ "$x" = --max-time ] && cut=1; done; local rc=0; if [ -n "$cut" ]; then command curl --fail-with-body "\${a[@]}" || rc=$?; [ $rc = 28 ] && rc=0; else command curl --fail-with-body --max-time 20 "\${a[@]}" || rc=$?; fi; echo; return $rc; }`,
    ].join('\n')
    for (const example of examples.filter((e) => !e.skip)) {
      // One bash per example; the variables the examples assign are carried to the next ones in a file.
      const assigned = [...new Set([...example.code.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]))]
      const keep = assigned.length ? `declare -p ${assigned.join(' ')} >> '${state}'` : ''
      const script = `${preamble}\n[ -f '${state}' ] && source '${state}'\nset -e\n${example.code}\nset +e\n${keep}\n`
      const run = spawnSync('bash', ['-c', script], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, FORCE_COLOR: '0' } })
      const output = `${run.stdout}${run.stderr}`
      const where = `${example.file}:${example.line}\n${example.code}\n--- output ---\n${output}`
      expect(run.status, `the example at ${where}`).toBe(0)
      const lines = run.stdout.split('\n').map((l) => l.trim())
      for (const pattern of expectedOutputs(example.code))
        expect(
          lines.some((l) => pattern.test(l)),
          `the example at ${where}\nprints no line like ${pattern}`,
        ).toBe(true)
    }
  }, 600_000)
})
