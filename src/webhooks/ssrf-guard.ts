import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP } from 'node:net'
import { AppError } from '../errors.js'

// Everything that is not a public unicast address.
const blocked = new BlockList()
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, bits, 'ipv4')
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(net, bits, 'ipv6')

export function isPublicAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return !blocked.check(address, 'ipv4')
  if (family !== 6) return false
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return !blocked.check(mapped[1]!, 'ipv4')
  return !blocked.check(address, 'ipv6')
}

export class PrivateAddressError extends Error {
  constructor(host: string, address: string) {
    super(`${host} resolves to ${address}, which is not a public address`)
  }
}

/**
 * A dns.lookup for the HTTP client that refuses non-public addresses: checked on the address the
 * connection will actually use, so a DNS answer that changes after registration cannot slip by.
 */
export function guardedLookup(allowPrivate: boolean) {
  return ((hostname: string, options: any, callback: any) => {
    if (typeof options === 'function') {
      callback = options
      options = {}
    }
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error)
      const refused = allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address))
      if (refused) return callback(new PrivateAddressError(hostname, refused.address))
      if (options.all) return callback(null, addresses)
      callback(null, addresses[0]!.address, addresses[0]!.family)
    })
  }) as typeof dnsLookup
}

/** Checks a webhook URL at registration: http(s), no credentials, and (unless allowed) public. */
export async function assertWebhookUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw invalid('url must be an absolute http or https URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('url must be an absolute http or https URL')
  if (url.username || url.password) throw invalid('url must not carry credentials')
  if (raw.length > 2000) throw invalid('url must be at most 2000 characters')
  if (!allowPrivate) {
    const host = url.hostname.replace(/^\[|\]$/g, '')
    const addresses = isIP(host)
      ? [host]
      : await new Promise<string[]>((resolve, reject) =>
          dnsLookup(host, { all: true }, (error, found) => (error ? reject(invalid(`url host ${host} does not resolve`)) : resolve(found.map((a) => a.address)))),
        )
    const bad = addresses.find((a) => !isPublicAddress(a))
    if (bad) throw invalid(`url resolves to ${bad}, which is not a public address`)
  }
  return url
}

const invalid = (message: string) => new AppError('VALIDATION_FAILED', message, [{ field: 'url', message }])
