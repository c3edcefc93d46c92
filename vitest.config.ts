import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Node resolves `graphql` to its CommonJS entry for the libraries; make our own imports match,
  // or two graphql realms meet and schema checks fail.
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    // Integration tests in test/; unit tests of pure modules beside them in src/.
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // The fault suite restarts PostgreSQL; it runs on its own with `npm run test:faults`. The mixed
    // workload loads both cores for a minute and measures itself, so it runs after the rest, alone
    // (vitest.mixed.config.ts, the second half of `npm test`), as do the live changes across processes.
    exclude: ['test/faults/**', 'test/concurrency/mixed-workload.test.ts', 'test/api/live.test.ts', '**/node_modules/**'],
    globalSetup: ['test/support/global-setup.ts'],
    // Every answer a test receives is checked against the OpenAPI description (test/support/contract.ts).
    setupFiles: ['test/support/contract-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
