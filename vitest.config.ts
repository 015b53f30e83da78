import { defineConfig } from 'vitest/config'

export default defineConfig({
  // graphql ships CJS and ESM builds; Pothos loads one and our code the other unless both resolve alike.
  resolve: { alias: { graphql: 'graphql/index.js' } },
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
