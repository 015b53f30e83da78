import { validationError } from '../errors.js'
import { searchKey } from './search-text.js'

export const DEFAULT_PER_PAGE = 25
export const MAX_PER_PAGE = 100

export interface PageInput {
  page?: number | null
  perPage?: number | null
  search?: string | null
}

export interface PageRequest {
  page: number
  perPage: number
  /** As the client sent it (meta echoes it). */
  search: string
  /** Trimmed and lower-cased, what the filter uses. */
  searchKey: string
  skip: number
}

/** page is 1-based; perPage above the maximum is clamped; anything below 1 is refused. */
export function pageRequest(input: PageInput): PageRequest {
  const page = input.page ?? 1
  const requested = input.perPage ?? DEFAULT_PER_PAGE
  const details = []
  if (!Number.isInteger(page) || page < 1) details.push({ field: 'page', message: 'page must be a whole number from 1' })
  if (!Number.isInteger(requested) || requested < 1) details.push({ field: 'perPage', message: 'perPage must be a whole number from 1' })
  if (details.length) throw validationError(details)
  const perPage = Math.min(requested, MAX_PER_PAGE)
  const search = input.search ?? ''
  return { page, perPage, search, searchKey: searchKey(search.trim()), skip: (page - 1) * perPage }
}

export interface PageInfo {
  search: string
  total: number
  page: number
  perPage: number
  skipped: number
  pageCount: number
}

export function pageInfo(request: PageRequest, total: number): PageInfo {
  return {
    search: request.search,
    total,
    page: request.page,
    perPage: request.perPage,
    skipped: request.skip,
    pageCount: Math.ceil(total / request.perPage),
  }
}
