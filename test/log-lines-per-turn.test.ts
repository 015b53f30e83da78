import { execFileSync, spawn } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createLogger, linesPerTurn, withinOf, writeWithin } from '../src/core/logger.js'

/** A destination that keeps what it is given, write by write (what stdout would receive). */
function recorder(fd?: number) {
  const writes: string[] = []
  const calls: string[] = []
  const sink = linesPerTurn({
    fd,
    // A Buffer, as pino's SonicBoom in buffer mode takes it; the sink reuses it, so it is read now.
    write(chunk: Buffer | string) {
      writes.push(chunk.toString())
      return true
    },
    flush(cb?: (err?: Error) => void) {
      calls.push('flush')
      cb?.()
    },
    flushSync() {
      calls.push('flushSync')
    },
  })
  return { sink, writes, calls }
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

describe('stdout lines, one write per event-loop turn (src/core/logger.ts)', () => {
  it('holds the lines of a turn and writes them together, in order, when the turn ends', async () => {
    const { sink, writes } = recorder()
    sink.write('{"n":1}\n')
    sink.write('{"n":2}\n')
    sink.write('{"n":3}\n')
    expect(writes).toEqual([])
    await nextTurn()
    expect(writes).toEqual(['{"n":1}\n{"n":2}\n{"n":3}\n'])
    sink.write('{"n":4}\n')
    await nextTurn()
    expect(writes).toEqual(['{"n":1}\n{"n":2}\n{"n":3}\n', '{"n":4}\n'])
  })

  it('never writes more than 4,096 bytes at once unless one line is longer, and every write ends a line', async () => {
    const { sink, writes } = recorder()
    // Multi-byte characters: the limit is in bytes, not in string length.
    const lines = Array.from({ length: 120 }, (_, i) => `{"n":${i},"s":"${'é'.repeat(30 + (i % 50))}"}\n`)
    const long = `{"long":"${'x'.repeat(6000)}"}\n`
    for (const line of lines.slice(0, 60)) sink.write(line)
    sink.write(long)
    for (const line of lines.slice(60)) sink.write(line)
    await nextTurn()
    expect(writes.join('')).toBe([...lines.slice(0, 60), long, ...lines.slice(60)].join(''))
    expect(writes.length).toBeGreaterThan(3)
    for (const chunk of writes) {
      expect(chunk.endsWith('\n')).toBe(true)
      if (chunk !== long) expect(Buffer.byteLength(chunk)).toBeLessThanOrEqual(4096)
    }
    expect(writes).toContain(long)
  })

  it('flush and flushSync write the pending lines first', () => {
    const { sink, writes, calls } = recorder()
    sink.write('a\n')
    let flushed = false
    sink.flush(() => {
      flushed = true
    })
    expect(writes).toEqual(['a\n'])
    expect(flushed).toBe(true)
    sink.write('b\n')
    sink.flushSync()
    expect(writes).toEqual(['a\n', 'b\n'])
    expect(calls).toEqual(['flush', 'flushSync'])
  })

  it('writes the lines logged within writeWithin as it returns, after the turn’s earlier ones, and schedules nothing for them', async () => {
    const { sink, writes } = recorder()
    const within = withinOf(sink)!
    sink.write('a\n')
    within(() => {
      sink.write('b\n')
      sink.write('c\n')
      expect(writes).toEqual([])
    })
    expect(writes).toEqual(['a\nb\nc\n'])
    // Alone in a turn: written as it returns, and no turn end is left to write anything.
    await nextTurn()
    within(() => sink.write('d\n'))
    expect(writes).toEqual(['a\nb\nc\n', 'd\n'])
    await nextTurn()
    expect(writes).toHaveLength(2)
    // A line after it in the same turn is held for the turn's end as before.
    within(() => sink.write('e\n'))
    sink.write('f\n')
    expect(writes).toEqual(['a\nb\nc\n', 'd\n', 'e\n'])
    await nextTurn()
    expect(writes).toEqual(['a\nb\nc\n', 'd\n', 'e\n', 'f\n'])
  })

  it('writes what writeWithin’s body logged even when the body throws', () => {
    const { sink, writes } = recorder()
    expect(() =>
      withinOf(sink)!(() => {
        sink.write('logged\n')
        throw new Error('replay failed')
      }),
    ).toThrow('replay failed')
    expect(writes).toEqual(['logged\n'])
  })

  it('writeWithin of a logger it did not make only runs the body', () => {
    let ran = 0
    writeWithin(createLogger('info').child({}))(() => ran++)
    expect(ran).toBe(1)
    expect(withinOf({})).toBeUndefined()
  })

  it('writes to the destination’s file descriptor itself when it has one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lines-'))
    const fd = openSync(join(dir, 'out'), 'w')
    try {
      const { sink, writes } = recorder(fd)
      sink.write('{"n":1}\n')
      sink.write('{"n":2}\n')
      await nextTurn()
      withinOf(sink)!(() => sink.write('{"n":3}\n'))
      expect(readFileSync(join(dir, 'out'), 'utf8')).toBe('{"n":1}\n{"n":2}\n{"n":3}\n')
      expect(writes).toEqual([])
    } finally {
      closeSync(fd)
      rmSync(dir, { recursive: true })
    }
  })

  it('hands the lines to the destination when its descriptor fails, and every write after that', async () => {
    // Opened for reading: a write fails with EBADF.
    const readOnly = openSync('/dev/null', 'r')
    const dir = mkdtempSync(join(tmpdir(), 'lines-'))
    try {
      const { sink, writes } = recorder(readOnly)
      sink.write('a\n')
      sink.write('b\n')
      await nextTurn()
      expect(writes).toEqual(['a\nb\n'])
      // A descriptor that works is not tried again: the destination reports its errors its way.
      const writable = openSync(join(dir, 'out'), 'w')
      ;(sink as { fd?: number }).fd = writable
      sink.write('c\n')
      await nextTurn()
      closeSync(writable)
      expect(writes).toEqual(['a\nb\n', 'c\n'])
      expect(readFileSync(join(dir, 'out'), 'utf8')).toBe('')
    } finally {
      closeSync(readOnly)
      rmSync(dir, { recursive: true })
    }
  })

  it('on a full non-blocking pipe (EAGAIN) hands the rest to the destination, which waits: every line arrives whole and in order', async () => {
    // A child process whose stdout is made non-blocking (node's pipe handle sets O_NONBLOCK) writes
    // 2 MB of lines, more than the pipe holds; its destination counts what it is handed.
    const script = `
      import net from 'node:net'
      import pino from 'pino'
      import { linesPerTurn } from './src/core/logger.ts'
      new net.Socket({ fd: 1, readable: false, writable: true })
      const boom = pino.destination({ dest: 1, sync: true, contentMode: 'buffer' })
      const write = boom.write.bind(boom)
      let handed = 0
      boom.write = (chunk) => {
        // The first hand-off is told at once: the test starts reading only then.
        if (handed++ === 0) process.stderr.write('handed\\n')
        return write(chunk)
      }
      const sink = linesPerTurn(boom)
      for (let turn = 0; turn < 400; turn++) {
        for (let i = 0; i < 10; i++) sink.write(JSON.stringify({ n: turn * 10 + i, pad: 'x'.repeat(500) }) + '\\n')
        await new Promise((resolve) => setImmediate(resolve))
      }
      process.stderr.write('count ' + handed + '\\n')
      process.exit(0)`
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout.pause()
    let err = ''
    // Not read until the child's destination has been handed a write: the pipe fills and a write
    // meets EAGAIN, however slowly the child starts.
    const handedOff = new Promise<void>((resolve) =>
      child.stderr.on('data', (chunk: Buffer) => {
        err += chunk
        if (err.includes('handed\n')) resolve()
      }),
    )
    await handedOff
    const chunks: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk))
    child.stdout.resume()
    const code = await new Promise((resolve) => child.on('close', resolve))
    expect(code, err).toBe(0)
    const lines = Buffer.concat(chunks).toString('utf8').trim().split('\n')
    expect(lines).toHaveLength(4000)
    lines.forEach((line, n) => expect(JSON.parse(line)).toEqual({ n, pad: 'x'.repeat(500) }))
    expect(Number(/count (\d+)/.exec(err)?.[1])).toBeGreaterThan(0)
  }, 60_000)

  it('the real logger on a pipe: every line of many turns arrives whole and in order, the buffer reused between them', () => {
    // Lines of every size, a few per turn, some longer than a write and some multi-byte.
    const script = `
      import { createLogger } from './src/core/logger.ts'
      const logger = createLogger('info')
      let n = 0
      for (let turn = 0; turn < 200; turn++) {
        for (let j = 0; j <= turn % 4; j++, n++) logger.info({ n, pad: (n % 3 ? 'é' : 'x').repeat((n * 97) % 5000) }, 'line')
        await new Promise((resolve) => setImmediate(resolve))
      }`
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    })
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { n: number; pad: string })
    expect(lines.length).toBe(500)
    lines.forEach((line, n) => {
      expect(line.n).toBe(n)
      expect(line.pad).toBe((n % 3 ? 'é' : 'x').repeat((n * 97) % 5000))
    })
  })

  it('writes the lines of the last turn when the process exits in that turn', () => {
    // The real logger on a real stdout (a pipe): log, then exit before the turn ends.
    const script = `
      import { createLogger } from './src/core/logger.ts'
      const logger = createLogger('info')
      for (let i = 0; i < 100; i++) logger.info({ i, pad: 'é'.repeat(40) }, 'line')
      process.exit(3)`
    let out = ''
    try {
      execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' })
    } catch (error) {
      const failed = error as { status: number; stdout: string }
      expect(failed.status).toBe(3)
      out = failed.stdout
    }
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { i: number; msg: string })
    expect(lines.map((l) => l.i)).toEqual(Array.from({ length: 100 }, (_, i) => i))
    expect(lines.every((l) => l.msg === 'line')).toBe(true)
  })
})
