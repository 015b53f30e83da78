import type { Db } from '../db/client.js'
import { notFound } from '../core/errors.js'

/** Hands a channel (by uuid or slug) to the account whose API keys will manage it. */
export async function setChannelOperator(db: Db, channel: string, accountId: string) {
  const account = await db.account.findUnique({ where: { id: accountId }, select: { id: true } })
  if (!account) throw notFound('Account')
  const found = await db.channel.findFirst({ where: { OR: [{ id: channel }, { slug: channel }] }, select: { id: true } })
  if (!found) throw notFound('Channel')
  return db.channel.update({
    where: { id: found.id },
    data: { operatorAccountId: accountId },
    select: { id: true, slug: true, operatorAccountId: true },
  })
}
