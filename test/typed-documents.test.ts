// Typed documents (src/graphql/typed-documents.ts): what the runtime builds, and what the compiler
// refuses. The refusals are checked by `tsc` (npm run lint): each `@ts-expect-error` below must meet
// an error, or the type check fails, so a change that lets a route read what its selection lacks
// cannot pass unnoticed.
import { print, validate } from 'graphql'
import { describe, expect, it } from 'vitest'
import { documentText, graphql, type ResultOf } from '../src/graphql/typed-documents.js'
import { route } from '../rest-compat/route.js'
import { restRoutes } from '../rest-compat/routes.js'
import { schema } from '../src/graphql/schema.js'

const PAGE = graphql(`fragment Page on OffsetPageInfo { total page }`)
const ITEM = graphql(`fragment Item on Contact { id: uuid mobile }`)
const ITEM_GROUPS = graphql(`fragment ItemGroups on Contact { ...Item groups { name } }`, [ITEM])

describe('graphql()', () => {
  it('appends each fragment definition once, after the text, however often it is reached', () => {
    const document = graphql(`query List { contacts { nodes { ...Item ...ItemGroups } pageInfo { ...Page } } }`, [
      ITEM,
      ITEM_GROUPS,
      PAGE,
      ITEM,
    ])
    expect(document.definitions.map((d) => ('name' in d ? d.name?.value : undefined))).toEqual(['List', 'Item', 'ItemGroups', 'Page'])
    expect(documentText(document)).toMatchInlineSnapshot(`
      "query List { contacts { nodes { ...Item ...ItemGroups } pageInfo { ...Page } } }
      fragment Item on Contact { id: uuid mobile }
      fragment ItemGroups on Contact { ...Item groups { name } }
      fragment Page on OffsetPageInfo { total page }"
    `)
  })

  it('keeps a document without fragments as written', () => {
    const text = `mutation Delete($id: ID!) { deleteGroup(id: $id) { deletedId } }`
    expect(documentText(graphql(text))).toBe(text)
    expect(print(graphql(text))).toContain('deleteGroup(id: $id)')
  })

  it('gives the compiler the selection: fields, aliases, nullability and fragments', () => {
    const document = graphql(`query($id: ID!) { group(id: $id) { id: uuid name } contacts { nodes { ...Item } } }`, [ITEM])
    type Result = ResultOf<typeof document>
    const result: Result = { group: null, contacts: { nodes: [{ id: 'c1', mobile: '+254700000001' }] } }
    // @ts-expect-error: `group` is nullable, so reading through it unchecked does not compile.
    expect(() => result.group.name).toThrow(TypeError)
    // @ts-expect-error: `email` is not selected by the fragment.
    expect(result.contacts.nodes[0]!.email).toBeUndefined()
  })
})

describe('route()', () => {
  const example = {
    method: 'GET',
    path: '/example/:id',
    api: 'messaging',
    document: graphql(`query Example($id: ID!) { group(id: $id) { name } }`),
    variables: ({ params }: { params: Record<string, string> }) => ({ id: params.id }),
  } as const

  it("types toLegacy by the route's document, with its root fields present", () => {
    // The root field `group` is nullable in the schema; toLegacy receives it present (route.ts `Found`).
    const definition = route({ ...example, toLegacy: ({ group }) => ({ name: group.name.toUpperCase() }) })
    expect(definition.toLegacy({ group: { name: 'choir' } }, null as never)).toEqual({ name: 'CHOIR' })
    // @ts-expect-error: the selection holds no `description`.
    route({ ...example, toLegacy: ({ group }) => ({ description: group.description.trim() }) })
  })
})

describe("the REST routes' documents", () => {
  // The router validates a route's document only when the route is first asked (rest-compat/router.ts):
  // this is where a document the schema no longer accepts is found before it ships.
  it('each validates against the schema', () => {
    expect(restRoutes.length).toBeGreaterThan(20)
    const invalid = restRoutes.flatMap((r) => validate(schema, r.document).map((e) => `${r.method} ${r.path}: ${e.message}`))
    expect(invalid).toEqual([])
  })
})
