import { configDefaults, defineConfig } from 'vitest/config'

export default defineConfig({
  // graphql ships CJS and ESM builds; Pothos loads one and our code the other unless both resolve alike.
  resolve: { alias: { graphql: 'graphql/index.js' } },
  test: {
    include: ['test/**/*.test.ts'],
    // The crash test kills real servers for minutes: its own run, `npm run test:crash`.
    exclude: [...configDefaults.exclude, 'test/crash/**'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
