import { performance } from 'node:perf_hooks';

/**
 * Paces a thread's long synchronous work from the thread that started it, so that work done on another
 * core is still held to its tenant's share (cpu-share.ts). The two threads share two cells: the working
 * thread adds the time it spends, and waits while the other has set the hold cell; the starting thread
 * reads that time every few milliseconds, charges it, and sets or clears the hold.
 *
 * The working thread looks at the cells only where its work calls `pace()` (once per Newton step of a
 * fit, about a millisecond apart): a hold takes effect at its next step after the starting thread set it.
 */
export interface PaceCells {
  buffer: SharedArrayBuffer;
}

const SPENT_US = 0;
const HOLD = 1;

export const createPaceCells = (): PaceCells => ({ buffer: new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT) });

/** The longest one wait lasts before the working thread looks again (a lost wake-up costs no more). */
const WAIT_MS = 50;

/**
 * In the working thread, for one piece of work: `pace` is what the work calls between its steps; `settle`
 * counts the time since the last step once the work is done, without waiting.
 */
export function threadPace(cells: PaceCells): { pace: () => void; settle: () => void } {
  const c = new Int32Array(cells.buffer);
  let since = performance.now();
  const count = () => {
    const now = performance.now();
    Atomics.add(c, SPENT_US, Math.round((now - since) * 1000));
    since = now;
  };
  return {
    pace() {
      count();
      if (Atomics.load(c, HOLD) === 0) return;
      while (Atomics.load(c, HOLD) === 1) Atomics.wait(c, HOLD, 1, WAIT_MS);
      // The wait is not work: it is neither counted nor charged.
      since = performance.now();
    },
    settle: count,
  };
}

/** The starting thread's side: looks every few milliseconds until stopped. */
export interface Pacer {
  /** Hands over what the working thread spent so far and lets it go on: the piece of work it was for ended. */
  flush(): void;
  /** As `flush`, and looks no more. */
  stop(): void;
}

/**
 * In the starting thread, while the work runs: every `everyMs`, hands `spent` what the working thread spent
 * since the last look, in ms, and holds the thread while `spent` answers true. A hold set at one look takes
 * effect at the thread's next step.
 */
export function paceThread(cells: PaceCells, spent: (ms: number) => boolean, everyMs = 10): Pacer {
  const c = new Int32Array(cells.buffer);
  const look = (mayHold: boolean) => {
    const hold = spent(Atomics.exchange(c, SPENT_US, 0) / 1000) && mayHold;
    if (hold) Atomics.store(c, HOLD, 1);
    else if (Atomics.exchange(c, HOLD, 0) === 1) Atomics.notify(c, HOLD);
  };
  const timer = setInterval(() => look(true), everyMs);
  // A fit waiting on the thread is no reason to keep the process alive.
  timer.unref();
  return {
    flush: () => look(false),
    stop() {
      clearInterval(timer);
      look(false);
    },
  };
}
