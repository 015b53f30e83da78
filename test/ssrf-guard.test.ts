import { describe, expect, it } from 'vitest'
import { assertWebhookUrl, isPublicAddress, refusedRange } from '../src/webhooks/ssrf-guard.js'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'

// Every URL here is refused at registration unless WEBHOOK_ALLOW_PRIVATE_NETWORKS=true.
const refused: [url: string, why: string][] = [
  ['http://127.0.0.1/', 'loopback'],
  ['http://[::1]/', 'loopback'],
  ['http://[::127.0.0.1]/', 'ipv4Compatible'], // IPv4-compatible IPv6, WHATWG writes it ::7f00:1
  ['http://[::8.8.8.8]/', 'ipv4Compatible'],
  ['http://[::ffff:127.0.0.1]/', 'loopback'], // IPv4-mapped
  ['http://[::ffff:10.0.0.1]/', 'private'],
  ['http://[64:ff9b::127.0.0.1]/', 'nat64 loopback'],
  ['http://[64:ff9b::10.1.2.3]/', 'nat64 private'],
  ['http://[64:ff9b:1::808:808]/', 'rfc6052'], // local-use NAT64 prefix
  ['http://[2002:7f00:1::1]/', '6to4 loopback'],
  ['http://[2002:c0a8:101::1]/', '6to4 private'],
  ['http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', 'teredo'],
  ['http://0.0.0.0/', 'unspecified'],
  ['http://0/', 'unspecified'],
  ['http://[::]/', 'unspecified'],
  ['http://2130706433/', 'loopback'], // decimal
  ['http://0x7f.1/', 'loopback'], // hex, short form
  ['http://017700000001/', 'loopback'], // octal
  ['http://127.1/', 'loopback'],
  ['http://10.0.0.1/', 'private'],
  ['http://172.16.5.4/', 'private'],
  ['http://192.168.1.1/', 'private'],
  ['http://169.254.169.254/latest/meta-data/', 'linkLocal'],
  ['http://[fe80::1]/', 'linkLocal'],
  ['http://[fc00::1]/', 'uniqueLocal'],
  ['http://[fd12:3456::1]/', 'uniqueLocal'],
  ['http://[fec0::1]/', 'deprecatedSiteLocal'],
  ['http://100.64.0.1/', 'carrierGradeNat'],
  ['http://100.127.255.254/', 'carrierGradeNat'],
  ['http://224.0.0.1/', 'multicast'],
  ['http://[ff02::1]/', 'multicast'],
  ['http://255.255.255.255/', 'broadcast'],
  ['http://240.0.0.1/', 'reserved'],
  ['http://198.18.0.1/', 'reserved'], // benchmarking 198.18/15
  ['http://198.19.255.1/', 'reserved'],
  ['http://192.0.2.1/', 'reserved'], // TEST-NET-1
  ['http://198.51.100.1/', 'reserved'], // TEST-NET-2
  ['http://203.0.113.1/', 'reserved'], // TEST-NET-3
  ['http://192.0.0.8/', 'reserved'], // IETF protocol assignments
  ['http://[2001:db8::1]/', 'reserved'], // documentation
  ['http://[3fff::1]/', 'reserved'], // documentation (RFC 9637)
  ['http://[2001:2::1]/', 'benchmarking'],
  ['http://[100::1]/', 'discard'],
  ['http://[4000::1]/', 'unallocated'],
]

const accepted = [
  'http://8.8.8.8/',
  'https://1.1.1.1:8443/hook',
  'http://[2606:4700:4700::1111]/',
  'http://[::ffff:8.8.8.8]/', // IPv4-mapped public
  'http://[64:ff9b::8.8.8.8]/', // DNS64 answer for a public IPv4-only host
  'http://[2002:808:808::1]/', // 6to4 through a public relay address
]

describe('webhook address checks', () => {
  it.each(refused)('refuses %s (%s)', async (url, why) => {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '')
    expect(refusedRange(host)).toBe(why)
    expect(isPublicAddress(host)).toBe(false)
    await expect(assertWebhookUrl(url, false)).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      message: 'url must resolve to a public address',
      details: [{ field: 'url' }],
    })
  })

  it.each(refused)('accepts %s when private networks are allowed', async (url) => {
    await expect(assertWebhookUrl(url, true)).resolves.toBeInstanceOf(URL)
  })

  it.each(accepted)('accepts %s', async (url) => {
    await expect(assertWebhookUrl(url, false)).resolves.toBeInstanceOf(URL)
  })

  it('answers a name that resolves to a private address and a name that does not resolve alike, naming no address', async () => {
    for (const url of ['http://localhost/hook', 'http://no-such-host.invalid/hook']) {
      await expect(assertWebhookUrl(url, false), url).rejects.toMatchObject({
        code: 'VALIDATION_FAILED',
        message: 'url must resolve to a public address',
        details: [{ field: 'url', message: 'url must resolve to a public address' }],
      })
    }
  })

  it('refuses what is not an address', () => {
    expect(refusedRange('example.com')).toBe('invalid')
    expect(refusedRange('127.1')).toBe('invalid') // only canonical forms reach it: URL parsing normalises
  })

  it('stores the normalised host, so delivery connects to the address that was checked', async () => {
    expect((await assertWebhookUrl('http://0x8.0x8.0x8.0x8/x', false)).toString()).toBe('http://8.8.8.8/x')
  })
})

const SET = `mutation($url: String!) { setWebhook(url: $url) { webhook { url } } }`

describe.each(targets)('setWebhook address checks on $name', (target) => {
  const kit = useKit(target)

  it('refuses every non-public address over GraphQL and stores nothing', async () => {
    const s = await kit.seed().account()
    for (const [url] of refused) {
      const res = await kit.graphql(SET, { url }, s.key)
      expect(res.errors?.[0]?.extensions, url).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'url' }] })
      expect(res.errors?.[0]?.message, url).toBe('url must resolve to a public address')
    }
    expect(await kit.db.webhookEndpoint.count({ where: { accountId: s.account.id } })).toBe(0)
    const ok = await kit.gql(SET, { url: 'http://[64:ff9b::8.8.8.8]/hook' }, s.key)
    expect(ok.setWebhook.webhook.url).toBe('http://[64:ff9b::808:808]/hook')
  })
})

describe.each(targets)('setWebhook with private networks allowed on $name', (target) => {
  const kit = useKit(target, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } })

  it('registers a loopback receiver', async () => {
    const s = await kit.seed().account()
    const ok = await kit.gql(SET, { url: 'http://[::127.0.0.1]:9/' }, s.key)
    expect(ok.setWebhook.webhook.url).toBe('http://[::7f00:1]:9/')
  })
})
