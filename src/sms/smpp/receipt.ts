/** What a delivery receipt says: the SMSC's id of the part, its stat, err and done date. */
export interface SmppReceipt {
  smscMessageId: string
  stat: string
  errorCode: string | null
  doneAt: Date | null
}

/** message_state TLV values (SMPP 3.4 5.3.2.35), for receipts that carry no `stat:` text. */
const MESSAGE_STATES: Record<number, string> = {
  1: 'ENROUTE',
  2: 'DELIVRD',
  3: 'EXPIRED',
  4: 'DELETED',
  5: 'UNDELIV',
  6: 'ACCEPTD',
  7: 'UNKNOWN',
  8: 'REJECTD',
}

/**
 * Reads a receipt from the deliver_sm's `receipted_message_id` and `message_state` TLVs and its text
 * (`id:… sub:… dlvrd:… submit date:YYMMDDhhmm done date:YYMMDDhhmm stat:DELIVRD err:000 text:…`,
 * SMPP 3.4 Appendix B). The TLVs win where both are given. Null when no id can be found.
 */
export function parseReceipt(
  text: string,
  tlv: { receiptedMessageId?: unknown; messageState?: unknown; networkErrorCode?: unknown },
): SmppReceipt | null {
  const field = (name: string) => new RegExp(`(?:^|\\s)${name}:(\\S*)`, 'i').exec(text)?.[1]
  const smscMessageId = typeof tlv.receiptedMessageId === 'string' && tlv.receiptedMessageId ? tlv.receiptedMessageId : field('id')
  const stat = field('stat') || (typeof tlv.messageState === 'number' ? MESSAGE_STATES[tlv.messageState] : undefined)
  if (!smscMessageId || !stat) return null
  const done = /done date:(\d{10}(?:\d{2})?)/i.exec(text)?.[1]
  return { smscMessageId, stat: stat.toUpperCase(), errorCode: field('err') ?? null, doneAt: done ? smppDate(done) : null }
}

/** YYMMDDhhmm[ss], read as UTC (receipts carry no zone; docs/sms.md). */
function smppDate(value: string): Date | null {
  const [yy, mm, dd, hh, mi, ss] = [0, 2, 4, 6, 8, 10].map((i) => Number(value.slice(i, i + 2) || '0'))
  const date = new Date(Date.UTC(2000 + yy!, mm! - 1, dd!, hh!, mi!, ss!))
  return Number.isNaN(date.getTime()) ? null : date
}
