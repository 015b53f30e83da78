import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'
import { AppError } from '../core/errors.js'

/**
 * Why an address is refused, or null when it is public unicast. An allow-list: ipaddr.js names every
 * special-purpose range (loopback, private, link-local, CGNAT, multicast, broadcast, benchmarking,
 * documentation, reserved, ...) and only what it calls `unicast` passes. IPv4-mapped IPv6 is
 * unwrapped first; prefixes that embed an IPv4 address are judged by the address they embed.
 */
export function refusedRange(address: string): string | null {
  if (!isIP(address)) return 'invalid'
  const parsed = ipaddr.process(address)
  const range = parsed.range()
  if (parsed.kind() === 'ipv4') return range === 'unicast' ? null : range
  const v6 = parsed as ipaddr.IPv6
  const parts = v6.parts
  // NAT64 well-known prefix (64:ff9b::/96): a DNS64 resolver answers this for every IPv4-only host,
  // so it is judged by the IPv4 address in its last 32 bits. The local-use prefix 64:ff9b:1::/48 maps
  // however its operator chose and is refused.
  if (range === 'rfc6052') return v6.match(ipaddr.IPv6.parse('64:ff9b::'), 96) ? embedded(parts[6]!, parts[7]!, 'nat64') : range
  // 6to4 (2002::/16) carries the relay's IPv4 address in bits 16-47.
  if (range === '6to4') return embedded(parts[1]!, parts[2]!, '6to4')
  if (range !== 'unicast') return range
  // ipaddr.js calls everything it has no name for unicast, including IPv4-compatible addresses
  // (::127.0.0.1, written ::7f00:1) and unallocated space: only global unicast 2000::/3 passes.
  if (!v6.match(ipaddr.IPv6.parse('2000::'), 3)) return v6.match(ipaddr.IPv6.parse('::'), 96) ? 'ipv4Compatible' : 'unallocated'
  return null
}

function embedded(high: number, low: number, via: string): string | null {
  const v4 = new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff])
  return v4.range() === 'unicast' ? null : `${via} ${v4.range()}`
}

export function isPublicAddress(address: string): boolean {
  return refusedRange(address) === null
}

/**
 * The one refusal for an address that is not public, or a name that does not resolve: it never says
 * what a name resolved to, so registering webhooks (or reading their errors) cannot be used to ask
 * the service's DNS about internal names.
 */
export const NOT_PUBLIC = 'url must resolve to a public address'

export class PrivateAddressError extends Error {
  constructor() {
    super(NOT_PUBLIC)
  }
}

/**
 * A dns.lookup for the HTTP client that refuses non-public addresses: checked on the address the
 * connection will actually use, so a DNS answer that changes after registration cannot slip by.
 */
export function guardedLookup(allowPrivate: boolean) {
  // any: dns.lookup's overloads (options or not, one address or all) are what got may call.
  // oxlint-disable-next-line typescript/no-explicit-any
  return ((hostname: string, options: any, callback: any) => {
    if (typeof options === 'function') {
      callback = options
      options = {}
    }
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(allowPrivate ? error : new PrivateAddressError())
      const refused = allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address))
      if (refused) return callback(new PrivateAddressError())
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
          dnsLookup(host, { all: true }, (error, found) => (error ? reject(invalid(NOT_PUBLIC)) : resolve(found.map((a) => a.address)))),
        )
    if (addresses.some((a) => !isPublicAddress(a))) throw invalid(NOT_PUBLIC)
  }
  return url
}

const invalid = (message: string) => new AppError('VALIDATION_FAILED', message, [{ field: 'url', message }])
