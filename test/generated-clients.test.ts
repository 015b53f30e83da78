// The generated Prisma clients compile the query compiler's Wasm from its file read as text, so
// that its 2.4 MB of base64 do not stay in every instance's heap (scripts/generate-clients.mjs).
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
// @ts-expect-error: a plain .mjs script without types
import { readWasmFromItsFile } from '../scripts/generate-clients.mjs'

const run = promisify(execFile)
const root = fileURLToPath(new URL('..', import.meta.url))
const dir = mkdtempSync(join(os.tmpdir(), 'gateway-generated-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The start of every Wasm binary ("\0asm", version 1) in base64. */
const WASM_BASE64 = 'AGFzbQEAAAAB'

describe('the generated clients', () => {
  it.each(['sqlite', 'postgresql'])('%s: reads the Wasm file as text instead of importing it', (kind) => {
    const source = readFileSync(join(root, `src/generated/${kind}/internal/class.ts`), 'utf8')
    expect(source).not.toMatch(/import\("@prisma\/client\/runtime\/query_compiler_bg\.\w+\.wasm-base64\.mjs"\)/)
    expect(source).toContain(`resolve("@prisma/client/runtime/query_compiler_bg.${kind}.wasm-base64.mjs")`)
  })

  it('the generator rewrites the import it knows and refuses code it does not, leaving the file as it was', () => {
    const file = join(dir, 'class.ts')
    const generated = [
      '  getQueryCompilerWasmModule: async () => {',
      '    const { wasm } = await import("@prisma/client/runtime/query_compiler_bg.sqlite.wasm-base64.mjs")',
      '    return await decodeBase64AsWasm(wasm)',
      '  }',
      '',
    ].join('\n')
    writeFileSync(file, generated)
    readWasmFromItsFile(file, 'sqlite')
    const rewritten = readFileSync(file, 'utf8')
    expect(rewritten).not.toContain('await import("@prisma/client/runtime/query_compiler_bg.sqlite.wasm-base64.mjs")')
    expect(rewritten).toContain(
      `readFileSync(createRequire(import.meta.url).resolve("@prisma/client/runtime/query_compiler_bg.sqlite.wasm-base64.mjs"), 'latin1')`,
    )

    const other = generated.replace('decodeBase64AsWasm(wasm)', 'decodeWasm(wasm)')
    writeFileSync(file, other)
    expect(() => readWasmFromItsFile(file, 'sqlite')).toThrow(/no longer imported as scripts\/generate-clients\.mjs expects/)
    expect(readFileSync(file, 'utf8')).toBe(other)
  })

  it('a process that has run a query holds no copy of the base64 in its heap', async () => {
    const script = join(dir, 'heap.mts')
    const src = (path: string) => JSON.stringify(pathToFileURL(join(root, path)).href)
    writeFileSync(
      script,
      `import v8 from 'node:v8'
import { applyMigrations } from ${src('src/db/migrate.ts')}
import { openDatabase } from ${src('src/db/client.ts')}
const url = process.env.DATABASE_URL
await applyMigrations(url)
const database = await openDatabase(url)
const accounts = await database.prisma.account.count()
// Strings of a megabyte or more that hold the Wasm's base64 (from the file or a module's source).
const chunks = []
for await (const chunk of v8.getHeapSnapshot()) chunks.push(chunk)
const snapshot = JSON.parse(Buffer.concat(chunks).toString('utf8'))
const fields = snapshot.snapshot.meta.node_fields
const [type, name, size] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f))
const stringType = snapshot.snapshot.meta.node_types[0].indexOf('string')
let found = 0
for (let i = 0; i < snapshot.nodes.length; i += fields.length)
  if (snapshot.nodes[i + type] === stringType && snapshot.nodes[i + size] >= 1_000_000 && snapshot.strings[snapshot.nodes[i + name]].includes(${JSON.stringify(WASM_BASE64)})) found++
await database.close()
process.stdout.write(JSON.stringify({ accounts, found }))
`,
    )
    const { stdout } = await run(process.execPath, ['--import', 'tsx', script], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: `file:${join(dir, 'heap.db')}`, LOG_LEVEL: 'silent' },
      maxBuffer: 1 << 20,
    })
    // The query ran through the client (so its compiler was loaded), and no string holds the Wasm.
    expect(JSON.parse(stdout)).toEqual({ accounts: 0, found: 0 })
  }, 60_000)
})
