import { AsyncLocalStorage } from 'node:async_hooks'

/** The adapter's members that run statements or open a transaction (@prisma/adapter-better-sqlite3). */
interface SqliteAdapter {
  queryRaw(query: unknown): Promise<unknown>
  executeRaw(query: unknown): Promise<unknown>
  startTransaction(isolationLevel?: unknown): Promise<{ commit(): Promise<void>; rollback(): Promise<void> }>
}

/**
 * Prisma's SQLite adapter has one connection. Its interactive transactions take a lock against each
 * other, but a statement outside a transaction does not: issued while another request's transaction
 * is open (between two of its statements, as happens under load), it runs inside that transaction.
 * It is then undone when that transaction rolls back, and lost when the process dies before that
 * transaction commits, although its own caller saw it succeed. The SMPP connector writes a part's
 * row before its submit_sm goes out, and a row undone that way let a kill -9 send the part again.
 *
 * This lock closes the gap: a statement outside a transaction waits until no transaction is open,
 * and a transaction waits for the statements and transactions before it. Work run inside a
 * transaction's callback (`inTransaction`) goes on at once, as before: a statement there that uses
 * the client instead of the transaction's is part of that transaction's work.
 */
export class SqliteConnectionLock {
  private tail: Promise<void> = Promise.resolve()
  private readonly scope = new AsyncLocalStorage<{ open: boolean }>()

  /** Resolves once everything queued before holds the lock no more; call the answer to release it. */
  private acquire(): Promise<() => void> {
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const before = this.tail
    this.tail = before.then(() => held)
    return before.then(() => release)
  }

  /** Runs a `$transaction` call marked, so that statements of its own callback are not held up by it. */
  inTransaction<T>(run: () => Promise<T>): Promise<T> {
    const mark = { open: true }
    return this.scope.run(mark, run).finally(() => {
      mark.open = false
    })
  }

  /** Runs `statement` (a direct one, on the connection without Prisma) as the adapter's statements outside a transaction run. */
  async exclusive<T>(statement: () => T): Promise<T> {
    if (this.scope.getStore()?.open) return statement()
    const release = await this.acquire()
    try {
      return statement()
    } finally {
      release()
    }
  }

  /** Wraps the adapter Prisma connected: its statements outside a transaction, and its transactions, take the lock. */
  guard(adapter: SqliteAdapter) {
    for (const method of ['queryRaw', 'executeRaw'] as const) {
      const run = adapter[method].bind(adapter)
      adapter[method] = async (query) => {
        if (this.scope.getStore()?.open) return run(query)
        const release = await this.acquire()
        try {
          return await run(query)
        } finally {
          release()
        }
      }
    }
    const start = adapter.startTransaction.bind(adapter)
    adapter.startTransaction = async (isolationLevel) => {
      const release = await this.acquire()
      let transaction
      try {
        transaction = await start(isolationLevel)
      } catch (error) {
        release()
        throw error
      }
      const commit = transaction.commit.bind(transaction)
      const rollback = transaction.rollback.bind(transaction)
      transaction.commit = () => commit().finally(release)
      transaction.rollback = () => rollback().finally(release)
      return transaction
    }
  }
}
