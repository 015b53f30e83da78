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
