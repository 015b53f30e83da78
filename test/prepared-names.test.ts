// Names of prepared statements (src/db/client.ts preparedName): one name per text for the life of
// the process, and no more than MAX_PREPARED_STATEMENTS of them; past that a text runs unnamed.
// Its own file: the names are process-wide, and each test file runs in a fresh module graph.
import { expect, it } from 'vitest'
import { MAX_PREPARED_STATEMENTS, preparedName } from '../src/db/client.js'

it('gives each text one name for good, and none past the limit', () => {
  const texts = Array.from({ length: MAX_PREPARED_STATEMENTS }, (_, i) => `SELECT ${i}`)
  const names = texts.map((text) => preparedName(text))
  expect(new Set(names).size).toBe(MAX_PREPARED_STATEMENTS)
  expect(names.every((name) => typeof name === 'string')).toBe(true)
  expect(texts.map((text) => preparedName(text))).toEqual(names)
  // Full: a new text is not named (node-postgres then parses it each time), the known ones keep theirs.
  expect(preparedName('SELECT "new"')).toBeUndefined()
  expect(preparedName(texts[7]!)).toBe(names[7])
})
