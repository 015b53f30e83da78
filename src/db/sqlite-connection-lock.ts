import { AsyncLocalStorage } from 'node:async_hooks'
import { TransactionBudgetError } from '../core/database-faults.js'

/** The adapter's members that run statements or open a transaction (@prisma/adapter-better-sqlite3). */
interface SqliteAdapter {
  queryRaw(query: unknown): Promise<unknown>
  executeRaw(query: unknown): Promise<unknown>
  startTransaction(isolationLevel?: unknown): Promise<{ commit(): Promise<void>; rollback(): Promise<void> }>
}

/** The connection a transaction of the service's own runs on (better-sqlite3's, Prisma's one connection). */
export interface SqliteTransactionConnection {
  /** Runs BEGIN IMMEDIATE, COMMIT or ROLLBACK. */
  control(sql: 'BEGIN IMMEDIATE' | 'COMMIT' | 'ROLLBACK'): void
  /** Whether a transaction is open (SQLite ends one itself after some errors). */
  inTransaction(): boolean
}

/** Ends the open transaction, if SQLite has not; a failed ROLLBACK leaves nothing more to do (the caller's error stands). */
function rollback(connection: SqliteTransactionConnection) {
  try {
    if (connection.inTransaction()) connection.control('ROLLBACK')
  } catch {
    // SQLite rolls back itself when it cannot go on.
  }
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
 * the client instead of the transaction's is part of that transaction's work. The service's own
 * transactions on the connection (`transaction`, Database.directTransaction) take their turn the
 * same way.
 */
export class SqliteConnectionLock {
  private tail: Promise<void> = Promise.resolve()
  private readonly scope = new AsyncLocalStorage<{ open: boolean }>()
  /** Transactions' callbacks running in `scope` now (scoped). */
  private scoped = 0

  /**
   * Runs `body` with `mark` as the scope's store, and turns the scope off again once no body runs.
   *
   * On Node 20 and 22 an AsyncLocalStorage, once it has run something, keeps an async hook on for
   * the life of the process: every timer, nextTick entry, socket request and promise created from
   * then on, whatever it serves, runs the hook that copies the store. A cached now-playing answer
   * after one add-contacts cost 20% more instructions, a fifth of them in that hook
   * (docs/performance.md, "The connection lock's async hook, off between transactions"). Off, the
   * scope answers `undefined`, which is right: no transaction's callback is running. A callback's
   * leftover work that runs later finds its mark closed either way.
   */
  private async within<T>(mark: { open: boolean }, body: () => Promise<T>): Promise<T> {
    this.scoped++
    try {
      return await this.scope.run(mark, body)
    } finally {
      mark.open = false
      if (--this.scoped === 0) this.scope.disable()
    }
  }

  /** Resolves once everything queued before holds the lock no more; call the answer to release it. */
  private acquire(): Promise<() => void> {
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const before = this.tail
    this.tail = before.then(() => held)
    return before.then(() => release)
  }

  /**
   * Resolves once everything queued before holds the lock no more, or throws TransactionBudgetError
   * after `maxWaitMs` (Prisma's `maxWait`); a turn given up is passed on when it comes.
   */
  private async turn(maxWaitMs: number): Promise<() => void> {
    const turn = this.acquire()
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TransactionBudgetError(`no turn on the SQLite connection within ${maxWaitMs} ms`)), maxWaitMs)
    })
    try {
      return await Promise.race([turn, late])
    } catch (error) {
      void turn.then((release) => release())
      throw error
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * A transaction of the service's own on the connection, without Prisma's interactive transaction
   * (its transaction client and bookkeeping cost more CPU than the SMS path's statements): `BEGIN
   * IMMEDIATE` in its turn (after the statements and transactions queued before; statements
   * outside a transaction queued after wait for its end), then `body`, then `COMMIT`, or `ROLLBACK`
   * when the body throws. IMMEDIATE takes SQLite's write lock at the start, so another process's
   * write between a read and a write of the body cannot fail it half-way (SQLITE_BUSY_SNAPSHOT).
   * Statements of the body's own work (`statement`, and the client's from its callback) go on at
   * once. Past `timeoutMs` it is rolled back and its turn passed on, as Prisma ends an expired
   * transaction: every later statement of the body throws, and so does the call.
   */
  async transaction<T>(
    connection: SqliteTransactionConnection,
    body: (statement: <R>(run: () => R) => R) => Promise<T>,
    { timeoutMs, maxWaitMs }: { timeoutMs: number; maxWaitMs: number },
  ): Promise<T> {
    const giveBack = await this.turn(maxWaitMs)
    let held = true
    const release = () => {
      if (held) giveBack()
      held = false
    }
    const mark = { open: true }
    let expired: TransactionBudgetError | undefined
    let timer: NodeJS.Timeout | undefined
    try {
      connection.control('BEGIN IMMEDIATE')
      timer = setTimeout(() => {
        expired = new TransactionBudgetError(`the transaction ran past its ${timeoutMs} ms and was rolled back`)
        mark.open = false
        rollback(connection)
        release()
      }, timeoutMs)
      const statement = <R>(run: () => R): R => {
        if (expired) throw expired
        return run()
      }
      let result: T
      try {
        result = await this.within(mark, () => body(statement))
      } catch (error) {
        if (!expired) rollback(connection)
        throw expired ?? error
      }
      if (expired) throw expired
      // SQLite ends a transaction itself after some errors (a full disk, an I/O error): nothing to commit.
      if (!connection.inTransaction()) throw new Error('the SQLite transaction ended before its commit')
      try {
        connection.control('COMMIT')
      } catch (error) {
        rollback(connection)
        throw error
      }
      return result
    } finally {
      clearTimeout(timer)
      mark.open = false
      release()
    }
  }

  /** Runs a `$transaction` call marked, so that statements of its own callback are not held up by it. */
  inTransaction<T>(run: () => Promise<T>): Promise<T> {
    return this.within({ open: true }, run)
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
