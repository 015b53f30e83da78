// The real server (src/process/server.ts) as a child process, for the tests that need a process of its
// own: signals, ports, cluster workers, logging. Its stdout (JSON lines) and stderr are kept.
import { execFile, spawn } from 'node:child_process'
import { promisify } from 'node:util'
import { createServer } from 'node:net'

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export interface SpawnOptions {
  /** The command line; `node --import tsx src/process/server.ts` (the server from source) by default. */
  command?: [string, ...string[]]
  /** Its own process group, so a test can tell whether anything of the tree is left. */
  detached?: boolean
  /** Where stdout goes: kept in memory ('pipe', the default), dropped, or a file descriptor. */
  stdout?: 'pipe' | 'ignore' | number
}

/** Starts the server with `env` over the test process's environment (PORT 0, LOG_LEVEL info, no rate limit unless given). */
export function spawnServer(
  env: Record<string, string | undefined>,
  { command = [process.execPath, '--import', 'tsx', 'src/process/server.ts'], detached = false, stdout = 'pipe' }: SpawnOptions = {},
) {
  const child = spawn(command[0], command.slice(1), {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', RATE_LIMIT_PER_SECOND: '0', ...env },
    stdio: ['ignore', stdout, 'pipe'],
    detached,
  })
  let out = ''
  let err = ''
  child.stdout?.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (err += d))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  /** The JSON log lines written so far. */
  const lines = () =>
    out
      .slice(0, out.lastIndexOf('\n') + 1)
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
  /** Waits for the "listening" log line and gives the server's URL; fails with the output if the process ends first. */
  async function listening(ms = 90_000): Promise<string> {
    const deadline = Date.now() + ms
    for (;;) {
      const line = lines().find((l) => l.msg === 'listening')
      if (line) return line.url as string
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`the server did not start (exit ${child.exitCode}):\n${out}${err}`)
      await sleep(50)
    }
  }
  return { child, exited, lines, listening, output: () => out, errors: () => err }
}

/** Polls `probe` every 50 ms until it gives a value, or fails after `ms`. */
export async function waitFor<T>(what: string, probe: () => T | undefined | false, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

/** True when nothing listens on 127.0.0.1:`port` any more. */
export async function portIsFree(port: number) {
  const probe = createServer()
  return new Promise<boolean>((resolve) => {
    probe.once('error', () => resolve(false))
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)))
  })
}

/** `npm run cli -- <args>` with `env`: the last line it printed (the JSON answer, or console:link's URL). */
export async function runCli(env: Record<string, string | undefined>, ...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'cli', '--', ...args], { env })
  return stdout.trim().split('\n').pop()!
}
