import { expect } from 'vitest'

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
export const anyUuid = () => expect.stringMatching(UUID)
/** The legacy timestamp shape: ISO 8601 UTC with microseconds. */
export const legacyTime = () => expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
