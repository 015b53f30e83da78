import { describe, expect, it } from 'vitest'
import { normalizeMobile, simKey } from '../src/messaging/mobile.js'
import { SANDBOX_MAGIC_NUMBERS } from '../src/sms/sandbox-gateway.js'

const table: [input: string, country: string, expected: string | null, why: string][] = [
  ['000 254 712 345 678', 'KE', '+254712345678', "Kenya's own international prefix 000"],
  ['00254712345678', 'KE', '+254712345678', '00 as the international prefix, read when the region parse fails'],
  ['00 44 7911 123456', 'KE', '+447911123456', 'a foreign mobile behind 00'],
  ['011 254 712 345 678', 'US', '+254712345678', 'the US international prefix'],
  ['+254712345678', 'KE', '+254712345678', 'E.164'],
  ['+254 712-345-678', 'US', '+254712345678', 'E.164 with separators, any region'],
  ['0712345678', 'KE', '+254712345678', 'national, read in the default region'],
  ['0712 345 678', 'KE', '+254712345678', 'national with spaces'],
  ['+254 20 2222222', 'KE', null, 'Kenyan fixed line (Nairobi)'],
  ['020 2222222', 'KE', null, 'Kenyan fixed line, national form'],
  ['+44 800 123 4567', 'KE', null, 'UK freephone (TOLL_FREE)'],
  ['+44 9098 790000', 'KE', null, 'UK premium rate'],
  ['+44 20 7946 0958', 'KE', null, 'London fixed line'],
  ['+44 56 1234 5678', 'KE', null, 'UK VoIP'],
  ['+1 212 555 0100', 'KE', '+12125550100', 'US number: FIXED_LINE_OR_MOBILE is accepted'],
  ['+44 7911 123456', 'KE', '+447911123456', 'UK mobile'],
  ['+49 1511 2345678', 'KE', '+4915112345678', 'German mobile'],
  ['nobody', 'KE', null, 'garbage'],
  ['', 'KE', null, 'empty'],
  ['12', 'KE', null, 'too short'],
  ['+254 712 345 678 999 999 999 999 999', 'KE', null, 'too long'],
  ['+999 712345678', 'KE', null, 'no such country code'],
  ['00000000000000', 'KE', null, 'zeros'],
]

describe('mobile numbers', () => {
  it.each(table)('%s in %s gives %s (%s)', (input, country, expected) => {
    expect(normalizeMobile(input, country)).toBe(expected)
  })

  it('keeps the sandbox magic numbers valid', () => {
    const magic = Object.keys(SANDBOX_MAGIC_NUMBERS)
    expect(magic.length).toBeGreaterThan(0)
    for (const number of magic) expect(normalizeMobile(number, 'KE'), number).toBe(number)
  })

  it('keys hosted SIMs by E.164 whatever the number type, short codes by digits', () => {
    expect(simKey('000 254 712 345 678', 'KE')).toBe('+254712345678')
    expect(simKey('020 2222222', 'KE')).toBe('+254202222222')
    expect(simKey('22 384', 'KE')).toBe('22384')
  })
})
