import { once } from 'node:events';
import { getPriority } from 'node:os';
import { describe, expect, it } from 'vitest';
import { startThread } from './threads.ts';

describe.runIf(process.platform === 'linux')('a thread that lowers its priority', () => {
  it('runs below the process, which keeps its own', async () => {
    const before = getPriority(process.pid);
    const thread = startThread(new URL('../../test/support/nice-thread.ts', import.meta.url));
    const [seen] = (await once(thread, 'message')) as [{ thread: number; process: number }];
    await thread.terminate();
    expect(seen).toEqual({ thread: Math.min(19, before + 5), process: before });
    expect(getPriority(process.pid)).toBe(before);
  });
});
