import cluster, { type Worker } from 'node:cluster'
import type { Logger } from 'pino'

/** Sent by the primary to the one worker that runs the cron loop (src/process/worker.ts). */
export const RUN_WORKER_LOOP = 'gateway:run-worker-loop'

/** More unexpected worker deaths than this within RESTART_WINDOW_MS: the primary gives up (exit 1). */
export const MAX_RESTARTS = 5
const RESTART_WINDOW_MS = 60_000

export interface PrimaryOptions {
  workers: number
  /** SHUTDOWN_GRACE_MS: each worker drains within it; the primary waits this plus a margin. */
  graceMs: number
  /** WORKER_ENABLED: hand the cron loop to one worker. */
  workerLoop: boolean
  logger: Logger
  /** Flushes the log and exits (the caller's process.exit). */
  exit(code: number): void
}

/**
 * The primary of `WEB_CONCURRENCY` > 1: forks the HTTP workers (src/process/server.ts in each), hands the
 * cron loop to exactly one of them, restarts a worker that dies unexpectedly (at most MAX_RESTARTS
 * per minute) and on SIGTERM/SIGINT drains them all. The first worker starts alone: if it cannot
 * (port taken, database gone), its one-line error is the only one and the primary exits 1. The
 * primary opens no database and serves nothing.
 */
export function runPrimary({ workers, graceMs, workerLoop, logger, exit }: PrimaryOptions) {
  const alive = new Set<Worker>()
  const listening = new Set<Worker>()
  const restarts: number[] = []
  let loopOwner: Worker | null = null
  let started = false
  let stopping = false
  let url = ''

  function fork() {
    const worker = cluster.fork()
    alive.add(worker)
    worker.once('listening', (address) => {
      listening.add(worker)
      url ||= `http://${address.address ?? '127.0.0.1'}:${address.port}`
      // The loop goes to a worker that is up, and to a replacement only once its owner is gone.
      if (workerLoop && !loopOwner && !stopping) {
        loopOwner = worker
        worker.send(RUN_WORKER_LOOP)
      }
      if (!started && listening.size === 1) for (let i = 1; i < workers; i++) fork()
      if (!started && listening.size === workers) {
        started = true
        logger.info({ url, workers, pid: process.pid }, 'cluster listening')
      }
    })
    worker.once('exit', (code, signal) => {
      const wasListening = listening.delete(worker)
      alive.delete(worker)
      if (loopOwner === worker) loopOwner = null
      if (stopping) {
        // A worker that drained badly exits 1: so does the primary. One still starting has no
        // SIGTERM handler yet and simply ends.
        if (code !== 0 && !(signal === 'SIGTERM' && !wasListening)) failed = true
        if (alive.size === 0) finish()
        return
      }
      if (!started) {
        // A start-up failure: the worker printed why. Nothing to restart into.
        logger.error({ worker: worker.id, code, signal }, 'a worker failed to start')
        return stop('startup', 1)
      }
      const now = Date.now()
      while (restarts.length && now - restarts[0]! > RESTART_WINDOW_MS) restarts.shift()
      if (restarts.length >= MAX_RESTARTS) {
        logger.error({ worker: worker.id, code, signal, restarts: restarts.length }, 'workers keep dying; stopping')
        return stop('restart limit', 1)
      }
      restarts.push(now)
      logger.warn({ worker: worker.id, pid: worker.process.pid, code, signal }, 'worker died; starting another')
      fork()
    })
  }

  let exitCode = 0
  let failed = false
  function finish() {
    exit(failed ? 1 : exitCode)
  }

  /** Every worker drains (its own SIGTERM handler, src/process/server.ts); exit once all are gone. */
  function stop(reason: string, code: number) {
    if (stopping) return
    stopping = true
    exitCode = code
    logger.info({ reason, workers: alive.size }, 'stopping workers')
    if (alive.size === 0) return finish()
    for (const worker of alive) worker.process.kill('SIGTERM')
    setTimeout(() => {
      logger.warn({ workers: alive.size }, 'workers still running after the grace period; killing them')
      failed = true
      for (const worker of alive) worker.process.kill('SIGKILL')
    }, graceMs + 5000).unref()
  }

  process.on('SIGTERM', () => stop('SIGTERM', 0))
  process.on('SIGINT', () => stop('SIGINT', 0))
  fork()
}
