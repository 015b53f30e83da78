import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max'

/** E.164 with the leading +, or null when the text is not a valid phone number. */
export function normalizeMobile(input: string, defaultCountry: string): string | null {
  const text = input.trim()
  if (!text || text.length > 32) return null
  // 00-prefixed international form is common in integrators' data.
  const candidate = text.startsWith('00') ? `+${text.slice(2)}` : text
  const parsed = parsePhoneNumberFromString(candidate, defaultCountry as CountryCode)
  return parsed?.isValid() ? parsed.number : null
}

/** A hosted SIM may be a full number or a short code; numbers compare in E.164, short codes by digits. */
export function simKey(sim: string, defaultCountry: string): string {
  return normalizeMobile(sim, defaultCountry) ?? sim.replace(/[\s-]/g, '')
}
