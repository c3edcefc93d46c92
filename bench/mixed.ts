// Every writing path at once over the same customers, at the larger size of `npm run test:mixed`
// (test/support/mixed-workload.ts): two API and two worker processes, the per-path figures and the
// checks the test makes. BENCH_MIXED_SECONDS, BENCH_MIXED_TENANTS and BENCH_MIXED_CUSTOMERS size it.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, writeResult } from './lib.ts';

const env = {
  ...process.env,
  TEST_DATABASE_NAME: 'chs_bench_mixed',
  MIXED_SCALE: 'large',
  ...(process.env.BENCH_MIXED_SECONDS ? { MIXED_SECONDS: process.env.BENCH_MIXED_SECONDS } : {}),
  ...(process.env.BENCH_MIXED_TENANTS ? { MIXED_TENANTS: process.env.BENCH_MIXED_TENANTS } : {}),
  ...(process.env.BENCH_MIXED_CUSTOMERS ? { MIXED_CUSTOMERS: process.env.BENCH_MIXED_CUSTOMERS } : {}),
};
const child = spawn(join(ROOT, 'node_modules', '.bin', 'vitest'), ['run', 'test/concurrency/mixed-workload.test.ts'], {
  cwd: ROOT,
  env,
  stdio: ['ignore', 'pipe', 'inherit'],
});
let out = '';
child.stdout.on('data', (c: Buffer) => {
  out += c.toString();
  process.stdout.write(c);
});
const code = await new Promise<number | null>((r) => child.once('exit', r));
// The summary the test prints: from its first line to the test runner's own report.
const plain = out.replace(/\x1b\[[0-9;]*m/g, '');
const from = plain.indexOf('mixed workload:');
const to = plain.indexOf(' ✓ test/', from) > 0 ? plain.indexOf(' ✓ test/', from) : plain.indexOf(' ❯ test/', from);
const summary = from >= 0 ? plain.slice(from, to > from ? to : undefined).trimEnd() : '(no summary: the run did not get that far)';
writeResult('Mixed workload', ['```', summary, '```', '', code === 0 ? 'Every check held.' : `Checks failed (vitest exited ${code}).`]);
process.exit(code ?? 1);
