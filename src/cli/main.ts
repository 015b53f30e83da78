// npm run cli -- <command> [--flag value]. Prints one JSON line on success; one line and a
// non-zero exit on failure. `--help` (or `help`) lists the commands; `<command> --help` explains one.
import { parseArgs } from 'node:util'
import { loadEnvOrExit } from '../core/env.js'
import { applyMigrations } from '../db/migrate.js'
import { openDatabase } from '../db/client.js'
import { createLogger } from '../core/logger.js'
import { createDeps } from '../deps.js'
import { AppError } from '../core/errors.js'
import { commands, type Command } from './commands.js'

const HELP_FLAGS = new Set(['--help', '-h', 'help'])

function overview(): string {
  const width = Math.max(...Object.keys(commands).map((n) => n.length))
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`)
  return [
    'usage: npm run cli -- <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Each prints one JSON line on success, or one line on stderr and a non-zero exit.',
    'The database is DATABASE_URL (default file:./data/gateway.db), migrated first.',
    'Run `npm run cli -- <command> --help` for its options.',
  ].join('\n')
}

function commandHelp(name: string, c: Command): string {
  const width = Math.max(0, ...Object.keys(c.options).map((o) => o.length + 2))
  const options = Object.entries(c.options).map(([o, meaning]) => `  --${o.padEnd(width - 2)}  ${meaning}`)
  return [
    `usage: npm run cli -- ${c.usage}`,
    '',
    c.summary + '.',
    ...(options.length ? ['', 'Options:', ...options] : []),
    ...(c.notes ? ['', c.notes] : []),
  ].join('\n')
}

const [name, ...rest] = process.argv.slice(2)
if (!name || HELP_FLAGS.has(name)) {
  const topic = name === 'help' ? rest[0] : undefined
  if (topic && Object.hasOwn(commands, topic)) console.log(commandHelp(topic, commands[topic]!))
  else if (topic) {
    console.error(`unknown command "${topic}"; run \`npm run cli -- --help\` for the list`)
    process.exit(2)
  } else if (name) console.log(overview())
  else console.error(overview())
  process.exit(name ? 0 : 2)
}
// Own properties only: `constructor` or `__proto__` is not a command.
const command = Object.hasOwn(commands, name) ? commands[name] : undefined
if (!command) {
  console.error(`unknown command "${name}"; run \`npm run cli -- --help\` for the list`)
  process.exit(2)
}
if (rest.some((a) => a === '--help' || a === '-h')) {
  console.log(commandHelp(name, command))
  process.exit(0)
}

/**
 * The command's flags: each option of `command.options` takes one value (`--name value` or
 * `--name=value`). Others add options to their commands there; an unknown flag, a flag given twice, a flag without its value and a stray
 * argument each stop the command with one line naming it (exit 2): a typo must not pass unnoticed.
 */
function parseFlags(command: Command, args: string[]): { values: Record<string, string | undefined>; positionals: string[] } {
  const known = Object.keys(command.options)
  const takes = known.length ? `it takes ${known.map((o) => `--${o}`).join(', ')}` : 'it takes no options'
  let parsed: ReturnType<
    typeof parseArgs<{ options: Record<string, { type: 'string' }>; tokens: true; allowPositionals: true; strict: false }>
  >
  try {
    parsed = parseArgs({
      args,
      options: Object.fromEntries(known.map((o) => [o, { type: 'string' as const }])),
      allowPositionals: true,
      strict: false,
      tokens: true,
    })
  } catch (error) {
    throw new Error((error as Error).message.split('\n')[0], { cause: error })
  }
  const seen = new Set<string>()
  for (const token of parsed.tokens) {
    if (token.kind === 'option') {
      if (!Object.hasOwn(command.options, token.name)) throw new Error(`unknown option ${token.rawName}; ${takes}`)
      if (seen.has(token.name)) throw new Error(`${token.rawName} is given more than once`)
      // `--account --label x`: --account took "--label" as its value; `--account=--x` is meant.
      if (token.value === undefined || (!token.inlineValue && token.value.startsWith('-')))
        throw new Error(`${token.rawName} needs a value (write ${token.rawName}=<value> for one that starts with -)`)
      seen.add(token.name)
    } else if (token.kind === 'positional' && !command.positionals) {
      throw new Error(`unexpected argument ${JSON.stringify(token.value)}; ${takes}`)
    }
  }
  return { values: parsed.values as Record<string, string | undefined>, positionals: parsed.positionals }
}

let values: Record<string, string | undefined>
let positionals: string[]
try {
  ;({ values, positionals } = parseFlags(command, rest))
} catch (error) {
  console.error(`${name}: ${(error as Error).message}; run \`npm run cli -- ${name} --help\``)
  process.exit(2)
}

const env = loadEnvOrExit()
const logger = createLogger('silent')
await applyMigrations(env.DATABASE_URL)
const database = await openDatabase(env.DATABASE_URL, { sqliteCacheMib: env.SQLITE_CACHE_MIB })
const deps = createDeps(database, env, { logger })
try {
  const output = await command.run(deps, values, positionals, { notice: (line) => console.error(line) })
  // A command that answers with a bare string (console:link's URL) prints it as it is, to paste or open.
  console.log(typeof output === 'string' ? output : JSON.stringify(output))
  await database.close()
} catch (error) {
  await database.close()
  const message =
    error instanceof AppError ? error.details?.map((d) => `${d.field}: ${d.message}`).join('; ') || error.message : (error as Error).message
  console.error(`${name}: ${message}`)
  process.exit(1)
}
