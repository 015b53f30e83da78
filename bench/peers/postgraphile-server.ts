// PostGraphile 4 over the service's PostgreSQL schema: the GraphQL peer of issue 8 (no auth).
// Usage: node --import tsx bench/peers/postgraphile-server.ts <port> <postgresql://...?schema=name>
import { createServer } from 'node:http'
import Module, { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import pg from 'pg'
import { parseDatabaseUrl } from '../../src/db/connection-url.js'

// The install holds three copies of graphql: 16 at the top (the service's), 15.11 under postgraphile
// and 15.11 again under graphile-build-pg, and graphql-parse-resolve-info resolves the top one. Types
// from two copies do not mix ("Cannot use GraphQLScalarType from another module or realm"), so every
// require of graphql in this process goes to postgraphile's own copy, as one deduplicated install would.
const postgraphileDir = dirname(createRequire(import.meta.url).resolve('postgraphile/package.json'))
const graphql15 = join(postgraphileDir, 'node_modules', 'graphql')
const loader = Module as unknown as { _resolveFilename(request: string, ...rest: unknown[]): string }
const resolve = loader._resolveFilename
loader._resolveFilename = function (request, ...rest) {
  return resolve.call(this, /^graphql(\/|$)/.test(request) ? request.replace(/^graphql/, graphql15) : request, ...rest)
}
const { postgraphile } = await import('postgraphile')

const [portArg, databaseUrl] = process.argv.slice(2)
if (!portArg || !databaseUrl) throw new Error('usage: postgraphile-server.ts <port> <DATABASE_URL>')
const target = parseDatabaseUrl(databaseUrl)
// The service's pool size (src/db/client.ts).
const pool = new pg.Pool({ connectionString: target.connectionString, max: 10 })
const handler = postgraphile(pool, target.schema!, {
  graphqlRoute: '/graphql',
  disableQueryLog: true,
  retryOnInitFail: false,
  // Production settings: no watch, no GraphiQL, no stack traces.
  watchPg: false,
  graphiql: false,
  extendedErrors: [],
})
createServer((req, res) => {
  if (req.url === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' })
    return res.end('{"status":"ok"}')
  }
  handler(req, res)
}).listen(Number(portArg), '127.0.0.1')
