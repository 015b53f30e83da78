// npm run cli -- <command> [--flag value]. Prints one JSON line on success; one line and a
// non-zero exit on failure.
import { parseArgs } from 'node:util'
import { loadEnvOrExit } from '../env.js'
import { applyMigrations } from '../db/migrate.js'
import { openDatabase } from '../db/client.js'
import { createLogger } from '../logger.js'
import { createDeps } from '../deps.js'
import { AppError } from '../errors.js'
import { commands } from './commands.js'

const [name, ...rest] = process.argv.slice(2)
// Own properties only: `constructor` or `__proto__` is not a command.
const command = name && Object.hasOwn(commands, name) ? commands[name] : undefined
if (!command) {
  console.error(`usage: npm run cli -- <${Object.keys(commands).join('|')}> [options]`)
  process.exit(2)
}

let values: Record<string, string | undefined>
let positionals: string[]
try {
  ;({ values, positionals } = parseArgs({
    args: rest,
    options: Object.fromEntries(command.options.map((o) => [o, { type: 'string' as const }])),
    allowPositionals: command.positionals ?? false,
    strict: true,
  }) as { values: Record<string, string | undefined>; positionals: string[] })
} catch (error) {
  console.error(`${name}: ${(error as Error).message}`)
  process.exit(2)
}

const env = loadEnvOrExit()
const logger = createLogger('silent')
await applyMigrations(env.DATABASE_URL)
const database = await openDatabase(env.DATABASE_URL)
const deps = createDeps(database, env, { logger })
try {
  const output = await command.run(deps, values, positionals)
  console.log(JSON.stringify(output))
  await database.close()
} catch (error) {
  await database.close()
  const message = error instanceof AppError ? error.details?.map((d) => `${d.field}: ${d.message}`).join('; ') || error.message : (error as Error).message
  console.error(`${name}: ${message}`)
  process.exit(1)
}
