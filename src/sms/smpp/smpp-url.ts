/** Where and as whom to bind, from SMPP_URL (smpp://SYSTEM_ID:PASSWORD@HOST:PORT, smpps:// for TLS). */
export interface SmppTarget {
  host: string
  port: number
  tls: boolean
  systemId: string
  password: string
}

export function parseSmppUrl(value: string): SmppTarget {
  const url = new URL(value)
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: Number(url.port),
    tls: url.protocol === 'smpps:',
    systemId: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
  }
}
