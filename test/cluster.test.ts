// WEB_CONCURRENCY=2: the real server (src/process/server.ts) as a node:cluster of two HTTP workers.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { request } from 'node:http'
import { createServer, type AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { startReceiver } from './kit/receiver.js'
import { portIsFree, sleep, spawnServer, waitFor } from './kit/server-process.js'
import { createAccount } from '../src/accounts/create-account.js'
import { setWebhook } from '../src/webhooks/endpoints.js'
import { parseEnv } from '../src/core/env.js'
import { sentMessageRow } from './kit/seed.js'

/** The real server as a node:cluster of two HTTP workers. */
const startCluster = (env: Record<string, string>) => spawnServer({ WEB_CONCURRENCY: '2', ...env })

/** A GET on a new connection each time, so the primary hands it to the next worker. */
function get(port: number, path: string) {
  return new Promise<{ status: number; worker: string | undefined; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode!, worker: res.headers['x-worker'] as string | undefined, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

describe.each(targets)('WEB_CONCURRENCY=2 on $name', (target) => {
  const kit = useKit(target, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } })

  it('answers from two workers, runs the cron loop in exactly one (again after it is killed), and exits 0 on SIGTERM with the port freed', async () => {
    const receiver = await startReceiver()
    const server = startCluster({ DATABASE_URL: kit.url, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WORKER_ENABLED: 'true' })
    try {
      const ready = await waitFor('cluster listening', () => server.lines().find((l) => l.msg === 'cluster listening'))
      const port = Number(new URL(ready.url as string).port)
      expect(ready.workers).toBe(2)

      // Two different worker processes answer; /healthz keeps its body.
      const workers = new Set<string>()
      for (let i = 0; i < 40 && workers.size < 2; i++) {
        const answer = await get(port, '/healthz')
        expect(answer.status).toBe(200)
        expect(JSON.parse(answer.body)).toEqual({ status: 'ok' })
        workers.add(answer.worker!)
      }
      expect([...workers].sort()).toEqual(['1', '2'])
      const listening = server.lines().filter((l) => l.msg === 'listening')
      expect(listening.map((l) => l.worker).sort()).toEqual(['1', '2'])

      // Webhook deliveries: the one dispatcher sends each update once.
      const { account } = await createAccount(kit.deps, { name: 'Hooks' })
      const endpoint = await setWebhook(kit.deps, account.id, receiver.url)
      const message = await kit.db.message.create({ data: sentMessageRow(account.id) })
      const deliver = async (from: number, n: number) => {
        const now = new Date()
        await kit.db.webhookDelivery.createMany({
          data: Array.from({ length: n }, (_, i) => ({
            id: `msg_${String(from + i).padStart(32, '0')}`,
            accountId: account.id,
            endpointId: endpoint.id,
            messageId: message.id,
            body: JSON.stringify({ reference: message.id, update: from + i }),
            nextAttemptAt: now,
            createdAt: now,
          })),
        })
        await waitFor('deliveries', () => new Set(receiver.received.map((r) => r.headers['webhook-id'])).size >= from + n, 60_000)
      }
      await deliver(0, 30)
      const owners = () => server.lines().filter((l) => l.msg === 'worker loop started')
      expect(owners()).toHaveLength(1)

      // The loop's worker dies: another worker is started and takes the loop over; still only one.
      const first = owners()[0]!
      process.kill(first.pid as number, 'SIGKILL')
      await waitFor('a replacement worker', () => server.lines().find((l) => l.msg === 'worker died; starting another'))
      await waitFor('the loop in the replacement', () => owners().length === 2)
      expect(owners()[1]!.pid).not.toBe(first.pid)
      expect(owners()[1]!.worker).toBe('3')
      await deliver(30, 10)
      await sleep(1500)
      const ids = receiver.received.map((r) => r.headers['webhook-id'])
      expect(ids).toHaveLength(40)
      expect(new Set(ids).size).toBe(40)

      // Both live workers still answer, the replacement among them.
      const after = new Set<string>()
      for (let i = 0; i < 40 && after.size < 2; i++) after.add((await get(port, '/healthz')).worker!)
      expect([...after].sort()).toEqual(['2', '3'])

      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(0)
      expect(await portIsFree(port)).toBe(true)
      const stopped = server.lines().filter((l) => l.msg === 'stopped')
      expect(stopped.map((l) => l.worker ?? 'primary').sort()).toEqual(['2', '3', 'primary'])
      expect(stopped.map((l) => l.code)).toEqual(stopped.map(() => 0))
      expect(server.errors()).toBe('')
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL')
      await receiver.close()
    }
  }, 240_000)
})

describe('WEB_CONCURRENCY start-up', () => {
  it('is an integer from 1 to 64, 1 by default', () => {
    expect(parseEnv({}).WEB_CONCURRENCY).toBe(1)
    expect(parseEnv({ WEB_CONCURRENCY: '64' }).WEB_CONCURRENCY).toBe(64)
    for (const bad of ['0', '65', '1.5', 'two']) expect(() => parseEnv({ WEB_CONCURRENCY: bad }), bad).toThrow(/WEB_CONCURRENCY/)
  })

  it('a port in use: one line naming it and exit 1, no worker restarted', async () => {
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const port = (blocker.address() as AddressInfo).port
    const dir = mkdtempSync(`${tmpdir()}/cluster-`)
    try {
      const server = startCluster({ DATABASE_URL: `file:${dir}/c.db`, PORT: String(port) })
      expect(await server.exited).toBe(1)
      const errorLines = server.errors().trim().split('\n')
      expect(errorLines).toHaveLength(1)
      expect(errorLines[0]).toContain(String(port))
      expect(server.lines().filter((l) => l.msg === 'worker died; starting another')).toHaveLength(0)
    } finally {
      blocker.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
