import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('worker logging (src/server.ts)', () => {
  it('writes node-cron’s missed-execution warning as JSON, like every other line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-cron-log-'))
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { ...process.env, DATABASE_URL: `file:${join(dir, 'gateway.db')}`, PORT: '0', LOG_LEVEL: 'info', WORKER_ENABLED: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    try {
      const deadline = Date.now() + 30_000
      while (!out.includes('"msg":"listening"') && Date.now() < deadline) await sleep(100)
      expect(out).toContain('"msg":"listening"')
      await sleep(1500) // a few ticks of the every-second schedule
      // Freeze the whole process for several seconds: the cron timer fires late, as it would after
      // a blocked event loop, and node-cron reports the executions it missed.
      child.kill('SIGSTOP')
      await sleep(4000)
      child.kill('SIGCONT')
      const warned = Date.now() + 15_000
      while (!/missed execution/.test(out + err) && Date.now() < warned) await sleep(100)
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
    } finally {
      child.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    }
    const lines = (out + err).split('\n').filter((l) => l.trim())
    const notJson = lines.filter((l) => {
      try {
        return typeof JSON.parse(l) !== 'object'
      } catch {
        return true
      }
    })
    expect(notJson).toEqual([])
    const missed = lines.map((l) => JSON.parse(l)).filter((l) => /missed execution/.test(l.msg))
    expect(missed.length).toBeGreaterThan(0)
    expect(missed[0]).toMatchObject({ level: 40, component: 'node-cron' })
  }, 60_000)
})
