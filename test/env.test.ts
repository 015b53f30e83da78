import { describe, expect, it } from 'vitest'
import { parseEnv } from '../src/core/env.js'

describe('configuration', () => {
  it('has working defaults', () => {
    const env = parseEnv({})
    expect(env).toMatchObject({
      PORT: 4000,
      HOST: '127.0.0.1',
      DATABASE_URL: 'file:./data/gateway.db',
      PUBLIC_BASE_URL: 'http://localhost:4000',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: false,
      DEFAULT_COUNTRY: 'KE',
    })
    expect(parseEnv({ PORT: '8080' }).PUBLIC_BASE_URL).toBe('http://localhost:8080')
    expect(parseEnv({ PUBLIC_BASE_URL: 'https://sms.example.com/' }).PUBLIC_BASE_URL).toBe('https://sms.example.com')
  })

  it('lists every bad value at once', () => {
    expect(() =>
      parseEnv({
        PORT: 'eighty',
        DATABASE_URL: 'mysql://x',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'maybe',
        DEFAULT_COUNTRY: 'kenya',
        PUBLIC_BASE_URL: 'nope',
      }),
    ).toThrowError(
      /Invalid configuration:\n {2}PORT: .*\n {2}DATABASE_URL: must be file:<path> \(SQLite\) or postgresql:\/\/\.\.\. \(PostgreSQL\)\n {2}PUBLIC_BASE_URL: must be an absolute http\(s\) URL\n {2}WEBHOOK_ALLOW_PRIVATE_NETWORKS: must be true or false\n {2}DEFAULT_COUNTRY: must be a two-letter/,
    )
  })

  it('refuses a DEFAULT_COUNTRY that libphonenumber does not know', () => {
    for (const code of ['XX', 'ZZ', 'AA']) {
      expect(() => parseEnv({ DEFAULT_COUNTRY: code }), code).toThrowError(/DEFAULT_COUNTRY: is not a region libphonenumber knows/)
    }
    for (const code of ['KE', 'GB', 'US', 'UG', 'TZ']) expect(parseEnv({ DEFAULT_COUNTRY: code }).DEFAULT_COUNTRY).toBe(code)
  })

  it('reads the anonymous rate limit and the proxy setting', () => {
    expect(parseEnv({})).toMatchObject({ RATE_LIMIT_ANONYMOUS_PER_SECOND: 20, RATE_LIMIT_ANONYMOUS_BURST: 100, TRUST_PROXY: false })
    expect(parseEnv({ RATE_LIMIT_ANONYMOUS_PER_SECOND: '0', RATE_LIMIT_ANONYMOUS_BURST: '5', TRUST_PROXY: 'true' })).toMatchObject({
      RATE_LIMIT_ANONYMOUS_PER_SECOND: 0,
      RATE_LIMIT_ANONYMOUS_BURST: 5,
      TRUST_PROXY: true,
    })
    expect(() => parseEnv({ RATE_LIMIT_ANONYMOUS_PER_SECOND: '-1', RATE_LIMIT_ANONYMOUS_BURST: '0', TRUST_PROXY: 'yes' })).toThrowError(
      /RATE_LIMIT_ANONYMOUS_PER_SECOND: .*\n {2}RATE_LIMIT_ANONYMOUS_BURST: .*\n {2}TRUST_PROXY: must be true or false/,
    )
  })
})
