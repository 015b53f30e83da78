import { describe, expect, it } from 'vitest'
import { segment } from '../src/sms/encoding.js'
import { encodeGsm7 } from '../src/sms/smpp/gsm7.js'
import { formatCredits, parseCredits } from '../src/sms/money.js'
import { reportTime } from '../src/sms/report-time.js'
import { nextAttemptAt, parseRetryAfter, RETRY_DELAYS_MS } from '../src/webhooks/retry-schedule.js'
import { mapCarrierStatus } from '../src/sms/delivery-status.js'
import { isPublicAddress } from '../src/webhooks/ssrf-guard.js'

describe('SMS pages', () => {
  it.each([
    ['', 'GSM_7', 0],
    ['a'.repeat(160), 'GSM_7', 1],
    ['a'.repeat(161), 'GSM_7', 2],
    ['a'.repeat(306), 'GSM_7', 2],
    ['a'.repeat(307), 'GSM_7', 3],
    ['€'.repeat(80), 'GSM_7', 1],
    ['€'.repeat(81), 'GSM_7', 2],
    ['Ä@£ñ'.repeat(40), 'GSM_7', 1],
    ['ł'.repeat(70), 'UCS_2', 1],
    ['ł'.repeat(71), 'UCS_2', 2],
    ['ł'.repeat(134), 'UCS_2', 2],
    ['ł'.repeat(135), 'UCS_2', 3],
  ] as const)('%#: %s chars -> %s, %i pages', (text, encoding, pages) => {
    expect(segment(text)).toMatchObject({ encoding, pages })
  })

  it('does not split an escape pair or a surrogate pair across pages', () => {
    // 152 septets then a 2-septet € would straddle the 153-septet boundary: it moves to page 2.
    expect(segment('a'.repeat(152) + '€' + 'a'.repeat(152))).toMatchObject({ units: 306, pages: 3 })
    expect(segment('ł'.repeat(66) + '😀' + 'ł'.repeat(66))).toMatchObject({ encoding: 'UCS_2', units: 134, pages: 3 })
  })
})

describe('GSM-7 septets for SMPP (data_coding 0, one a byte)', () => {
  it.each([
    // Characters coded as in ASCII: their bytes as they are.
    ['Hello, world! 100% (ok?)\r\n', [...Buffer.from('Hello, world! 100% (ok?)\r\n', 'latin1')]],
    // ASCII characters coded otherwise, beside plain ones: the table's codes.
    ['a@b$c_d', [0x61, 0x00, 0x62, 0x02, 0x63, 0x11, 0x64]],
    ['x[y]~', [0x78, 0x1b, 0x3c, 0x79, 0x1b, 0x3e, 0x1b, 0x3d]],
    ['{}|^\\', [0x1b, 0x28, 0x1b, 0x29, 0x1b, 0x40, 0x1b, 0x14, 0x1b, 0x2f]],
    // Beyond ASCII.
    ['Ä£€ é', [0x5b, 0x01, 0x1b, 0x65, 0x20, 0x05]],
    ['', []],
  ])('%j', (text, septets) => {
    expect([...encodeGsm7(text)]).toEqual(septets)
  })

  it('refuses a character outside GSM-7, also after plain ones', () => {
    expect(() => encodeGsm7('plain text, then ł')).toThrow('not a GSM-7 character')
  })
})

describe('money, times and statuses', () => {
  it('formats and parses credits exactly', () => {
    expect(formatCredits(8000n)).toBe('0.8000')
    expect(formatCredits(123456789n)).toBe('12345.6789')
    expect(formatCredits(-5n)).toBe('-0.0005')
    expect(parseCredits('1.5')).toBe(15000n)
    expect(parseCredits('0.0001')).toBe(1n)
    expect(parseCredits('1.23456')).toBeNull()
    expect(parseCredits('-1')).toBeNull()
    expect(parseCredits('1e3')).toBeNull()
  })

  it('prints report times in the account time zone', () => {
    const at = new Date('2026-03-08T06:59:00Z')
    expect(reportTime(at, 'UTC')).toBe('2026-03-08 06:59 AM')
    expect(reportTime(at, 'Africa/Nairobi')).toBe('2026-03-08 09:59 AM')
    expect(reportTime(at, 'America/New_York')).toBe('2026-03-08 01:59 AM')
    expect(reportTime(new Date('2026-03-08T12:00:00Z'), 'UTC')).toBe('2026-03-08 12:00 PM')
    expect(reportTime(new Date('2026-03-08T00:05:00Z'), 'UTC')).toBe('2026-03-08 12:05 AM')
  })

  it('maps raw carrier statuses onto the ten codes and refuses unknown ones', () => {
    expect(['DELIVRD', 'UNDELIV', 'EXPIRED', 'REJECTD', 'UNKNOWN', 'ACCEPTD', 'DELETED', 'ENROUTE'].map(mapCarrierStatus)).toEqual([
      'DELIVRD',
      'UNDELIV',
      'EXPIRED',
      'REJECTD',
      'UNKNOWN',
      'SENT',
      'FAILED',
      'SENT',
    ])
    expect(mapCarrierStatus(' delivrd ')).toBe('DELIVRD')
    expect(() => mapCarrierStatus('WHATEVER')).toThrow(/unknown carrier status/)
  })
})

describe('webhook retry schedule', () => {
  const now = new Date('2026-01-01T00:00:00Z')
  it('waits 0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then gives up', () => {
    const exact = RETRY_DELAYS_MS.map((_, failures) => nextAttemptAt(failures, now, () => 0.5)!.getTime() - now.getTime())
    expect(exact).toEqual([0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000])
    expect(nextAttemptAt(8, now)).toBeNull()
  })
  it('jitters by at most 10 % and treats Retry-After as a floor', () => {
    expect(nextAttemptAt(2, now, () => 0)!.getTime() - now.getTime()).toBe(270_000)
    expect(nextAttemptAt(2, now, () => 1)!.getTime() - now.getTime()).toBe(330_000)
    expect(nextAttemptAt(1, now, () => 0.5, 120_000)!.getTime() - now.getTime()).toBe(120_000)
    expect(nextAttemptAt(3, now, () => 0.5, 1_000)!.getTime() - now.getTime()).toBe(1_800_000)
    expect(parseRetryAfter('120', now)).toBe(120_000)
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60_000)
    expect(parseRetryAfter('soon', now)).toBe(0)
  })
})

describe('SSRF guard', () => {
  it.each([
    ['8.8.8.8', true],
    ['2606:4700:4700::1111', true],
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['172.20.0.1', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['::1', false],
    ['fe80::1', false],
    ['fd00::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:8.8.8.8', true],
  ])('%s public: %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected)
  })
})
