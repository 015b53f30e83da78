// SMS page counting (3GPP TS 23.038): GSM-7 when every character is in the default alphabet or its
// extension table (extension characters take two septets), UCS-2 otherwise.
const GSM_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà'
const GSM_EXTENSION = '\f^{}\\[~]|€'

const basic = new Set(GSM_BASIC)
const extension = new Set(GSM_EXTENSION)

export type Encoding = 'GSM_7' | 'UCS_2'

export interface Segmentation {
  encoding: Encoding
  /** Septets (GSM-7) or UTF-16 code units (UCS-2). */
  units: number
  pages: number
}

export const MAX_PAGES = 10

export function segment(text: string): Segmentation {
  const chars = [...text]
  if (chars.every((c) => basic.has(c) || extension.has(c))) {
    const widths = chars.map((c) => (extension.has(c) ? 2 : 1))
    return { encoding: 'GSM_7', ...pack(widths, 160, 153) }
  }
  return {
    encoding: 'UCS_2',
    ...pack(
      chars.map((c) => c.length),
      70,
      67,
    ),
  }
}

/** Fills pages greedily without splitting an escape pair or a surrogate pair across two pages. */
function pack(widths: number[], single: number, multi: number) {
  const units = widths.reduce((a, w) => a + w, 0)
  if (units <= single) return { units, pages: units === 0 ? 0 : 1 }
  let pages = 1
  let used = 0
  for (const w of widths) {
    if (used + w > multi) {
      pages++
      used = 0
    }
    used += w
  }
  return { units, pages }
}

/**
 * The texts of the pages `segment` counts, in order: the same greedy fill, so a connector sends
 * exactly as many parts as were charged. One page (the whole text) when it fits in one.
 */
export function splitPages(text: string): string[] {
  const seg = segment(text)
  if (seg.pages <= 1) return [text]
  const multi = seg.encoding === 'GSM_7' ? 153 : 67
  const width = seg.encoding === 'GSM_7' ? (c: string) => (extension.has(c) ? 2 : 1) : (c: string) => c.length
  const pages: string[] = []
  let current = ''
  let used = 0
  for (const c of text) {
    const w = width(c)
    if (used + w > multi) {
      pages.push(current)
      current = ''
      used = 0
    }
    current += c
    used += w
  }
  pages.push(current)
  return pages
}
