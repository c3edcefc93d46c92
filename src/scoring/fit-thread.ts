// The entry of the thread that fits churn models (fit-runner.ts): one fit at a time, in the order asked,
// each paced by the process that started the thread (runtime/thread-pace.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { type PaceCells, threadPace } from '../runtime/thread-pace.ts';
import { fitTenantModel, type FitInput } from './tenant-fit.ts';

const cells = (workerData as { pace: PaceCells }).pace;

parentPort?.on('message', ({ id, input }: { id: number; input: FitInput }) => {
  const { pace, settle } = threadPace(cells);
  let answer: { id: number; outcome?: unknown; error?: string };
  try {
    answer = { id, outcome: fitTenantModel(input, pace) };
  } catch (e) {
    answer = { id, error: e instanceof Error ? e.message : String(e) };
  }
  // Counted before the answer goes, so the process charges it to this fit, not to the next.
  settle();
  parentPort!.postMessage(answer);
});
