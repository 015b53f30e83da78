// GSM 03.38 default alphabet and extension table, one septet per octet (data_coding 0, unpacked, as
// SMPP carries it). Only characters `segment` counted as GSM-7 reach here.
const BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà'
const EXTENSION: Record<string, number> = {
  '\f': 0x0a,
  '^': 0x14,
  '{': 0x28,
  '}': 0x29,
  '\\': 0x2f,
  '[': 0x3c,
  '~': 0x3d,
  ']': 0x3e,
  '|': 0x40,
  '€': 0x65,
}
const CODES = new Map([...BASIC].map((c, i) => [c, i]))

/**
 * Text whose every character has the same code in GSM-7 as in ASCII (letters, digits, space, most
 * punctuation, CR and LF; not `@ $ _` nor the extension's `[ ] { } \\ ^ ~ |`): its Latin-1 bytes are its septets.
 */
const SAME_AS_ASCII = /^[\n\r !"#%-?A-Za-z]*$/

export function encodeGsm7(text: string): Buffer {
  if (SAME_AS_ASCII.test(text)) return Buffer.from(text, 'latin1')
  const out: number[] = []
  for (const c of text) {
    const code = CODES.get(c)
    if (code !== undefined) out.push(code)
    else if (EXTENSION[c] !== undefined) out.push(0x1b, EXTENSION[c])
    else throw new Error(`not a GSM-7 character: ${JSON.stringify(c)}`)
  }
  return Buffer.from(out)
}

export function encodeUcs2(text: string): Buffer {
  const le = Buffer.from(text, 'utf16le')
  return le.swap16()
}
