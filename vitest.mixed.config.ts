import { defineConfig } from 'vitest/config';

// The mixed workload (every writing path at once, two API and two worker processes) alone: beside other
// test files it would slow them past their timeouts and count their traffic as its own.
export default defineConfig({
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    include: ['test/concurrency/mixed-workload.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/contract-setup.ts'],
    testTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 1,
    reporters: ['default'],
  },
});
