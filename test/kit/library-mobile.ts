// normalizeMobile and simKey as they were first written, on libphonenumber-js alone
// (parsePhoneNumberFromString, getType(), isValid()): the reference that the service's own reader
// (src/messaging/phone-numbers.ts) must equal (test/mobile-equivalence.test.ts) and is timed
// against (bench/mobile-numbers.ts).
import { parsePhoneNumberFromString, type CountryCode, type PhoneNumber } from 'libphonenumber-js/max'

const NOT_MOBILE = new Set(['FIXED_LINE', 'TOLL_FREE', 'PREMIUM_RATE', 'SHARED_COST', 'VOIP'])
const valid = (parsed: PhoneNumber | undefined) => (parsed && (parsed.getType() !== undefined || parsed.isValid()) ? parsed : null)

/** The valid number the library reads, with the region's own prefix first and a leading 00 after. */
export function libraryParse(input: string, country: string): PhoneNumber | null {
  const text = input.trim()
  if (!text || text.length > 32) return null
  return (
    valid(parsePhoneNumberFromString(text, country as CountryCode)) ??
    (text.startsWith('00') ? valid(parsePhoneNumberFromString(`+${text.slice(2)}`)) : null)
  )
}

/** normalizeMobile's answer from a number libraryParse read. */
export function mobileOf(parsed: PhoneNumber | null): string | null {
  const type = parsed?.getType()
  return parsed && !(type && NOT_MOBILE.has(type)) ? parsed.number : null
}

/** normalizeMobile on the library alone. */
export const libraryMobile = (input: string, country: string) => mobileOf(libraryParse(input, country))
