// XMLTV (xmltv.dtd) for one channel's guide. Times are `YYYYMMDDHHMMSS +ZZZZ` in the channel's
// offset at that instant, so a DST change shows as a change of offset, never as a gap or overlap.
import { localParts, offsetMinutes } from './zoned-time.js'
import { LINE_BREAKS, guideUrl, printable, xmltvChannelId, type GuideAiring, type GuideChannel } from './guide-types.js'

const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0')

/** `20260308030000 -0400` */
export function xmltvTime(at: Date, timeZone: string): string {
  const p = localParts(at, timeZone)
  const off = offsetMinutes(at, timeZone)
  return `${pad(p.year, 4)}${pad(p.month)}${pad(p.day)}${pad(p.hour)}${pad(p.minute)}${pad(p.second)} ${off < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(off) / 60))}${pad(Math.abs(off) % 60)}`
}

// A line break of the data is written as the character reference &#10;: XML readers still read a
// newline, and the document itself holds no line break but those between its elements.
const escape = (text: string) =>
  printable(text.replace(LINE_BREAKS, '\n')).replace(
    /[&<>"'\n]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;', '\n': '&#10;' })[c]!,
  )

const PROGRAM_CATEGORY: Record<string, string> = { live: 'Live', on_demand: 'On demand' }

/**
 * One `<programme>` per airing that is not cancelled (XMLTV cannot mark a cancellation; the
 * iCalendar feed can). Empty texts are left out: the DTD wants text in every element written.
 */
export function buildXmltv(channel: GuideChannel, airings: GuideAiring[], options: { publicBaseUrl: string; generator: string }): string {
  const id = escape(xmltvChannelId(channel.slug, options.publicBaseUrl))
  const tz = channel.timezone
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE tv SYSTEM "xmltv.dtd">',
    `<tv generator-info-name="${escape(options.generator)}" source-info-name="${escape(channel.name)}">`,
    `  <channel id="${id}">`,
    `    <display-name>${escape(channel.name)}</display-name>`,
    ...(guideUrl(channel.iconUrl) ? [`    <icon src="${escape(channel.iconUrl!)}"/>`] : []),
    '  </channel>',
  ]
  for (const a of airings) {
    if (a.cancelled) continue
    const desc = a.episodeSynopsis?.trim() || a.programSynopsis.trim()
    lines.push(
      `  <programme start="${xmltvTime(a.startsAt, tz)}" stop="${xmltvTime(a.endsAt, tz)}" channel="${id}">`,
      `    <title>${escape(a.programName)}</title>`,
      ...(a.episodeName.trim() ? [`    <sub-title>${escape(a.episodeName)}</sub-title>`] : []),
      ...(desc ? [`    <desc>${escape(desc)}</desc>`] : []),
      ...(PROGRAM_CATEGORY[a.programType] ? [`    <category lang="en">${PROGRAM_CATEGORY[a.programType]}</category>`] : []),
      ...(guideUrl(a.bannerUrl) ? [`    <icon src="${escape(a.bannerUrl!)}"/>`] : []),
      // xmltv_ns is zero-based `season.episode.part`; there are no seasons, so season is left empty.
      ...(a.episodeNumber >= 1 ? [`    <episode-num system="xmltv_ns">.${a.episodeNumber - 1}.</episode-num>`] : []),
      `    <episode-num system="onscreen">E${a.episodeNumber}</episode-num>`,
      '  </programme>',
    )
  }
  lines.push('</tv>', '')
  return lines.join('\n')
}
