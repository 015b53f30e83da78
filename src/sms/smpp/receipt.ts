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

/**
 * The other spellings of an SMSC message id that name the same message, for a receipt whose id is
 * written in another base than the submit_sm_resp's (Kannel's `msg-id-type`, Jasmin's `dlr_msgid`):
 * an id of decimal digits read as a number, in hex; an id of hex digits read as a hex number, in
 * decimal. Numbers have no one spelling, so each comes unpadded and zero-padded to the lengths SMSCs
 * use (hex: lower and upper case, up to 16 digits; decimal: up to 20). Not the id itself, which is
 * tried first: an exact match always wins. Empty for an id that is no number in either base.
 */
export function otherSpellings(id: string): string[] {
  const spellings = new Set<string>()
  const padded = (digits: string, upTo: number) => {
    for (let width = digits.length; width <= Math.max(digits.length, upTo); width++) spellings.add(digits.padStart(width, '0'))
  }
  // 64 bits at most (20 decimal digits, 16 hex): longer ids are names, not numbers.
  if (/^\d{1,20}$/.test(id)) {
    const hex = BigInt(id).toString(16)
    padded(hex, 16)
    padded(hex.toUpperCase(), 16)
  }
  if (/^[0-9a-f]{1,16}$/i.test(id)) padded(BigInt(`0x${id}`).toString(10), 20)
  spellings.delete(id)
  return [...spellings]
}
