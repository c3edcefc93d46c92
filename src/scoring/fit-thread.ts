// The entry of the thread that fits churn models (fit-runner.ts): one fit at a time, in the order asked.
import { parentPort } from 'node:worker_threads';
import { fitTenantModel, type FitInput } from './tenant-fit.ts';

parentPort?.on('message', ({ id, input }: { id: number; input: FitInput }) => {
  try {
    parentPort!.postMessage({ id, outcome: fitTenantModel(input) });
  } catch (e) {
    parentPort!.postMessage({ id, error: e instanceof Error ? e.message : String(e) });
  }
});
