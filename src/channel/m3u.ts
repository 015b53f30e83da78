// The M3U playlist of channels with a live stream, in the extended form IPTV players read
// (Kodi PVR IPTV Simple, Jellyfin, TiviMate, xTeVe/Threadfin): tvg-id matches the XMLTV channel id.
import { printable, xmltvChannelId, type GuideChannel } from './guide-types.js'

/** M3U has no escaping: attribute values lose double quotes, every value loses line breaks. */
const attr = (text: string) => printable(text).replace(/[\r\n]+/g, ' ').replace(/"/g, "'")
const line = (text: string) => printable(text).replace(/[\r\n]+/g, ' ')

export const M3U_GROUP = 'Channels'

export function buildM3u(channels: GuideChannel[], options: { publicBaseUrl: string }): string {
  const lines = ['#EXTM3U']
  for (const c of channels) {
    if (!c.streamUrl) continue
    const attrs = [
      `tvg-id="${attr(xmltvChannelId(c.slug, options.publicBaseUrl))}"`,
      `tvg-name="${attr(c.name)}"`,
      ...(c.iconUrl ? [`tvg-logo="${attr(c.iconUrl)}"`] : []),
      `group-title="${M3U_GROUP}"`,
    ]
    lines.push(`#EXTINF:-1 ${attrs.join(' ')},${line(c.name)}`, line(c.streamUrl))
  }
  return lines.join('\n') + '\n'
}
