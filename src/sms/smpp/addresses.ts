/** SMPP 3.4 type of number and numbering plan of an address (5.2.5, 5.2.6). */
export interface SmppAddress {
  ton: number
  npi: number
  addr: string
}

const TON_UNKNOWN = 0
const TON_INTERNATIONAL = 1
const TON_NETWORK_SPECIFIC = 3
const TON_ALPHANUMERIC = 5
const NPI_UNKNOWN = 0
const NPI_ISDN = 1

/**
 * The sender: letters make an alphanumeric id (TON 5, NPI 0); `+` and digits an international
 * number (TON 1, NPI 1, sent without the `+`); up to 8 digits a short code (TON 3, NPI 0); longer
 * digits without `+` are a number the SMSC reads in its own plan (TON 0, NPI 1).
 */
export function senderAddress(sender: string): SmppAddress {
  if (/^\+\d+$/.test(sender)) return { ton: TON_INTERNATIONAL, npi: NPI_ISDN, addr: sender.slice(1) }
  if (/^\d{1,8}$/.test(sender)) return { ton: TON_NETWORK_SPECIFIC, npi: NPI_UNKNOWN, addr: sender }
  if (/^\d+$/.test(sender)) return { ton: TON_UNKNOWN, npi: NPI_ISDN, addr: sender }
  return { ton: TON_ALPHANUMERIC, npi: NPI_UNKNOWN, addr: sender }
}

/** The recipient: always E.164 here (TON 1, NPI 1, without the `+`). */
export function destinationAddress(e164: string): SmppAddress {
  return { ton: TON_INTERNATIONAL, npi: NPI_ISDN, addr: e164.replace(/^\+/, '') }
}

/** An address received from the SMSC, as this service writes numbers: `+` for international ones. */
export function receivedAddress(addr: string, ton: number): string {
  const digits = addr.trim()
  return ton === TON_INTERNATIONAL && /^\d+$/.test(digits) ? `+${digits}` : digits
}
