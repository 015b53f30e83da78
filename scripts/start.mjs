// `npm start`: the service from dist/, in this process, after a check that dist/ is up to date
// (scripts/dist-inputs.mjs, about 30 ms). A separate node process for the check alone cost a start
// about 0.1 s of wall time (docs/operations.md, "Start-up"). When an input changed, dist/ is built
// by a child process (scripts/build.mjs --quick), so esbuild's memory is never the service's.
import { execFileSync } from 'node:child_process'
import cluster from 'node:cluster'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { distInputs } from './dist-inputs.mjs'

const started = performance.now()
const root = fileURLToPath(new URL('..', import.meta.url))
const server = fileURLToPath(new URL('../dist/server.js', import.meta.url))
const { count, upToDate } = distInputs(root)
if (upToDate) {
  const ms = Math.round(performance.now() - started)
  // One line in the service's own log format (pino's, at info), as the build writes it.
  console.log(JSON.stringify({ level: 30, time: Date.now(), msg: 'dist/ up to date', inputs: count, written: 0, ms }))
} else {
  try {
    execFileSync(process.execPath, [fileURLToPath(new URL('build.mjs', import.meta.url)), '--quick'], { stdio: 'inherit' })
  } catch (error) {
    // The build has said why (esbuild's errors on stderr); no stack of this script's on top.
    process.exit(typeof error.status === 'number' && error.status > 0 ? error.status : 1)
  }
}
// The workers of a cluster (WEB_CONCURRENCY > 1) start from dist/server.js itself, without the check.
cluster.setupPrimary({ exec: server })
await import(pathToFileURL(server).href)
