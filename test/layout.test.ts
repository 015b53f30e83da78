// The README's layout section names every room of src/ and of the top of the repository, and
// nothing that is not there: a new folder, or a move, shows up here as a diff.
import { readdirSync, readFileSync } from 'node:fs'
import { expect, it } from 'vitest'

it("the README's layout lists exactly the entries of src/ and the repository's main folders", () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
  const section = readme.slice(readme.indexOf('## Layout'))
  const block = section.slice(section.indexOf('```\n') + 4, section.indexOf('\n```', section.indexOf('```\n') + 4))
  const listed = block.split('\n').map((line) => line.split(/\s+/)[0]!)
  const src = readdirSync(new URL('../src/', import.meta.url), { withFileTypes: true }).map(
    (e) => `src/${e.name}${e.isDirectory() ? '/' : ''}`,
  )
  const graphqlTypes = 'src/graphql/types/'
  const top = ['rest-compat/', 'console/', 'prisma/', 'test/', 'bench/', 'scripts/', 'docs/']
  expect([...listed].sort()).toEqual([...src, graphqlTypes, ...top].sort())
})
