import type { DirectQuery, DirectStatement, DirectTransaction } from './client.js'

/** Bodies in one transaction at most: a batch holds SQLite's one connection for a few milliseconds at most. */
const MAX_BATCH = 100

type Body<T> = (run: DirectStatement) => Promise<T>

interface Queued {
  body: Body<unknown>
  resolve(value: unknown): void
  reject(error: unknown): void
}

interface Batches {
  waiting: Queued[]
  running: boolean
  scheduled: boolean
}

/** The bodies waiting for their transaction, by the database's transaction (one per database). */
const batchesOf = new WeakMap<DirectTransaction, Batches>()

/**
 * Runs `body` in one transaction with the other bodies given in the same event-loop turn, and with
 * those given while the previous batch ran (a group commit): the SMPP connector's records of one
 * read of the socket (its answers, receipts, the SENT of the messages they finish, the part rows of
 * the submits they let go) are one commit, not one each. On SQLite a commit is a write to the WAL
 * and a turn on the one connection; on PostgreSQL a round trip.
 *
 * One batch runs at a time per database: its bodies lock rows in the order they were given, and
 * two batches of one process running at once could lock two messages in opposite orders.
 * Resolves once the batch committed, so what a body wrote is committed when its promise resolves,
 * as with a transaction of its own.
 *
 * When the batch's transaction fails (one body's error undoes all), each body runs again alone in
 * a transaction of its own, so only the caller whose body failed sees an error (a deadlock between
 * two instances' batches on PostgreSQL ends the same way). A body may therefore run twice: it runs
 * statements only, and whatever it collects for after the commit (status changes to publish) it
 * creates itself, so a rolled-back run leaves nothing behind.
 */
export function turnTransaction<T>(directTransaction: DirectTransaction, body: Body<T>): Promise<T> {
  let batches = batchesOf.get(directTransaction)
  if (!batches) {
    batches = { waiting: [], running: false, scheduled: false }
    batchesOf.set(directTransaction, batches)
  }
  const state = batches
  return new Promise<T>((resolve, reject) => {
    state.waiting.push({ body, resolve: resolve as (value: unknown) => void, reject })
    schedule(directTransaction, state)
  })
}

function schedule(directTransaction: DirectTransaction, state: Batches) {
  if (state.running || state.scheduled || !state.waiting.length) return
  state.scheduled = true
  setImmediate(() => {
    state.scheduled = false
    state.running = true
    const batch = state.waiting.splice(0, MAX_BATCH)
    void runBatch(directTransaction, batch).finally(() => {
      state.running = false
      schedule(directTransaction, state)
    })
  })
}

async function runBatch(directTransaction: DirectTransaction, batch: Queued[]) {
  if (batch.length === 1) {
    const [only] = batch
    return directTransaction(only!.body).then(only!.resolve, only!.reject)
  }
  let results: unknown[]
  try {
    results = await directTransaction(async (run) => {
      const answers: unknown[] = []
      for (const queued of batch) answers.push(await queued.body(run))
      return answers
    })
  } catch {
    for (const queued of batch) await directTransaction(queued.body).then(queued.resolve, queued.reject)
    return
  }
  batch.forEach((queued, i) => queued.resolve(results[i]))
}

/** Items in one merged statement at most (a multi-row statement's values stay far below both databases' limits). */
const MAX_MERGED = 100

/** The items of one merged statement still open for more, by the database's transaction and the statement's maker. */
const mergingOf = new WeakMap<DirectTransaction, Map<unknown, Merged<never>>>()

interface Merged<I> {
  items: I[]
  settles: { resolve(): void; reject(error: unknown): void }[]
}

/**
 * Writes `item` with the other items of the same `statement` maker given before the batch runs,
 * in one statement (`statement(items)`, a multi-row INSERT or UPDATE) of a turnTransaction body:
 * where each item's body was one round trip of the batch, the items of a batch are one.
 * Resolves once that batch committed. When the merged statement fails, each item is written again
 * in a statement of its own (`statement([item])`), so only the caller whose item failed sees an
 * error, as with turnTransaction's bodies.
 */
export function turnStatement<I>(directTransaction: DirectTransaction, statement: (items: I[]) => DirectQuery, item: I): Promise<void> {
  let open = mergingOf.get(directTransaction)
  if (!open) {
    open = new Map()
    mergingOf.set(directTransaction, open)
  }
  const byMaker = open
  let merged = byMaker.get(statement) as Merged<I> | undefined
  if (!merged) {
    const started: Merged<I> = { items: [], settles: [] }
    merged = started
    byMaker.set(statement, started as Merged<never>)
    turnTransaction(directTransaction, async (run) => {
      // Closed once its batch runs (a body may run twice: the same items then).
      if (byMaker.get(statement) === (started as Merged<never>)) byMaker.delete(statement)
      await run(statement(started.items))
    }).then(
      () => started.settles.forEach((s) => s.resolve()),
      (error: unknown) => {
        if (started.items.length === 1) return started.settles[0]!.reject(error)
        started.items.forEach((one, i) =>
          turnTransaction(directTransaction, (run) => run(statement([one]))).then(started.settles[i]!.resolve, started.settles[i]!.reject),
        )
      },
    )
  }
  const target = merged
  if (target.items.length + 1 >= MAX_MERGED && byMaker.get(statement) === (target as Merged<never>)) byMaker.delete(statement)
  return new Promise<void>((resolve, reject) => {
    target.items.push(item)
    target.settles.push({ resolve, reject })
  })
}
