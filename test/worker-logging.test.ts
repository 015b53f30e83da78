import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { sleep, spawnServer } from './kit/server-process.js'

describe('worker logging (src/process/server.ts)', () => {
  it('writes node-cron’s missed-execution warning as JSON, like every other line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-cron-log-'))
    const { child, exited, output, errors } = spawnServer({ DATABASE_URL: `file:${join(dir, 'gateway.db')}`, WORKER_ENABLED: 'true' })
    try {
      const deadline = Date.now() + 30_000
      while (!output().includes('"msg":"listening"') && Date.now() < deadline) await sleep(100)
      expect(output()).toContain('"msg":"listening"')
      await sleep(1500) // a few ticks of the every-second schedule
      // Freeze the whole process for several seconds: the cron timer fires late, as it would after
      // a blocked event loop, and node-cron reports the executions it missed.
      child.kill('SIGSTOP')
      await sleep(4000)
      child.kill('SIGCONT')
      const warned = Date.now() + 15_000
      while (!/missed execution/.test(output() + errors()) && Date.now() < warned) await sleep(100)
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
    } finally {
      child.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    }
    const lines = (output() + errors()).split('\n').filter((l) => l.trim())
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
