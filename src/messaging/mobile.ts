// The 'max' metadata: the only libphonenumber-js set that knows number types (getType()).
import { parsePhoneNumberFromString, type CountryCode, type NumberType, type PhoneNumber } from 'libphonenumber-js/max'
import { readNumber } from './phone-numbers.js'

/**
 * Types that certainly cannot receive an SMS. FIXED_LINE_OR_MOBILE (the US, Canada, ...) and numbers
 * of no known type stay accepted: refusing them would refuse real mobiles.
 */
const NOT_MOBILE = new Set<NumberType>(['FIXED_LINE', 'TOLL_FREE', 'PREMIUM_RATE', 'SHARED_COST', 'VOIP'])

/** E.164 with the leading +, or null when the text is not a valid number that can receive SMS. */
export function normalizeMobile(input: string, defaultCountry: string): string | null {
  const found = parseNumber(input, defaultCountry)
  if (!found) return null
  return found.type && NOT_MOBILE.has(found.type) ? null : found.number
}

/**
 * libphonenumber first, with the region's own international prefix (Kenya's is 000, the US's 011).
 * Only when that fails is a leading 00 read as the international prefix, the form most integrators'
 * data uses whatever the region.
 */
function parseNumber(input: string, defaultCountry: string): ValidNumber | null {
  const text = input.trim()
  if (!text || text.length > 32) return null
  return valid(text, defaultCountry) ?? (text.startsWith('00') ? valid(`+${text.slice(2)}`, undefined) : null)
}

/** A valid number in E.164 and its type (undefined when its region's metadata has none). */
interface ValidNumber {
  number: string
  type: NumberType
}

/**
 * The number with its type when it is valid, or null. The common shapes are read by readNumber
 * (./phone-numbers.ts), the library's own steps on its metadata with each pattern compiled once;
 * anything else by the library itself.
 */
function valid(text: string, defaultCountry: string | undefined): ValidNumber | null {
  const read = readNumber(text, defaultCountry)
  if (read !== undefined) return read?.valid ? read : null
  return validParsed(parsePhoneNumberFromString(text, defaultCountry as CountryCode))
}

/**
 * With the 'max' metadata isValid() is getType() !== undefined, the same pattern matching: a number
 * with a type is valid without asking again; only a number without one is asked.
 */
function validParsed(parsed: PhoneNumber | undefined): ValidNumber | null {
  if (!parsed) return null
  const type = parsed.getType()
  return type !== undefined || parsed.isValid() ? { number: parsed.number, type } : null
}

/**
 * A hosted SIM may be a full number or a short code; numbers compare in E.164, short codes by digits.
 * Any valid number counts here, whatever its type: the key only has to match, and stored keys stay as before.
 */
export function simKey(sim: string, defaultCountry: string): string {
  return parseNumber(sim, defaultCountry)?.number ?? sim.replace(/[\s-]/g, '')
}
