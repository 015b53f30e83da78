/**
 * Lower-cases text for the stored search columns and for search terms alike. Prisma's `contains`
 * becomes LIKE '%term%' without escaping, so LIKE's special characters (% _ and PostgreSQL's \)
 * are swapped for private-use characters on both sides: a search for "%" then matches only a "%".
 */
export function searchKey(text: string): string {
  return text.toLowerCase().replace(/[%_\\]/g, (c) => SWAP[c]!)
}

const SWAP: Record<string, string> = { '%': '\uE000', _: '\uE001', '\\': '\uE002' }
