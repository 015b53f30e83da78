// npm run bench -- startup: from spawning the service to its first `/readyz` 200 (issue 56, goal 7:
// at most 1 s on a warm build), on SQLite and on PostgreSQL. Each command is started
// STARTUP_RUNS (7) times after one warm-up that is not counted, the commands in turn (A B A B ...)
// so that a drift of the shared machine's speed touches each alike; `/readyz` is asked every 5 ms.
// Prints the wall time to ready (min / median / max), the CPU the command's processes had spent by
// then (utime + stime of its process group, children reaped included), and the load average.
//
// Commands: `npm start` (the build check included) and `node dist/server.js` with `start`'s flags
// and environment. STARTUP_VS=<another checkout, built>: its `node dist/server.js` too, to compare
// with. STARTUP_NODE=<path to another node>: the same commands again under that node (its
// directory first on PATH for npm), on PostgreSQL only (better-sqlite3's native module is built
// for the Node that installed it). STARTUP_TARGETS (sqlite,postgresql) picks the databases;
// PostgreSQL uses a fresh schema on BENCH_DATABASE_URL, dropped after. The databases are migrated
// before the first start, as a restart finds them; the warm-up also leaves dist/ up to date.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import os from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { applyMigrations } from '../src/db/migrate.js'
import { median, postgresSchema } from './harness.js'
import { freePort, serviceCommand } from './peers/processes.js'

const RUNS = Number(process.env.STARTUP_RUNS ?? 7)
const TARGETS = (process.env.STARTUP_TARGETS ?? 'sqlite,postgresql').split(',')
const OTHER_NODE = process.env.STARTUP_NODE
const root = fileURLToPath(new URL('..', import.meta.url))
const CLOCK_TICKS = 100
const loadText = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')

interface Command {
  name: string
  /** Only on PostgreSQL: better-sqlite3's native module is built for the Node that installed it. */
  postgresOnly?: boolean
  spawn(port: number, url: string): ChildProcess
}

const start = serviceCommand(root)
function direct(node: string, label: string, cwd = root): Command {
  return {
    name: `node dist/server.js${label}`,
    spawn: (port, url) =>
      spawn(node, start.args, {
        cwd,
        env: { ...process.env, ...start.env, DATABASE_URL: url, PORT: String(port), WORKER_ENABLED: 'false' },
        stdio: 'ignore',
        detached: true,
      }),
  }
}
function npmStart(node: string, label: string): Command {
  return {
    name: `npm start${label}`,
    spawn: (port, url) =>
      spawn('npm', ['start', '--silent'], {
        cwd: root,
        env: {
          ...process.env,
          PATH: `${dirname(node)}:${process.env.PATH}`,
          DATABASE_URL: url,
          PORT: String(port),
          WORKER_ENABLED: 'false',
        },
        stdio: 'ignore',
        detached: true,
      }),
  }
}
const commands: Command[] = [npmStart(process.execPath, ''), direct(process.execPath, '')]
if (process.env.STARTUP_VS) commands.push(direct(process.execPath, ` (${process.env.STARTUP_VS})`, process.env.STARTUP_VS))
if (OTHER_NODE) {
  const version = execFileSync(OTHER_NODE, ['-v']).toString().trim()
  const others = [npmStart(OTHER_NODE, ` (node ${version})`), direct(OTHER_NODE, ` (node ${version})`)]
  if (process.env.STARTUP_VS) others.push(direct(OTHER_NODE, ` (node ${version}, ${process.env.STARTUP_VS})`, process.env.STARTUP_VS))
  commands.push(...others.map((command) => ({ ...command, postgresOnly: true })))
}

/** utime + stime, and those of reaped children, of every process in the group, in ms. */
function groupCpuMs(pgid: number): number {
  let ticks = 0
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue
    }
    // Fields after the command name: state is the 3rd field, pgrp the 5th, utime the 14th ... cstime the 17th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(fields[2]) !== pgid) continue
    ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])
  }
  return (ticks * 1000) / CLOCK_TICKS
}

function readyzStatus(port: number): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/readyz', agent: false }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on('error', () => resolve(0))
    req.end()
  })
}

/** One start: ms from spawn to the first /readyz 200, and the group's CPU by then. */
async function once(command: Command, url: string): Promise<{ wallMs: number; cpuMs: number }> {
  const port = await freePort()
  const started = performance.now()
  const child = command.spawn(port, url)
  let exited: number | null = null
  child.once('exit', (code) => (exited = code ?? -1))
  try {
    for (;;) {
      if (exited !== null) throw new Error(`${command.name} exited with ${exited} before /readyz answered 200`)
      if (performance.now() - started > 60_000) throw new Error(`${command.name}: no /readyz 200 within 60 s`)
      if ((await readyzStatus(port)) === 200) break
      await new Promise((r) => setTimeout(r, 5))
    }
    const wallMs = performance.now() - started
    return { wallMs, cpuMs: groupCpuMs(child.pid!) }
  } finally {
    if (exited === null) {
      const done = new Promise((resolve) => child.once('exit', resolve))
      process.kill(-child.pid!, 'SIGTERM')
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000)
      await done
      clearTimeout(timer)
    }
  }
}

const spread = (xs: number[]) => `${Math.round(Math.min(...xs))} / ${Math.round(median(xs))} / ${Math.round(Math.max(...xs))}`

console.log(`startup: ${RUNS} starts a command after one warm-up, ${os.cpus().length} CPUs; node ${process.version}`)
for (const target of TARGETS) {
  const dir = mkdtempSync(join(os.tmpdir(), 'gateway-startup-'))
  const schema = target === 'postgresql' ? await postgresSchema() : null
  if (target === 'postgresql' && !schema) continue
  const url = schema ? schema.url : `file:${join(dir, 'startup.db')}`
  try {
    await applyMigrations(url)
    const measured = commands.filter((command) => target === 'postgresql' || !command.postgresOnly)
    const results = new Map(measured.map((c) => [c.name, { wall: [] as number[], cpu: [] as number[] }]))
    const loadBefore = loadText()
    for (const command of measured) await once(command, url)
    for (let run = 0; run < RUNS; run++)
      for (const command of measured) {
        const { wallMs, cpuMs } = await once(command, url)
        results.get(command.name)!.wall.push(wallMs)
        results.get(command.name)!.cpu.push(cpuMs)
      }
    console.log(`\n${target === 'sqlite' ? 'SQLite' : 'PostgreSQL'} (load before ${loadBefore}, after ${loadText()})`)
    console.log('| command | spawn to /readyz 200, ms (min / median / max) | CPU by then, ms (min / median / max) |')
    console.log('|---|---:|---:|')
    for (const [name, { wall, cpu }] of results) console.log(`| ${name} | ${spread(wall)} | ${spread(cpu)} |`)
  } finally {
    await schema?.drop()
    rmSync(dir, { recursive: true, force: true })
  }
}
