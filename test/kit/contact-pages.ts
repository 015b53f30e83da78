import type { Db } from '../../src/db/client.js'
import { contactListOrder, contactListWhere } from '../../src/messaging/contact-list.js'
import { pageRequest, type PageInput } from '../../src/messaging/paging.js'

/**
 * A page of an account's contacts (or a group's) from Prisma's own query: findMany with the list's
 * filter and order, and count. What the raw list statements must answer, row for row.
 */
export async function prismaPage<C extends 'firstName' | 'familyName' | 'gender'>(
  db: Db,
  list: { accountId: string; groupId?: string },
  input: PageInput,
  columns: readonly C[],
) {
  const request = pageRequest(input)
  const where = contactListWhere(list.accountId, request, list.groupId)
  const select = Object.fromEntries([['id', true], ...columns.map((c) => [c, true])]) as { id: true } & Record<C, true>
  const [rows, total] = await Promise.all([
    db.contact.findMany({ where, orderBy: contactListOrder, skip: request.skip, take: request.perPage, select }),
    db.contact.count({ where }),
  ])
  return { rows, total }
}
