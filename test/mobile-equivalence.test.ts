import { describe, expect, it } from 'vitest'
import examples from 'libphonenumber-js/mobile/examples'
import { getCountries, getExampleNumber } from 'libphonenumber-js/max'
import { normalizeMobile, simKey } from '../src/messaging/mobile.js'
import { readNumber } from '../src/messaging/phone-numbers.js'
import { libraryParse, mobileOf } from './kit/library-mobile.js'

/** The reference's normalizeMobile and simKey of one input, from one parse. */
const reference = (input: string, country: string) => {
  const parsed = libraryParse(input, country)
  return { mobile: mobileOf(parsed), simKey: parsed?.number ?? input.replace(/[\s-]/g, '') }
}

// A seeded generator: the same inputs at every run.
function generator(seed: number) {
  let state = seed >>> 0
  const next = () => {
    state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x9e3779b9) >>> 0
    state = (state ^ (state >>> 13)) >>> 0
    return state
  }
  return {
    below: (n: number) => next() % n,
    digits: (n: number) => Array.from({ length: n }, () => String(next() % 10)).join(''),
  }
}

const DEFAULTS = ['KE', 'US', 'GB', 'RU', 'IN', 'NG', 'DE']

function compare(inputs: Iterable<[input: string, country: string]>) {
  const answers = { accepted: 0, refused: 0, checked: 0 }
  const differences: string[] = []
  for (const [input, country] of inputs) {
    const { mobile: expected, simKey: expectedKey } = reference(input, country)
    const actual = normalizeMobile(input, country)
    if (actual !== expected)
      differences.push(`normalizeMobile(${JSON.stringify(input)}, ${country}): ${actual} where the library gives ${expected}`)
    const key = simKey(input, country)
    if (key !== expectedKey) differences.push(`simKey(${JSON.stringify(input)}, ${country}): ${key} where the library gives ${expectedKey}`)
    answers.checked += 1
    answers[expected === null ? 'refused' : 'accepted'] += 1
  }
  return { answers, differences: differences.slice(0, 20) }
}

describe('normalizeMobile against libphonenumber-js itself', () => {
  it("answers as the library for every region's example number in E.164, national, international and 00 forms, whole, cut short and too long", () => {
    const countries = getCountries()
    expect(countries.length).toBeGreaterThan(200)
    const random = generator(7)
    const inputs: [string, string][] = []
    let withExample = 0
    for (const country of countries) {
      const example = getExampleNumber(country, examples)
      if (!example) continue
      withExample += 1
      const national = example.formatNational()
      const nn = example.nationalNumber as string
      const cc = example.countryCallingCode as string
      const forms = [
        example.number,
        example.formatInternational(),
        national,
        nn,
        `00${cc}${nn}`,
        `00 ${cc} ${nn}`,
        `${cc}${nn}`,
        `+${cc}${nn.slice(0, -1)}`,
        `+${cc}${nn}${random.digits(1)}`,
        `${national}${random.digits(2)}`,
        national.slice(0, -2),
        `+${cc} (${nn.slice(0, 3)}) ${nn.slice(3)}`,
        `+${cc}.${nn.slice(0, 2)}-${nn.slice(2)}`,
        // The same leading digits, other endings: other types and invalid numbers of the region.
        `+${cc}${nn.slice(0, 2)}${random.digits(nn.length - 2)}`,
        `+${cc}${nn.slice(0, 1)}${random.digits(nn.length - 1)}`,
        `+${cc}${random.digits(nn.length)}`,
      ]
      for (const form of forms) {
        inputs.push([form, country])
        for (const other of DEFAULTS) inputs.push([form, other])
      }
      // The region's IDD prefix as its own callers dial abroad (KE's 000, the US's 011).
      inputs.push([example.format('IDD', { fromCountry: 'KE' }) ?? example.number, 'KE'])
      inputs.push([example.format('IDD', { fromCountry: 'US' }) ?? example.number, 'US'])
      inputs.push([example.format('IDD', { fromCountry: 'RU' }) ?? example.number, 'RU'])
    }
    expect(withExample).toBeGreaterThan(200)
    const { answers, differences } = compare(inputs)
    expect(differences).toEqual([])
    expect(answers.accepted).toBeGreaterThan(5_000)
    expect(answers.refused).toBeGreaterThan(5_000)
  })

  it('answers as the library over 210,000 seeded digit strings, with and without +, 00 and the national prefix, in seven default regions', () => {
    const random = generator(20261207)
    const separators = ['', '', '', ' ', '-', '.']
    // Half the strings keep the first digits of a region's example (its mobiles' leading digits,
    // so many are valid), half are digits alone; the lengths mostly those of real numbers.
    const starts = getCountries().flatMap((country) => {
      const example = getExampleNumber(country, examples)
      return example ? [{ country, cc: example.countryCallingCode as string, nn: example.nationalNumber as string }] : []
    })
    function* inputs(): Generator<[string, string]> {
      for (let i = 0; i < 210_000; i++) {
        const country = DEFAULTS[i % DEFAULTS.length]!
        const length = random.below(5) < 3 ? 7 + random.below(4) : 1 + random.below(16)
        const shape = random.below(10)
        // The national forms mostly from the default region's own example.
        const start = shape >= 8 && random.below(3) > 0 ? starts.find((s) => s.country === country)! : starts[random.below(starts.length)]!
        const kept = start.nn.slice(0, random.below(4))
        const own = `${kept}${random.digits(Math.max(0, start.nn.length - kept.length + random.below(3) - 1))}`
        let text =
          shape === 0
            ? `+${random.digits(length)}`
            : shape === 1
              ? `00${random.digits(length)}`
              : shape === 2
                ? `0${random.digits(length)}`
                : shape === 3
                  ? random.digits(length)
                  : shape === 4
                    ? `0${random.below(10)}${random.digits(Math.min(length, 11))}`
                    : shape === 5
                      ? `+${start.cc}${own}`
                      : shape === 6
                        ? `00${start.cc}${own}`
                        : shape === 7
                          ? `${start.cc}${own}`
                          : shape === 8
                            ? `0${own}`
                            : own
        if (random.below(4) === 0) {
          const separator = separators[random.below(separators.length)]!
          const at = 1 + random.below(Math.max(1, text.length - 1))
          text = `${text.slice(0, at)}${separator}${text.slice(at)}`
        }
        yield [text, country]
      }
    }
    const { answers, differences } = compare(inputs())
    expect(differences).toEqual([])
    expect(answers.checked).toBe(210_000)
    expect(answers.accepted).toBeGreaterThan(15_000)
    expect(answers.refused).toBeGreaterThan(20_000)
  })

  it('answers as the library for text outside the shapes it reads itself, and for unknown default regions', () => {
    const inputs: [string, string][] = []
    const texts = [
      '+254 712 345 678 ext. 12',
      '0712 345 678 x12',
      '0712-345-678#',
      '(0712) 345 678',
      '+1 (212) 555-0100',
      '+ 254 712 345 678',
      '+(254) 712345678',
      '0712345678-',
      'tel:+254712345678',
      'tel:0712345678;phone-context=+254',
      '+٢٥٤٧١٢٣٤٥٦٧٨',
      '+２５４７１２３４５６７８',
      '+254\t712345678',
      '1-800-FLOWERS',
      'call 0712 345 678',
      '0712/345/678',
      '++254712345678',
      '+254+712345678',
      '12',
      '+1',
      '00',
      '000',
      '+',
      '-0712345678',
      '07 12',
      '+800 1234 5678',
      '+882 1234 5678',
      '+979 123456789',
      '+1 264 235 1234',
      '+1 340 642 1234',
      '+7 700 123 4567',
      '+44 1624 456789',
      '+44 7624 456789',
      '8 800 555 35 35',
      '8 10 254 712 345 678',
      // Uruguay's international prefix 00 followed by a 0: read in the region (a toll-free number).
      '000 4728 7119',
    ]
    for (const text of texts) for (const country of [...DEFAULTS, 'CA', 'KZ', 'IM', 'UY', 'XX', 'ke', '']) inputs.push([text, country])
    const { differences } = compare(inputs)
    expect(differences).toEqual([])
  })

  it('reads the common shapes itself, so the library is asked only for the rest', () => {
    // Handled here: an answer (a number or null), not undefined.
    for (const [text, country] of [
      ['+254712345678', 'KE'],
      ['0712 345 678', 'KE'],
      ['00254712345678', 'KE'],
      ['+1 (212) 555-0100', 'US'],
      ['+254712345678', undefined],
      ['+999 712345678', 'KE'],
    ] as const) {
      expect(readNumber(text, country), `${text} in ${country}`).not.toBeUndefined()
    }
    expect(readNumber('+254712345678', 'KE')).toEqual({ number: '+254712345678', type: 'MOBILE', valid: true })
    expect(readNumber('+999 712345678', 'KE')).toBeNull()
    // Left to the library: letters, other scripts' digits, a + not first, fewer than three digits,
    // a default region the metadata does not have.
    for (const [text, country] of [
      ['0712 345 678 x12', 'KE'],
      ['+٢٥٤٧١٢٣٤٥٦٧٨', 'KE'],
      ['+254+712345678', 'KE'],
      ['12', 'KE'],
      ['0712345678', 'XX'],
      ['0712345678', 'ke'],
    ] as const) {
      expect(readNumber(text, country), `${text} in ${country}`).toBeUndefined()
    }
  })
})
