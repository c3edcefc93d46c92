import type { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { createPaceCells, type PaceCells, paceThread } from './thread-pace.ts';
import { startThread } from './threads.ts';

const entry = new URL('../../test/support/paced-thread.ts', import.meta.url);

let thread: Worker | undefined;
afterEach(async () => {
  await thread?.terminate();
  thread = undefined;
});

/** Starts the busy thread on `cells` and runs `steps` steps of `stepMs` on it. */
async function busy(cells: PaceCells, steps: number, stepMs: number): Promise<{ wallMs: number }> {
  thread ??= startThread(entry, { pace: cells });
  const answer = new Promise<{ wallMs: number }>((resolve) => thread!.once('message', resolve));
  thread.postMessage({ steps, stepMs });
  return answer;
}

/** Cells of a busy thread already started: the thread's start is not what is measured. */
async function warmCells(): Promise<PaceCells> {
  const cells = createPaceCells();
  await busy(cells, 1, 1);
  return cells;
}

describe('a thread’s work paced from the thread that started it', () => {
  it('hands over the time the thread spent on its steps', async () => {
    const cells = await warmCells();
    let spent = 0;
    const pacer = paceThread(cells, (ms) => ((spent += ms), false), 5);
    await busy(cells, 40, 5);
    pacer.stop();
    // Each step lasts at least its 5 ms; on a busy machine the thread may be paused within one, which counts.
    expect(spent).toBeGreaterThanOrEqual(190);
    expect(spent).toBeLessThan(1000);
  });

  it('holds the thread between steps while asked, without counting the wait as work', async () => {
    const cells = await warmCells();
    let spent = 0;
    const holdUntil = performance.now() + 600;
    const pacer = paceThread(cells, (ms) => ((spent += ms), performance.now() < holdUntil), 5);
    const { wallMs } = await busy(cells, 20, 5);
    pacer.stop();
    // About 100 ms of steps took at least the 600 ms held.
    expect(wallMs).toBeGreaterThan(550);
    expect(spent).toBeLessThan(300);
  });

  it('lets a held thread go on at once when the pacing stops', async () => {
    const cells = await warmCells();
    const pacer = paceThread(cells, () => true, 5);
    const work = busy(cells, 20, 5);
    setTimeout(() => pacer.stop(), 200);
    const { wallMs } = await work;
    expect(wallMs).toBeGreaterThan(150);
    expect(wallMs).toBeLessThan(1500);
  });
});
