// The M3U playlist of channels with a live stream, in the extended form IPTV players read
// (Kodi PVR IPTV Simple, Jellyfin, TiviMate, xTeVe/Threadfin): tvg-id matches the XMLTV channel id.
import { guideUrl, oneLine, xmltvChannelId, type GuideChannel } from './guide-types.js'

/** M3U has no escaping: attribute values lose double quotes, every value loses line breaks of every kind. */
const attr = (text: string) => oneLine(text).replace(/"/g, "'")
const line = (text: string) => oneLine(text)

export const M3U_GROUP = 'Channels'

export function buildM3u(channels: GuideChannel[], options: { publicBaseUrl: string }): string {
  const lines = ['#EXTM3U']
  for (const c of channels) {
    // Only http(s) URLs are played or shown: older data may hold anything.
    const stream = guideUrl(c.streamUrl)
    if (!stream) continue
    const logo = guideUrl(c.iconUrl)
    const attrs = [
      `tvg-id="${attr(xmltvChannelId(c.slug, options.publicBaseUrl))}"`,
      `tvg-name="${attr(c.name)}"`,
      ...(logo ? [`tvg-logo="${attr(logo)}"`] : []),
      `group-title="${M3U_GROUP}"`,
    ]
    lines.push(`#EXTINF:-1 ${attrs.join(' ')},${line(c.name)}`, stream)
  }
  return lines.join('\n') + '\n'
}
