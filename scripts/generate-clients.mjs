// Generates the Prisma client of each database target (and the Pothos types, with the SQLite one).
// Runs on `npm install`; offline, through the Wasm engine.
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const prisma = fileURLToPath(new URL('../node_modules/prisma/build/index.js', import.meta.url))
// Imported by its test for readWasmFromItsFile alone.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const [kind, url] of [
    ['sqlite', 'file:./data/gateway.db'],
    ['postgresql', 'postgresql://localhost/unused'],
  ]) {
    execFileSync(process.execPath, [prisma, 'generate', '--no-hints'], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DATABASE_URL: url, PRISMA_HIDE_UPDATE_MESSAGE: '1' },
    })
    readWasmFromItsFile(fileURLToPath(new URL(`../src/generated/${kind}/internal/class.ts`, import.meta.url)), kind)
  }
}

/**
 * Prisma's query compiler is Wasm, shipped as a module whose one export is the binary in base64
 * (2.4 MB). Imported, that text stays in the heap twice for the life of the process: V8 keeps the
 * module's source, and the module keeps its exported string. The generated client is changed to
 * read the same file as text and decode it once, so both are garbage after start-up: 5 MB less in
 * the old generation of every instance, and about 7 MiB less peak RSS (docs/operations.md, "Memory").
 * If a Prisma version generates other code here, this fails rather than leave the import in place.
 */
export function readWasmFromItsFile(file, kind) {
  const module = `@prisma/client/runtime/query_compiler_bg.${kind}.wasm-base64.mjs`
  const imported = `    const { wasm } = await import(${JSON.stringify(module)})\n    return await decodeBase64AsWasm(wasm)\n`
  const read = [
    `    // Read as text, not imported (scripts/generate-clients.mjs): the base64 is garbage once decoded.`,
    `    const { readFileSync } = await import('node:fs')`,
    `    const { createRequire } = await import('node:module')`,
    `    const text = readFileSync(createRequire(import.meta.url).resolve(${JSON.stringify(module)}), 'latin1')`,
    `    return await decodeBase64AsWasm(text.slice(text.indexOf('"') + 1, text.lastIndexOf('"')))`,
    '',
  ].join('\n')
  const source = readFileSync(file, 'utf8')
  if (!source.includes(imported)) {
    throw new Error(`${file}: the query compiler's Wasm is no longer imported as scripts/generate-clients.mjs expects`)
  }
  writeFileSync(file, source.replace(imported, read))
}
