import type { ArgBuilder } from '@pothos/core'
import { GraphQLError, Kind } from 'graphql'
import { builder, type BuilderTypes } from '../builder.js'
import type { PageInfo } from '../../messaging/paging.js'

builder.queryType({
  description:
    "Reads. Messaging fields need `Authorization: Bearer <API key>` and see only that key's account; channel and program fields are public.",
})
builder.mutationType({
  description: 'Writes. Each needs an API key; the channel management mutations need a key of the account operating the channel.',
})

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

export const OffsetPageInfoRef = builder.objectRef<PageInfo>('OffsetPageInfo').implement({
  description: 'Where a numbered page (page / perPage) stands in its list. Cursor connections use `PageInfo`.',
  fields: (t) => ({
    search: t.exposeString('search', { description: 'The search text as given; empty when none.' }),
    total: t.exposeInt('total', { description: 'How many items match, on every page.' }),
    page: t.exposeInt('page', { description: '1-based.' }),
    perPage: t.exposeInt('perPage', { description: 'Page size after clamping (at most 100).' }),
    skipped: t.exposeInt('skipped', { description: 'Items before this page: (page - 1) * perPage.' }),
    pageCount: t.exposeInt('pageCount', { description: 'ceil(total / perPage).' }),
  }),
})

export const DeletedPayload = builder.objectRef<{ deletedId: string }>('DeletedPayload').implement({
  description: 'What a delete removed.',
  fields: (t) => ({ deletedId: t.exposeID('deletedId', { description: 'The id of the deleted item.' }) }),
})

/** page / perPage / search, the arguments of every messaging list. */
export const listArgs = (t: ArgBuilder<BuilderTypes>, searchDescription: string) => ({
  page: t.int({ defaultValue: 1, description: '1-based page number, at most 1,000,000.' }),
  perPage: t.int({
    defaultValue: 25,
    description: 'At most 100; larger values up to 1,000,000 are clamped, above that VALIDATION_FAILED.',
  }),
  search: t.string({ description: searchDescription }),
})

export const CONTACT_SEARCH = 'Case-insensitive substring of names, mobile, email or organization.'

/** A time window of a list filter: `from` included, `before` excluded (either may be left out). */
export const DateTimeRangeInput = builder.inputType('DateTimeRange', {
  description: 'A span of time: from `from` (included) up to `before` (excluded). Either end may be left out.',
  fields: (t) => ({
    from: t.field({ type: 'DateTime', description: 'The earliest instant included.' }),
    before: t.field({ type: 'DateTime', description: 'The first instant no longer included; later than `from`.' }),
  }),
})
