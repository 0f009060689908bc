import { defineConfig } from 'vitest/config'

/** The consumer suite (test/consumer): `npm run test:consumer`. It installs from the npm registry (or npm's cache). */
export default defineConfig({
  test: {
    include: ['test/consumer/**/*.test.ts'],
    globalSetup: ['test/setup/postgres.ts'],
    testTimeout: 600_000,
    hookTimeout: 900_000,
    fileParallelism: false,
  },
})
