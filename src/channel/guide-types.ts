// What the program guides (XMLTV, iCalendar, M3U) are built from: plain data, no database rows.

export interface GuideChannel {
  id: string
  slug: string
  name: string
  timezone: string
  /** The channel's show banner, used as its logo. */
  iconUrl: string | null
  streamUrl: string | null
}

export interface GuideAiring {
  id: number
  startsAt: Date
  endsAt: Date
  cancelled: boolean
  programName: string
  programSynopsis: string
  /** live | on_demand */
  programType: string
  episodeNumber: number
  episodeName: string
  episodeSynopsis: string | null
  /** The episode's banner, else the program's, else the channel's. */
  bannerUrl: string | null
}

/**
 * The XMLTV channel id, also the M3U `tvg-id`: an RFC 2838-style name (`slug.host`) as XMLTV
 * recommends, stable while the slug and the public host are.
 */
export function xmltvChannelId(slug: string, publicBaseUrl: string): string {
  return `${slug}.${new URL(publicBaseUrl).hostname}`
}

/** Text with the characters XML 1.0 and iCalendar cannot carry (C0 controls but tab and newlines, U+FFFE/U+FFFF) removed. */
export const printable = (text: string) => text.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')

/**
 * Every line break a reader may split on: CRLF, CR, LF, VT, FF, NEL (U+0085), LINE SEPARATOR
 * (U+2028), PARAGRAPH SEPARATOR (U+2029). Guides write none of them from data: a reader that splits
 * on any of them must see only the lines the builder wrote.
 */
export const LINE_BREAKS = /\r\n|[\n\r\u000B\u000C\u0085\u2028\u2029]/g

/** Text with each run of line breaks as one space. */
export const oneLine = (text: string) => printable(text.replace(LINE_BREAKS, '\n')).replace(/\n+/g, ' ')

/**
 * A URL a guide may write: http or https, with no whitespace or control character (which a URL
 * parser would drop, and a line-based reader would split on). Anything else, also from data stored
 * before imports checked URLs, is left out.
 */
export function guideUrl(value: string | null | undefined): string | null {
  if (!value || !isWebUrl(value)) return null
  return value
}

/** An absolute http(s) URL without whitespace, controls or line breaks (the import format's URL rule). */
export function isWebUrl(value: string): boolean {
  if (/[\s\u0000-\u001F\u007F-\u009F\u2028\u2029]/.test(value)) return false
  try {
    const url = new URL(value)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}
