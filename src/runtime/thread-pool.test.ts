import { afterEach, describe, expect, it } from 'vitest';
import type { TestJob } from '../../test/support/pool-thread.ts';
import { createThreadPool, type ThreadPool } from './thread-pool.ts';

const entry = new URL('../../test/support/pool-thread.ts', import.meta.url);
type Result = { n: number; thread: number; bytes: Uint8Array };

let pool: ThreadPool<TestJob, Result> | undefined;
const open = (size: number) => (pool = createThreadPool<TestJob, Result>({ entry, size, name: 'test' }));
afterEach(() => pool?.close());

describe('a thread pool', () => {
  it('answers each job with what its thread moved back', async () => {
    const p = open(2);
    const [a, b] = await Promise.all([p.run('t1', { n: 1, size: 100_000 }), p.run('t1', { n: 2, size: 3 })]);
    expect(a.bytes).toBeInstanceOf(Uint8Array);
    expect(a.bytes.byteLength).toBe(100_000);
    expect(a.bytes.every((x) => x === 1)).toBe(true);
    expect([...b.bytes]).toEqual([2, 2, 2]);
    // Two jobs at once, two threads.
    expect(a.thread).not.toBe(b.thread);
  });

  it('takes the tenants in turn: one tenant’s queue delays another’s job by one job at most', async () => {
    const p = open(1);
    const order: string[] = [];
    const job = (tenant: string, n: number) => p.run(tenant, { n, ms: 15 }).then(() => order.push(`${tenant}${n}`));
    await Promise.all([job('a', 1), job('a', 2), job('a', 3), job('a', 4), job('a', 5), job('b', 1), job('b', 2)]);
    expect(order).toEqual(['a1', 'a2', 'b1', 'a3', 'b2', 'a4', 'a5']);
  });

  it('fails only the job that failed, and starts another thread for those after a thread that stopped', async () => {
    const p = open(1);
    await expect(p.run('t', { n: 1, fail: true })).rejects.toThrow('job 1 failed');
    const stopped = p.run('t', { n: 2, exit: true });
    const after = p.run('t', { n: 3 });
    await expect(stopped).rejects.toThrow(/stopped \(exit code 3\)/);
    expect((await after).n).toBe(3);
  });

  it('fails what waits once closed, and takes no more', async () => {
    const p = open(1);
    const running = expect(p.run('t', { n: 1, ms: 200 })).rejects.toThrow(/stopped/);
    const waiting = expect(p.run('t', { n: 2 })).rejects.toThrow(/closed/);
    await p.close();
    await Promise.all([running, waiting]);
    await expect(p.run('t', { n: 3 })).rejects.toThrow(/closed/);
  });
});
