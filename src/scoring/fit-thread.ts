// The entry of the thread that fits churn models (fit-runner.ts): one fit at a time, in the order asked,
// each paced by the process that started the thread (runtime/thread-pace.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { type PaceCells, threadPace } from '../runtime/thread-pace.ts';
import { fitTenantModel, type FitInput } from './tenant-fit.ts';

const cells = (workerData as { pace: PaceCells }).pace;

parentPort?.on('message', ({ id, input }: { id: number; input: FitInput }) => {
  const { pace, settle } = threadPace(cells);
  try {
    parentPort!.postMessage({ id, outcome: fitTenantModel(input, pace) });
  } catch (e) {
    parentPort!.postMessage({ id, error: e instanceof Error ? e.message : String(e) });
  } finally {
    settle();
  }
});
