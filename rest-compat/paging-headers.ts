// Paging headers of the REST lists: `Link` (RFC 8288) and `X-Total-Count`, beside the body's meta.
import type { PagePosition } from './route.js'

/**
 * `Link` with first, prev, next and last, and `X-Total-Count`. Each link is absolute, on
 * PUBLIC_BASE_URL, with the request's path and its query parameters in their order, `page` set
 * (added last when the request had none; a repeated `page` is sent once). `kept` names the query
 * parameters that may be carried over: the microcached channel lists pass the ones they document,
 * since their cached answer is shared by every URL that differs in other parameters only.
 *
 * prev is absent on page 1 and next on the last page; past the last page prev is the last page
 * (the page before an empty one past the end is empty too). An empty list has one page.
 */
export function pagingHeaders(
  position: PagePosition,
  { publicBaseUrl, url, kept }: { publicBaseUrl: string; url: URL; kept?: readonly string[] },
): Record<string, string> {
  const last = Math.max(1, position.lastPage)
  const page = position.page
  const params = [...url.searchParams].filter(([name]) => !kept || kept.includes(name))
  const at = (n: number) => {
    const query = new URLSearchParams()
    let placed = false
    for (const [name, value] of params) {
      if (name !== 'page') query.append(name, value)
      else if (!placed) {
        query.append('page', String(n))
        placed = true
      }
    }
    if (!placed) query.append('page', String(n))
    return `${publicBaseUrl}${url.pathname}?${query}`
  }
  const links: [rel: string, n: number][] = [['first', 1]]
  if (page > 1) links.push(['prev', Math.min(page - 1, last)])
  if (page < last) links.push(['next', page + 1])
  links.push(['last', last])
  return {
    Link: links.map(([rel, n]) => `<${at(n)}>; rel="${rel}"`).join(', '),
    'X-Total-Count': String(position.total),
  }
}
