import { defineConfig } from 'vitest/config';

// The files that start their own fleet of processes and measure across them, each alone: the mixed workload
// (every writing path at once, two API and two worker processes; beside other test files it would slow them
// past their timeouts and count their traffic as its own), and the live changes across two API processes
// and a worker (beside the files that stop the shared broker and start many processes, its changes once went
// unheard for the whole file).
export default defineConfig({
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    include: ['test/concurrency/mixed-workload.test.ts', 'test/api/live.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/contract-setup.ts'],
    testTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 1,
    reporters: ['default'],
  },
});
