import { describe, expect, it } from 'vitest'
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max'
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

  it('answers as isValid() and getType() asked one after the other (the rule as first written), over thousands of numbers', () => {
    const notMobile = new Set(['FIXED_LINE', 'TOLL_FREE', 'PREMIUM_RATE', 'SHARED_COST', 'VOIP'])
    const valid = (text: string, country?: string) => {
      const parsed = parsePhoneNumberFromString(text, country as CountryCode)
      return parsed?.isValid() ? parsed : undefined
    }
    const reference = (input: string, country: string) => {
      const text = input.trim()
      if (!text || text.length > 32) return null
      const parsed = valid(text, country) ?? (text.startsWith('00') ? valid(`+${text.slice(2)}`) : undefined)
      if (!parsed) return null
      const type = parsed.getType()
      return type && notMobile.has(type) ? null : parsed.number
    }
    // Digits from a fixed seed after prefixes of mobiles, fixed lines, toll-free and premium
    // numbers, in national, E.164 and 00 forms, of lengths right and wrong, in several regions.
    let seed = 42
    const digit = () => ((seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff) >> 16) % 10
    const digits = (n: number) => Array.from({ length: n }, digit).join('')
    const templates: [country: string, prefix: string, length: number][] = [
      ['KE', '07', 8],
      ['KE', '01', 8],
      ['KE', '020', 7],
      ['KE', '0800', 6],
      ['KE', '0900', 6],
      ['KE', '+2547', 8],
      ['KE', '002547', 8],
      ['KE', '0002547', 8],
      ['US', '+1', 10],
      ['US', '0112547', 8],
      ['US', '1800', 7],
      ['GB', '07', 9],
      ['GB', '020', 8],
      ['GB', '0800', 7],
      ['GB', '09', 9],
      ['DE', '015', 9],
      ['DE', '030', 8],
      ['NG', '080', 8],
      ['IN', '9', 9],
      ['FR', '06', 8],
      ['FR', '01', 8],
      ['UG', '07', 8],
      ['TZ', '07', 8],
    ]
    const answers = { accepted: 0, notValid: 0, notMobile: 0 }
    for (let i = 0; i < 4000; i++) {
      const [country, prefix, length] = templates[i % templates.length]!
      const input = `${prefix}${digits(length + ((i >> 5) % 3) - 1)}`
      const expected = reference(input, country)
      expect(normalizeMobile(input, country), `${input} in ${country}`).toBe(expected)
      if (expected !== null) answers.accepted += 1
      else answers[valid(input.trim(), country) ? 'notMobile' : 'notValid'] += 1
    }
    // Each answer many times: accepted, refused as no valid number, refused as no mobile.
    expect(answers.accepted).toBeGreaterThan(500)
    expect(answers.notValid).toBeGreaterThan(500)
    expect(answers.notMobile).toBeGreaterThan(200)
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
