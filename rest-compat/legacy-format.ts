/** `2026-01-31T09:00:00.000Z` -> `2026-01-31T09:00:00.000000Z` (microseconds, as the legacy API printed them). */
export function legacyTimestamp(iso: string): string {
  return iso.replace(/\.(\d{3})Z$/, '.$1000Z')
}

/** firstName -> first_name; contacts[3].firstName -> contacts[3].first_name. */
export function snakeCase(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
}
