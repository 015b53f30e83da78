import type { ArgBuilder } from '@pothos/core'
import { GraphQLError, Kind } from 'graphql'
import { builder, type BuilderTypes } from './builder.js'
import type { PageInfo } from '../messaging/paging.js'

builder.queryType({})
builder.mutationType({})

builder.scalarType('DateTime', {
  description: 'An instant, as ISO 8601 in UTC (2026-01-31T09:00:00.000Z).',
  serialize: (value) => (value as Date).toISOString(),
  parseValue: (value) => {
    const date = typeof value === 'string' ? new Date(value) : null
    if (!date || Number.isNaN(date.getTime())) throw new GraphQLError('DateTime must be an ISO 8601 string')
    return date
  },
  parseLiteral: (ast) => {
    const date = ast.kind === Kind.STRING ? new Date(ast.value) : null
    if (!date || Number.isNaN(date.getTime())) throw new GraphQLError('DateTime must be an ISO 8601 string')
    return date
  },
})

export const PageInfoRef = builder.objectRef<PageInfo>('PageInfo').implement({
  description: 'Where a page stands in its list.',
  fields: (t) => ({
    search: t.exposeString('search', { description: 'The search text as given; empty when none.' }),
    total: t.exposeInt('total'),
    page: t.exposeInt('page', { description: '1-based.' }),
    perPage: t.exposeInt('perPage'),
    skipped: t.exposeInt('skipped'),
    pageCount: t.exposeInt('pageCount'),
  }),
})

export const DeletedPayload = builder.objectRef<{ deletedId: string }>('DeletedPayload').implement({
  fields: (t) => ({ deletedId: t.exposeID('deletedId') }),
})


/** page / perPage / search, the arguments of every messaging list. */
export const listArgs = (t: ArgBuilder<BuilderTypes>, searchDescription: string) => ({
  page: t.int({ defaultValue: 1 }),
  perPage: t.int({ defaultValue: 25, description: 'At most 100; larger values are clamped.' }),
  search: t.string({ description: searchDescription }),
})

export const CONTACT_SEARCH = 'Case-insensitive substring of names, mobile, email or organization.'
