import { validationError, type ErrorDetail } from '../core/errors.js'
import { textProblem } from './input-rules.js'
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

/**
 * Paging numbers above this are refused (422) rather than clamped: no list is that long, and
 * (page - 1) * perPage must stay well inside GraphQL's 32-bit Int for `skipped`.
 */
export const MAX_PAGE_NUMBER = 1_000_000
/** Longer search terms are refused: no stored text is searched for that long a substring, and SQLite's LIKE has a pattern limit. */
export const MAX_SEARCH_LENGTH = 200

/** What is wrong with a page or perPage value, or null. The REST layer checks query strings with it too. */
export function pageNumberProblem(field: string, value: number): string | null {
  if (!Number.isInteger(value) || value < 1) return `${field} must be a whole number from 1`
  if (value > MAX_PAGE_NUMBER) return `${field} must be at most ${MAX_PAGE_NUMBER}`
  return null
}

/** page is 1-based; perPage above 100 is clamped; anything below 1 or above MAX_PAGE_NUMBER is refused. */
export function pageRequest(input: PageInput): PageRequest {
  const page = input.page ?? 1
  const requested = input.perPage ?? DEFAULT_PER_PAGE
  const details: ErrorDetail[] = []
  for (const [field, value] of [
    ['page', page],
    ['perPage', requested],
  ] as const) {
    const problem = pageNumberProblem(field, value)
    if (problem) details.push({ field, message: problem })
  }
  const search = input.search ?? ''
  const problem = textProblem(search)
  if (problem) details.push({ field: 'search', message: `search ${problem}` })
  else if (search.length > MAX_SEARCH_LENGTH)
    details.push({ field: 'search', message: `search must be at most ${MAX_SEARCH_LENGTH} characters` })
  if (details.length) throw validationError(details)
  const perPage = Math.min(requested, MAX_PER_PAGE)
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

/** Raw reads ($queryRaw) hand DateTime columns back as the driver stores them (SQLite: ISO text or epoch ms). */
export function rawDate(value: unknown): Date {
  if (value instanceof Date) return value
  if (typeof value === 'number' || typeof value === 'bigint') return new Date(Number(value))
  const text = String(value)
  // SQLite's CURRENT_TIMESTAMP form ("2026-01-02 03:04:05") is UTC without saying so.
  return new Date(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?$/.test(text) ? `${text.replace(' ', 'T')}Z` : text)
}
