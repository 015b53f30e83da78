// The real server (src/server.ts) as a child process, for the tests that need a process of its
// own: signals, ports, cluster workers, logging. Its stdout (JSON lines) and stderr are kept.
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Starts the server with `env` over the test process's environment (PORT 0, LOG_LEVEL info, no rate limit unless given). */
export function spawnServer(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', RATE_LIMIT_PER_SECOND: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  /** The JSON log lines written so far. */
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
  return { child, exited, lines, output: () => out, errors: () => err }
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
