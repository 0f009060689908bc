import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The consumer suite installs from the registry: its own step (npm run test:consumer).
    exclude: ['test/consumer/**', '**/node_modules/**'],
    globalSetup: ['test/setup/postgres.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: integration files run two at a time against one server.
    maxWorkers: 2,
    fileParallelism: true,
  },
})
