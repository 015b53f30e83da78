// Child servers for the peers benchmark: each server runs in its own process so its CPU time and
// memory can be read from /proc/<pid>/stat and /proc/<pid>/status while autocannon runs here.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux x86-64 and arm64). */
const CLOCK_TICKS = 100

export interface Child {
  name: string
  pid: number
  baseUrl: string
  /** utime + stime in milliseconds. */
  cpuMs(): number
  /** VmHWM (peak resident set) and VmRSS, in MiB. */
  memory(): { peakMiB: number; rssMiB: number }
  /** Its last warnings and errors (pino lines of level 40 and up on stdout) when started with `keepWarnings`, and its stderr's tail. */
  warnings(): string
  stop(): Promise<void>
}

export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * Starts `node <args>` (this process's node unless the command names another) and waits until GET /healthz answers. Its stdout (the service's request log at
 * LOG_LEVEL=info) goes to /dev/null, as the now-playing benchmark does; stderr is kept for errors.
 * With `keepWarnings` stdout is read instead and its lines of level warn and up kept (the one-client
 * benchmarks, where reading the log costs the measured process nothing it would not write anyway):
 * a 503 then says whether the database's breaker opened or a statement timed out.
 */
export async function startChild(
  name: string,
  command: (port: number) => { args: string[]; env?: Record<string, string>; node?: string },
  cwd: string,
  { startTimeoutMs = 60_000, keepWarnings = false }: { startTimeoutMs?: number; keepWarnings?: boolean } = {},
): Promise<Child> {
  const port = await freePort()
  const { args, env, node = process.execPath } = command(port)
  const child: ChildProcess = spawn(node, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', keepWarnings ? 'pipe' : 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)))
  const warnings: string[] = []
  if (keepWarnings) {
    let partial = ''
    child.stdout!.on('data', (d: Buffer) => {
      const lines = (partial + d.toString()).split('\n')
      partial = lines.pop()!
      for (const line of lines)
        if (/^\{"level":(4|5|6)0,/.test(line)) {
          warnings.push(line)
          if (warnings.length > 20) warnings.shift()
        }
    })
  }
  let exited: number | null = null
  child.once('exit', (code) => (exited = code ?? -1))
  const baseUrl = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    if (exited !== null) throw new Error(`${name} exited with ${exited} before answering:\n${stderr}`)
    if (i * 100 > startTimeoutMs) throw new Error(`${name} did not answer within ${startTimeoutMs / 1000} s:\n${stderr}`)
    try {
      if ((await fetch(`${baseUrl}/healthz`)).status < 500) break
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  const pid = child.pid!
  return {
    name,
    pid,
    baseUrl,
    cpuMs() {
      // Fields after the command name (which may hold spaces): state is the 3rd field, utime the 14th, stime the 15th.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS
    },
    memory() {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8')
      const kib = (key: string) => Number(status.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN)
      return { peakMiB: kib('VmHWM') / 1024, rssMiB: kib('VmRSS') / 1024 }
    },
    warnings: () => [...warnings, ...(stderr.trim() ? [`stderr: ${stderr.trim()}`] : [])].join('\n'),
    async stop() {
      if (exited !== null) return
      const done = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await done
      clearTimeout(timer)
    },
  }
}

/**
 * The service's environment in a benchmark: as shipped (`start`'s variables, the request log at
 * info), except no rate limits (the load generator is one client) and no worker loop in the
 * measured process.
 */
export function benchServiceEnv(start: { env: Record<string, string> }, url: string, port: number): Record<string, string> {
  return {
    ...start.env,
    DATABASE_URL: url,
    PORT: String(port),
    LOG_LEVEL: 'info',
    RATE_LIMIT_PER_SECOND: '0',
    RATE_LIMIT_ANONYMOUS_PER_SECOND: '0',
    WORKER_ENABLED: 'false',
  }
}

/**
 * The service as `npm start` runs it, read from package.json's `start` script
 * (`[NAME=value ...] exec node <flags> scripts/start.mjs`, which checks dist/ and then runs
 * dist/server.js in the same process): the build check runs here (`scripts/build.mjs --quick`);
 * the child is node itself with the same flags and environment running dist/server.js (its own pid,
 * for /proc). A value `${NAME:-default}` is the variable from this environment, or the default.
 */
export function serviceCommand(root: string): { args: string[]; env: Record<string, string> } {
  const start: string = JSON.parse(readFileSync(`${root}package.json`, 'utf8')).scripts.start
  const match = /^((?:[A-Z_]+=\S+ )*)exec node ((?:\S+ )*)scripts\/start\.mjs$/.exec(start)
  if (!match) throw new Error(`package.json's start script is no longer "[NAME=value ...] exec node <flags> scripts/start.mjs": ${start}`)
  execFileSync(process.execPath, ['scripts/build.mjs', '--quick'], { cwd: root, stdio: 'inherit' })
  const env: Record<string, string> = {}
  for (const assignment of match[1]!.split(' ').filter(Boolean)) {
    const [name, value] = [assignment.slice(0, assignment.indexOf('=')), assignment.slice(assignment.indexOf('=') + 1)]
    const fallback = /^\$\{(\w+):-(.*)\}$/.exec(value)
    env[name] = fallback ? process.env[fallback[1]!] || fallback[2]! : value
  }
  return { args: [...match[2]!.split(' ').filter(Boolean), 'dist/server.js'], env }
}

/**
 * For the one-client benchmarks (contacts-deep-page, paths-growth): the service measures rather than
 * sheds load. Its database breaker (src/db/breaker.ts) opens when one `SELECT 1` probe goes
 * unanswered for DB_PROBE_TIMEOUT_MS (500 ms as shipped), and every request then answers 503 until a
 * probe answers again. On a busy shared machine a probe can wait that long with the database well:
 * its timer fires before its answer is read when the event loop or PostgreSQL's backend waits for a
 * core. A frozen database is what the breaker is for and these benchmarks have none, so the probe
 * may take 30 s here (DB_PROBE_TIMEOUT_MS from the environment wins). The statement timeout stays as
 * shipped: a statement that outlasts it is a finding, not noise.
 */
export function measuringEnv(): Record<string, string> {
  return { DB_PROBE_TIMEOUT_MS: process.env.DB_PROBE_TIMEOUT_MS ?? '30000' }
}

/** The service as a child process under tsx (src/process/server.ts) on `url`, configured to measure (measuringEnv). */
export function startMeasuredService(db: string, url: string, root: string) {
  return startChild(
    `service (${db})`,
    (port) => ({
      args: ['--import', 'tsx', 'src/process/server.ts'],
      env: { ...benchServiceEnv({ env: {} }, url, port), ...measuringEnv() },
    }),
    root,
    { keepWarnings: true },
  )
}
