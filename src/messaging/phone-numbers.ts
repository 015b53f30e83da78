// libphonenumber-js's parse, getType() and isValid() for the common shapes of a number, on its own
// 'max' metadata, with each pattern compiled once: the library builds `new RegExp('^(?:' + pattern +
// ')$')` at every match and option objects at every call, most of normalizeMobile's time. Each step
// below is the library's (1.13), in its order, named after its function; test/mobile-equivalence
// compares the answers with the library's own over every region's examples and 200,000 more.
import { Metadata, type NumberType } from 'libphonenumber-js/max'

/** A number as libphonenumber reads it: E.164, its type, and whether it is valid. */
export interface ReadNumber {
  number: string
  type: NumberType
  valid: boolean
}

/**
 * The text read as `parsePhoneNumberFromString(text, defaultCountry)` then `getType()` and
 * `isValid()` would: null when the library finds no number, undefined when the text is not of a
 * shape read here (the caller then asks the library). The shapes: an optional leading +, then
 * ASCII digits (three or more), spaces, hyphens, dots and brackets; a default country the metadata
 * has, or none.
 */
export function readNumber(text: string, defaultCountry: string | undefined): ReadNumber | null | undefined {
  if (!SHAPE.test(text)) return undefined
  const digits = text.replace(NOT_DIGIT, '')
  if (digits.length < 3) return undefined
  if (defaultCountry !== undefined && !Object.hasOwn(json.countries, defaultCountry)) return undefined
  return parse(text.startsWith('+') ? `+${digits}` : digits, defaultCountry)
}

/**
 * What the library's extractFormattedPhoneNumber, isViablePhoneNumber, extractExtension and
 * parseIncompletePhoneNumber reduce to the leading + and the digits: no character of an extension,
 * an RFC 3966 URI or another script's digits, and a + only first.
 */
const SHAPE = /^\+?[ ().-]*\d[\d ().-]*$/
const NOT_DIGIT = /\D/g

/** The library's Metadata as its code uses it (its typings declare less). */
interface LibraryMetadata {
  metadata: { countries: Record<string, unknown> }
  numberingPlan?: LibraryPlan
  selectNumberingPlan(countryOrCallingCode: string): void
  hasCallingCode(callingCode: string): boolean | undefined
  getCountryCodesForCallingCode(callingCode: string): string[] | undefined
}
interface LibraryPlan {
  callingCode(): string
  IDDPrefix(): string | undefined
  nationalNumberPattern(): string
  possibleLengths(): number[] | undefined
  nationalPrefixForParsing(): string | undefined
  nationalPrefixTransformRule(): string | undefined
  leadingDigits(): string | undefined
  hasTypes(): boolean
  type(type: string): { pattern(): string; possibleLengths(): number[] | undefined } | undefined
}

const library = (): LibraryMetadata => new Metadata() as unknown as LibraryMetadata
const metadata = library()
const json = metadata.metadata

/** The library's getNumberType asks these after FIXED_LINE, in this order. */
const NON_FIXED_LINE_TYPES = [
  'MOBILE',
  'PREMIUM_RATE',
  'TOLL_FREE',
  'SHARED_COST',
  'VOIP',
  'PERSONAL_NUMBER',
  'PAGER',
  'UAN',
  'VOICEMAIL',
] as const
const TYPES = ['FIXED_LINE', ...NON_FIXED_LINE_TYPES] as const

interface TypeDefinition {
  pattern: string
  entire: RegExp
  lengths: number[] | undefined
}

/** A numbering plan as selectNumberingPlan(country or calling code) selects it, its patterns compiled. */
interface Plan {
  callingCode: string
  idd: RegExp
  entire: RegExp
  lengths: number[] | undefined
  prefix: RegExp | undefined
  transform: string | undefined
  leadingDigits: RegExp | undefined
  hasTypes: boolean
  types: Map<string, TypeDefinition>
}

/** matchesEntirely's expression, once per pattern. */
const entirely = (pattern: string) => new RegExp('^(?:' + pattern + ')$')

const plans = new Map<string, Plan>()
function plan(countryOrCallingCode: string): Plan {
  let found = plans.get(countryOrCallingCode)
  if (found) return found
  const selected = library()
  selected.selectNumberingPlan(countryOrCallingCode)
  const p = selected.numberingPlan!
  const prefix = p.nationalPrefixForParsing()
  const leading = p.leadingDigits()
  const types = new Map<string, TypeDefinition>()
  for (const name of TYPES) {
    const type = p.type(name)
    if (type) types.set(name, { pattern: type.pattern(), entire: entirely(type.pattern()), lengths: type.possibleLengths() })
  }
  found = {
    callingCode: p.callingCode(),
    // stripIddPrefix's `new RegExp(metadata.IDDPrefix())`, as it is (not anchored).
    idd: new RegExp(p.IDDPrefix() as string),
    entire: entirely(p.nationalNumberPattern()),
    lengths: p.possibleLengths(),
    prefix: prefix ? new RegExp('^(?:' + prefix + ')') : undefined,
    transform: p.nationalPrefixTransformRule(),
    leadingDigits: leading ? new RegExp(leading) : undefined,
    hasTypes: p.hasTypes(),
    types,
  }
  plans.set(countryOrCallingCode, found)
  return found
}

const countriesByCallingCode = new Map<string, string[] | undefined>()
function countriesOf(callingCode: string): string[] | undefined {
  if (!countriesByCallingCode.has(callingCode)) countriesByCallingCode.set(callingCode, metadata.getCountryCodesForCallingCode(callingCode))
  return countriesByCallingCode.get(callingCode)
}

/** parse() with v2, then the PhoneNumber's getType() and isValid(). */
function parse(digits: string, defaultCountry: string | undefined): ReadNumber | null {
  const extracted = extractCountryCallingCode(digits, defaultCountry)
  let callingCode = extracted.callingCode
  let country: string | undefined
  let selected: Plan
  if (callingCode) selected = plan(callingCode)
  else if (extracted.number && defaultCountry) {
    country = defaultCountry
    selected = plan(defaultCountry)
    callingCode = selected.callingCode
  } else return null
  if (!extracted.number) return null
  const nationalNumber = extractNationalNumber(extracted.number, selected)
  const exactCountry = countryByCallingCode(callingCode, nationalNumber)
  if (exactCountry) country = exactCountry
  if (nationalNumber.length < 2 || nationalNumber.length > 17) return null
  const typed = plan(country || callingCode)
  const type = numberType(nationalNumber, typed)
  return {
    number: '+' + callingCode + nationalNumber,
    type,
    valid: type !== undefined || (!typed.hasTypes && typed.entire.test(nationalNumber)),
  }
}

/** extractCountryCallingCode: {} when a calling code is there but not a known one. */
function extractCountryCallingCode(digits: string, defaultCountry: string | undefined): { callingCode?: string; number?: string } {
  let number = digits
  if (number[0] !== '+') {
    const withoutIdd = defaultCountry ? stripIddPrefix(number, plan(defaultCountry)) : undefined
    if (withoutIdd && withoutIdd !== number) number = '+' + withoutIdd
    else {
      if (defaultCountry) {
        const found = extractCountryCallingCodeFromInternationalNumberWithoutPlusSign(number, plan(defaultCountry))
        if (found) return found
      }
      return { number }
    }
  }
  if (number[1] === '0') return {}
  for (let i = 2; i - 1 <= 3 && i <= number.length; i++) {
    const callingCode = number.slice(1, i)
    if (metadata.hasCallingCode(callingCode)) return { callingCode, number: number.slice(i) }
  }
  return {}
}

function stripIddPrefix(number: string, p: Plan): string | undefined {
  if (number.search(p.idd) !== 0) return undefined
  const rest = number.slice(number.match(p.idd)![0].length)
  return rest[0] === '0' ? undefined : rest
}

function extractCountryCallingCodeFromInternationalNumberWithoutPlusSign(number: string, p: Plan) {
  if (!number.startsWith(p.callingCode)) return undefined
  const shorter = number.slice(p.callingCode.length)
  const shorterNationalNumber = extractNationalNumber(shorter, p)
  const nationalNumber = extractNationalNumber(number, p)
  if (
    (!p.entire.test(nationalNumber) && p.entire.test(shorterNationalNumber)) ||
    checkNumberLength(nationalNumber, p.lengths) === 'TOO_LONG'
  ) {
    return { callingCode: p.callingCode, number: shorter }
  }
  return undefined
}

/** extractNationalNumber: the national prefix (and carrier code) stripped when that leaves a possible number. */
function extractNationalNumber(number: string, p: Plan): string {
  let nationalNumber = number
  if (number && p.prefix) {
    const match = p.prefix.exec(number)
    if (match) {
      const groups = match.length - 1
      const hasGroups = groups > 0 && match[groups]
      nationalNumber = p.transform && hasGroups ? number.replace(p.prefix, p.transform) : number.slice(match[0].length)
    }
  }
  if (nationalNumber !== number) {
    if (p.entire.test(number) && !p.entire.test(nationalNumber)) return number
    if (p.lengths) {
      const country = countryByCallingCode(p.callingCode, nationalNumber)
      const length = checkNumberLength(nationalNumber, country ? plan(country).lengths : p.lengths)
      if (length === 'TOO_SHORT' || length === 'INVALID_LENGTH') return number
    }
  }
  return nationalNumber
}

function checkNumberLength(nationalNumber: string, lengths: number[] | undefined) {
  if (!lengths) return 'IS_POSSIBLE'
  const length = nationalNumber.length
  if (lengths[0] === length) return 'IS_POSSIBLE'
  if (lengths[0]! > length) return 'TOO_SHORT'
  if (lengths[lengths.length - 1]! < length) return 'TOO_LONG'
  return lengths.indexOf(length, 1) >= 0 ? 'IS_POSSIBLE' : 'INVALID_LENGTH'
}

/** getCountryByCallingCode and getCountryByNationalNumber: which of the countries sharing a calling code. */
function countryByCallingCode(callingCode: string, nationalNumber: string): string | undefined {
  const countries = countriesOf(callingCode)
  if (!countries) return undefined
  if (countries.length === 1) return countries[0]
  for (const country of countries) {
    const p = plan(country)
    if (p.leadingDigits) {
      if (nationalNumber && nationalNumber.search(p.leadingDigits) === 0) return country
    } else if (numberType(nationalNumber, p)) return country
  }
  return undefined
}

/** getNumberType. */
function numberType(nationalNumber: string, p: Plan): NumberType {
  if (!p.entire.test(nationalNumber)) return undefined
  if (isNumberTypeEqualTo(nationalNumber, 'FIXED_LINE', p)) {
    const mobile = p.types.get('MOBILE')
    if (!mobile || mobile.pattern === '') return 'FIXED_LINE_OR_MOBILE'
    if (isNumberTypeEqualTo(nationalNumber, 'MOBILE', p)) return 'FIXED_LINE_OR_MOBILE'
    return 'FIXED_LINE'
  }
  for (const type of NON_FIXED_LINE_TYPES) if (isNumberTypeEqualTo(nationalNumber, type, p)) return type
  return undefined
}

function isNumberTypeEqualTo(nationalNumber: string, type: string, p: Plan): boolean {
  const definition = p.types.get(type)
  if (!definition || !definition.pattern) return false
  if (definition.lengths && definition.lengths.indexOf(nationalNumber.length) < 0) return false
  return definition.entire.test(nationalNumber)
}
