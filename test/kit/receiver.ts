// A real local webhook receiver (node:http on 127.0.0.1) that records what it gets.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  headers: IncomingMessage['headers']
  body: string
  at: number
}

export type Behaviour = (req: IncomingMessage, res: ServerResponse, body: string) => void

export async function startReceiver(behaviour: Behaviour = (_req, res) => res.end('ok')) {
  const received: Received[] = []
  const sockets = new Set<import('node:net').Socket>()
  let current = behaviour
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      received.push({ headers: req.headers, body, at: Date.now() })
      current(req, res, body)
    })
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    respond(next: Behaviour) {
      current = next
    },
    async close() {
      for (const s of sockets) s.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

export const reply =
  (status: number, headers: Record<string, string> = {}): Behaviour =>
  (_req, res) => {
    res.writeHead(status, headers)
    res.end()
  }
