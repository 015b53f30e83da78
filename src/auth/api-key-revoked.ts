/** Published after a revocation commits; every instance drops the key from its cache. */
export const API_KEY_REVOKED = 'apikey.revoked'

export interface ApiKeyRevoked {
  id: string
  prefix: string
}

export function isApiKeyRevoked(value: unknown): value is ApiKeyRevoked {
  const v = value as Partial<ApiKeyRevoked> | null
  return typeof v?.id === 'string' && typeof v.prefix === 'string'
}
