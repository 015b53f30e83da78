// Credits are stored as whole ten-thousandths (BigInt) and shown as exact decimal strings.
const SCALE = 10_000n

export function formatCredits(units: bigint): string {
  const sign = units < 0n ? '-' : ''
  const abs = units < 0n ? -units : units
  return `${sign}${abs / SCALE}.${String(abs % SCALE).padStart(4, '0')}`
}

/** "1.5" -> 15000n. At most four decimals; null when not a plain non-negative decimal. */
export function parseCredits(text: string): bigint | null {
  const m = /^(\d{1,12})(?:\.(\d{1,4}))?$/.exec(text.trim())
  if (!m) return null
  return BigInt(m[1]!) * SCALE + BigInt((m[2] ?? '').padEnd(4, '0'))
}
