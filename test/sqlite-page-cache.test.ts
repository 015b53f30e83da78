import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../src/db/client.js'
import { applyMigrations } from '../src/db/migrate.js'
import { parseEnv } from '../src/core/env.js'

// The SQLite connection's page cache is held in the service's own memory (docs/operations.md, "Memory").
describe('SQLite page cache (SQLITE_CACHE_MIB)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-cache-'))
  const url = `file:${join(dir, 'cache.db')}`
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  const cacheSize = async (options: Parameters<typeof openDatabase>[1]) => {
    const database = await openDatabase(url, options)
    try {
      const [row] = await database.prisma.$queryRawUnsafe<{ cache_size: number | bigint }[]>('PRAGMA cache_size')
      return Number(row!.cache_size)
    } finally {
      await database.close()
    }
  }

  it('is 8 MiB unless configured, and the configured size otherwise (a negative cache_size is KiB)', async () => {
    await applyMigrations(url)
    expect(parseEnv({}).SQLITE_CACHE_MIB).toBe(8)
    expect(await cacheSize({})).toBe(-8 * 1024)
    expect(await cacheSize({ sqliteCacheMib: parseEnv({ SQLITE_CACHE_MIB: '64' }).SQLITE_CACHE_MIB })).toBe(-64 * 1024)
  })

  it('refuses a size that is not a whole number of MiB from 1 to 4096', async () => {
    for (const bad of ['0', '1.5', '5000', 'lots', '-8'])
      expect(() => parseEnv({ SQLITE_CACHE_MIB: bad }), bad).toThrowError(/Invalid configuration:\n {2}SQLITE_CACHE_MIB: /)
    await expect(openDatabase(url, { sqliteCacheMib: 0 })).rejects.toThrowError(/sqliteCacheMib: a whole number of MiB, at least 1/)
  })
})
