import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

function start(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, exited, output: () => out, errors: () => err }
}

describe('npm start (src/server.ts)', () => {
  it('creates and migrates the SQLite database, serves, and shuts down on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-start-'))
    const server = start({ DATABASE_URL: `file:${join(dir, 'nested', 'gateway.db')}`, PORT: '0', LOG_LEVEL: 'info' })
    try {
      const deadline = Date.now() + 30_000
      while (!server.output().includes('"msg":"listening"') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
      const line = server.output().split('\n').find((l) => l.includes('"msg":"listening"'))!
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
      server.child.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it('stops with a message naming every bad setting', async () => {
    const server = start({ PORT: 'x', DEFAULT_COUNTRY: 'kenya' })
    expect(await server.exited).toBe(1)
    expect(server.errors()).toMatch(/Invalid configuration:\n {2}PORT: .*\n {2}DEFAULT_COUNTRY: /)
  }, 30_000)
})
