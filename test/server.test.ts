import type { ChildProcess } from 'node:child_process'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, existsSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { spawnServer } from './kit/server-process.js'

/** The server in its own process group, so a test can tell whether anything of the tree is left. */
const start = (env: Record<string, string>, command?: [string, ...string[]]) => spawnServer(env, { command, detached: true })

describe('npm start (src/process/server.ts)', () => {
  it('creates and migrates the SQLite database, serves, and shuts down on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-start-'))
    const server = start({ DATABASE_URL: `file:${join(dir, 'nested', 'gateway.db')}`, PORT: '0', LOG_LEVEL: 'info' })
    try {
      const deadline = Date.now() + 30_000
      while (!server.output().includes('"msg":"listening"') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
      const line = server
        .output()
        .split('\n')
        .find((l) => l.includes('"msg":"listening"'))!
      const { url } = JSON.parse(line)
      expect(existsSync(join(dir, 'nested', 'gateway.db'))).toBe(true)
      expect(await (await fetch(`${url}/readyz`)).json()).toEqual({ status: 'ready' })
      const graphiql = await fetch(`${url}/graphql`, { headers: { accept: 'text/html' } })
      expect(graphiql.headers.get('content-type')).toContain('text/html')
      expect(await graphiql.text()).toContain('GraphiQL')
      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(0)
      expect(server.output()).toContain('"msg":"shutting down"')
    } finally {
      if (groupAlive(server.child)) process.kill(-server.child.pid!, 'SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it('stops with a message naming every bad setting', async () => {
    const server = start({ PORT: 'x', DEFAULT_COUNTRY: 'kenya' })
    expect(await server.exited).toBe(1)
    // One plain line, naming every problem.
    expect(server.errors().trim().split('\n')).toEqual([
      expect.stringMatching(/^Invalid configuration: PORT: must be a number, not "x"; DEFAULT_COUNTRY: .+$/),
    ])
  }, 30_000)
})

async function listeningUrl(server: ReturnType<typeof start>): Promise<string> {
  const deadline = Date.now() + 60_000
  while (!server.output().includes('"msg":"listening"') && Date.now() < deadline) {
    if (server.child.exitCode !== null) throw new Error(`exited early:\n${server.output()}\n${server.errors()}`)
    await new Promise((r) => setTimeout(r, 100))
  }
  const line = server
    .output()
    .split('\n')
    .find((l) => l.includes('"msg":"listening"'))
  if (!line) throw new Error(`not listening:\n${server.output()}\n${server.errors()}`)
  return JSON.parse(line).url
}

/** True while any process of the group led by `child` is alive. */
function groupAlive(child: ChildProcess): boolean {
  try {
    process.kill(-child.pid!, 0)
    return true
  } catch {
    return false
  }
}

async function portFree(port: number): Promise<boolean> {
  const probe = createServer()
  return new Promise((resolve) => {
    probe.once('error', () => resolve(false))
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)))
  })
}

describe('process supervision', () => {
  it('npm start hands SIGTERM to the server: the port is freed and the whole process tree exits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-npm-start-'))
    const server = start({ DATABASE_URL: `file:${join(dir, 'gateway.db')}`, PORT: '0', LOG_LEVEL: 'info' }, ['npm', 'start'])
    try {
      const url = await listeningUrl(server)
      const port = Number(new URL(url).port)
      expect((await fetch(`${url}/readyz`)).status).toBe(200)
      expect(await portFree(port)).toBe(false)
      // The signal goes to npm itself, as a container runtime or systemd would send it.
      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(0)
      expect(server.output()).toContain('"msg":"shutting down"')
      const deadline = Date.now() + 10_000
      while (groupAlive(server.child) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
      expect(groupAlive(server.child)).toBe(false)
      expect(await portFree(port)).toBe(true)
    } finally {
      if (groupAlive(server.child)) process.kill(-server.child.pid!, 'SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    }
  }, 90_000)

  it('npm start --silent writes only JSON lines, the build step included, on stdout and stderr', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-npm-start-json-'))
    const server = start({ DATABASE_URL: `file:${join(dir, 'gateway.db')}`, PORT: '0', LOG_LEVEL: 'info' }, ['npm', 'start', '--silent'])
    try {
      await listeningUrl(server)
      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(0)
      const lines = (server.output() + server.errors()).split('\n').filter((line) => line !== '')
      expect(lines.filter((line) => !isJsonObject(line))).toEqual([])
      expect(lines.map((line) => JSON.parse(line).msg)).toEqual(expect.arrayContaining(['dist/ up to date', 'listening', 'stopped']))
    } finally {
      if (groupAlive(server.child)) process.kill(-server.child.pid!, 'SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    }
  }, 90_000)

  it("npm start's build step starts no compiler when no input changed, and compiles again when one did", () => {
    const quickBuild = () => JSON.parse(execFileSync(process.execPath, ['scripts/build.mjs', '--quick'], { encoding: 'utf8' }).trim())
    quickBuild()
    // Nothing changed since: the recorded fingerprint matches, no module is compiled.
    const unchanged = quickBuild()
    expect(unchanged).toMatchObject({ msg: 'dist/ up to date', written: 0 })
    expect(unchanged.inputs).toBeGreaterThan(300)
    expect(unchanged.modules).toBeUndefined()
    // A source touched (same content, a new time): esbuild runs over every module again; only the
    // fingerprint is written, since no compiled file differs.
    const source = join('src', 'env.ts')
    const { atime, mtime } = statSync(source)
    utimesSync(source, atime, new Date(mtime.getTime() + 1000))
    try {
      const rebuilt = quickBuild()
      expect(rebuilt.modules).toBeGreaterThan(300)
      expect(rebuilt.written).toBe(1)
    } finally {
      utimesSync(source, atime, mtime)
      quickBuild()
    }
  }, 90_000)

  it("npm start stops with the build's error, and serves nothing, when dist/ cannot be built", async () => {
    // The server's first module: a syntax error there fails the bundle.
    const source = join('src', 'process', 'heap-settings.ts')
    const original = readFileSync(source, 'utf8')
    const { atime, mtime } = statSync(source)
    const dir = mkdtempSync(join(tmpdir(), 'gateway-npm-start-broken-'))
    let server: ReturnType<typeof start> | undefined
    try {
      writeFileSync(source, `${original}\nexport const = 1\n`)
      server = start({ DATABASE_URL: `file:${join(dir, 'gateway.db')}`, PORT: '0', LOG_LEVEL: 'info' }, ['npm', 'start', '--silent'])
      const code = await Promise.race([server.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 60_000))])
      expect(code).toBe(1)
      expect(server.errors()).toContain(source)
      // The build's own report only, not a stack of the start script's on top of it.
      expect(server.errors()).not.toContain('start.mjs')
      expect(server.output()).not.toContain('"msg":"listening"')
      expect(existsSync(join(dir, 'gateway.db'))).toBe(false)
    } finally {
      if (server && groupAlive(server.child)) process.kill(-server.child.pid!, 'SIGKILL')
      writeFileSync(source, original)
      utimesSync(source, atime, mtime)
      execFileSync(process.execPath, ['scripts/build.mjs', '--quick'])
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  it("npm start's build step keeps the previous build's chunks for a running instance, and removes older files", () => {
    const quickBuild = () => JSON.parse(execFileSync(process.execPath, ['scripts/build.mjs', '--quick'], { encoding: 'utf8' }).trim())
    quickBuild()
    const outputs = join('dist', '.outputs')
    const current = readFileSync(outputs, 'utf8').split('\n')
    expect(current).toContain(join('src', 'bundle', 'server.js'))
    // A chunk of the previous build (listed in dist/.outputs), a chunk older than that, and a
    // per-module file from before the bundle.
    const previousChunk = join('dist', 'src', 'bundle', 'chunk-PREVIOUS.js')
    const olderChunk = join('dist', 'src', 'bundle', 'chunk-OLDER.js')
    const perModule = join('dist', 'src', 'web', 'web-routes.js')
    mkdirSync(dirname(perModule), { recursive: true })
    for (const file of [previousChunk, olderChunk, perModule]) writeFileSync(file, 'export {}\n')
    writeFileSync(outputs, [...current, join('src', 'bundle', 'chunk-PREVIOUS.js')].join('\n'))
    const source = join('src', 'env.ts')
    const { atime, mtime } = statSync(source)
    try {
      utimesSync(source, atime, new Date(mtime.getTime() + 1000))
      quickBuild()
      expect(existsSync(previousChunk)).toBe(true)
      expect(existsSync(olderChunk)).toBe(false)
      expect(existsSync(perModule)).toBe(false)
      // Emptied directories go with their files.
      expect(existsSync(join('dist', 'src', 'web'))).toBe(false)
      // One build later it is older than the previous build's: it goes too.
      utimesSync(source, atime, new Date(mtime.getTime() + 2000))
      quickBuild()
      expect(existsSync(previousChunk)).toBe(false)
      expect(readFileSync(outputs, 'utf8').split('\n')).toEqual(current)
    } finally {
      for (const file of [previousChunk, olderChunk, perModule]) rmSync(file, { force: true })
      utimesSync(source, atime, mtime)
      quickBuild()
    }
  }, 90_000)

  it('npm run build compiles to dist/, and node dist/server.js migrates, answers /readyz and stops on SIGTERM', async () => {
    const build = start({}, ['npm', 'run', 'build'])
    expect(await build.exited, build.errors()).toBe(0)
    expect(existsSync(join('dist', 'prisma', 'sqlite', 'migrations'))).toBe(true)
    const dir = mkdtempSync(join(tmpdir(), 'gateway-dist-'))
    const server = start({ DATABASE_URL: `file:${join(dir, 'gateway.db')}`, PORT: '0', LOG_LEVEL: 'info' }, [
      process.execPath,
      'dist/server.js',
    ])
    try {
      const url = await listeningUrl(server)
      // Ready means every checked-in migration is applied: dist/ found them.
      expect(await (await fetch(`${url}/readyz`)).json()).toEqual({ status: 'ready' })
      expect(server.output()).toContain('"msg":"migrations applied"')
      expect((await fetch(`${url}/metrics`)).status).toBe(200)
      // The compiled CLI, as the Docker image runs it (no tsx, no src/): node dist/cli.js.
      const cli = start({ DATABASE_URL: `file:${join(dir, 'gateway.db')}` }, [
        process.execPath,
        'dist/cli.js',
        'account:create',
        '--name',
        'From dist',
      ])
      expect(await cli.exited, cli.errors()).toBe(0)
      expect(JSON.parse(cli.output()).account.name).toBe('From dist')
      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(0)
    } finally {
      if (groupAlive(server.child)) process.kill(-server.child.pid!, 'SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)
})

function isJsonObject(line: string): boolean {
  try {
    const value: unknown = JSON.parse(line)
    return typeof value === 'object' && value !== null && !Array.isArray(value)
  } catch {
    return false
  }
}
