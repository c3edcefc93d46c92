import { defineConfig } from 'vitest/config';

// The churn evaluation (eval/churn): long-running, so apart from `npm test`, on the same test database setup.
export default defineConfig({
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    include: ['eval/**/*.eval.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 900_000,
    hookTimeout: 300_000,
    pool: 'forks',
    maxWorkers: 1,
    reporters: ['default'],
  },
});
