// A thread for the pacing tests (src/runtime/thread-pace.test.ts): busy for `steps` steps of about `stepMs`
// each, calling `pace()` between them, then says how long that took it.
import { parentPort, workerData } from 'node:worker_threads';
import { type PaceCells, threadPace } from '../../src/runtime/thread-pace.ts';

const cells = (workerData as { pace: PaceCells }).pace;

parentPort!.on('message', ({ steps, stepMs }: { steps: number; stepMs: number }) => {
  const { pace, settle } = threadPace(cells);
  const started = performance.now();
  for (let i = 0; i < steps; i++) {
    pace();
    for (const until = performance.now() + stepMs; performance.now() < until;);
  }
  settle();
  parentPort!.postMessage({ wallMs: performance.now() - started });
});
