// The configuration parser at its former path (before src/core/): external tools that load it
// from a checkout (benchmark harnesses counting SQL statements per request) keep working.
export { parseEnv } from './core/env.js'
