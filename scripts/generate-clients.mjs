// Generates the Prisma client of each database target (and the Pothos types, with the SQLite one).
// Runs on `npm install`; offline, through the Wasm engine.
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const prisma = fileURLToPath(new URL('../node_modules/prisma/build/index.js', import.meta.url))
for (const [, url] of [
  ['sqlite', 'file:./data/gateway.db'],
  ['postgresql', 'postgresql://localhost/unused'],
]) {
  execFileSync(process.execPath, [prisma, 'generate', '--no-hints'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, DATABASE_URL: url, PRISMA_HIDE_UPDATE_MESSAGE: '1' },
  })
}
