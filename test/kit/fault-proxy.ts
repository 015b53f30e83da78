// A TCP proxy on loopback in front of PostgreSQL that tests switch between faults:
// `refuse` (the server is down), `blackhole` (the server is frozen, e.g. SIGSTOP) and `heal`.
import { createServer, connect, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'

export type FaultMode = 'pass' | 'refuse' | 'blackhole'

export interface FaultProxy {
  readonly port: number
  readonly mode: FaultMode
  /** `postgresql://...` of the target with host and port replaced by the proxy's. */
  url(target: string): string
  /** Resets every connection and stops listening (connects get ECONNREFUSED), like a stopped server. */
  refuse(): void
  /** Keeps and accepts sockets but forwards nothing either way, like a frozen server. */
  blackhole(): Promise<void>
  /** Forwards again; connections that were blackholed are closed (the pool must replace them). */
  heal(): Promise<void>
  close(): Promise<void>
}

export async function startFaultProxy(target = { host: '127.0.0.1', port: 5432 }): Promise<FaultProxy> {
  let mode: FaultMode = 'pass'
  const pairs = new Set<{ client: Socket; upstream: Socket | null; frozen: boolean }>()

  const server: Server = createServer((client) => {
    client.on('error', () => {})
    const pair = { client, upstream: null as Socket | null, frozen: mode === 'blackhole' }
    pairs.add(pair)
    client.on('close', () => {
      pairs.delete(pair)
      pair.upstream?.destroy()
    })
    if (pair.frozen) {
      // Accepted by the kernel, never answered: reads are drained and dropped.
      client.on('data', () => {})
      return
    }
    const upstream = connect(target.port, target.host)
    pair.upstream = upstream
    upstream.on('error', () => client.destroy())
    upstream.on('close', () => client.destroy())
    client.on('data', (chunk) => {
      if (!pair.frozen) upstream.write(chunk)
    })
    upstream.on('data', (chunk) => {
      if (!pair.frozen) client.write(chunk)
    })
  })
  let port = 0
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject)
        port = (server.address() as AddressInfo).port
        resolve()
      })
    })
  await listen()

  return {
    get port() {
      return port
    },
    get mode() {
      return mode
    },
    url(base) {
      const url = new URL(base)
      url.hostname = '127.0.0.1'
      url.port = String(port)
      return url.toString()
    },
    refuse() {
      if (mode !== 'refuse') server.close()
      mode = 'refuse'
      for (const pair of pairs) {
        pair.client.resetAndDestroy()
        pair.upstream?.destroy()
      }
      pairs.clear()
    },
    async blackhole() {
      if (mode === 'refuse') await listen()
      mode = 'blackhole'
      for (const pair of pairs) pair.frozen = true
    },
    async heal() {
      if (mode === 'refuse') await listen()
      mode = 'pass'
      // A frozen connection's state is lost; the server side closes it, as a restarted server would.
      for (const pair of pairs) {
        if (!pair.frozen) continue
        pair.client.destroy()
        pair.upstream?.destroy()
        pairs.delete(pair)
      }
    },
    async close() {
      for (const pair of pairs) {
        pair.client.destroy()
        pair.upstream?.destroy()
      }
      if (mode !== 'refuse') await new Promise<void>((resolve) => server.close(() => resolve()))
      mode = 'refuse'
    },
  }
}
