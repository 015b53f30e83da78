// The real server (src/process/server.ts) as a child process that the crash test kills with SIGKILL.
import type { ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { openSync } from 'node:fs'
import { spawnServer } from '../kit/server-process.js'

/** A port free right now on 127.0.0.1 (the server gets it fixed: with LOG_LEVEL=silent it prints nothing). */
export async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise((resolve) => probe.close(resolve))
  return port
}

export interface ServerProcess {
  url: string
  child: ChildProcess
  exited: Promise<number | null>
  stderr(): string
}

export async function startServer(env: Record<string, string>, port: number): Promise<ServerProcess> {
  // CRASH_SERVER_LOG=<file> keeps the servers' warnings and errors there (for a failing run).
  const logFile = process.env.CRASH_SERVER_LOG
  const { child, exited, errors } = spawnServer(
    { RATE_LIMIT_PER_SECOND: undefined, ...env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: logFile ? 'warn' : 'silent' },
    { stdout: logFile ? openSync(logFile, 'a') : 'ignore' },
  )
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 90_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${errors()}`)
    try {
      const res = await fetch(`${url}/readyz`)
      if (res.ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`server not ready after 90 s: ${errors()}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  return { url, child, exited, stderr: errors }
}

/** kill -9: no shutdown hook runs, nothing is flushed. */
export async function kill9(server: ServerProcess) {
  server.child.kill('SIGKILL')
  await server.exited
}

/** A clean stop (SIGTERM), for the end of a run. */
export async function stop(server: ServerProcess) {
  server.child.kill('SIGTERM')
  const code = await Promise.race([server.exited, new Promise((r) => setTimeout(() => r('timeout'), 15_000))])
  if (code === 'timeout') await kill9(server)
}
