import { defineConfig } from 'vitest/config'

// `npm run test:crash`: kill -9 tests against the real server (docs/reliability.md, "Crash safety").
export default defineConfig({
  resolve: { alias: { graphql: 'graphql/index.js' } },
  test: {
    include: ['test/crash/**/*.test.ts'],
    pool: 'forks',
    // One database after the other: the kills are timed, and the machine is small.
    fileParallelism: false,
    sequence: { concurrent: false },
    testTimeout: 60_000,
    hookTimeout: 600_000,
  },
})
