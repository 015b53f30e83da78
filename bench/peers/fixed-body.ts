// A node:http server answering one fixed JSON body of a given size: the now-playing peer of issue 8.
// Usage: node --import tsx bench/peers/fixed-body.ts <port> <bytes>
import { createServer } from 'node:http'

const [port, bytes] = process.argv.slice(2).map(Number)
// {"padding":"xxx..."} is 14 bytes plus the padding.
const body = JSON.stringify({ padding: 'x'.repeat(Math.max(0, (bytes ?? 0) - 14)) })
createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) })
  res.end(body)
}).listen(port, '127.0.0.1')
