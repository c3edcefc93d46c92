import { defineConfig } from 'vitest/config';

// `npm run test:faults`: kills processes and restarts PostgreSQL, so it runs alone, one file at a time.
export default defineConfig({
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    include: ['test/faults/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    maxWorkers: 1,
    reporters: ['default'],
  },
});
