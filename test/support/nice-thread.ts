// A thread for src/runtime/threads.test.ts: lowers its priority, then answers its own and the process's.
import { readlinkSync } from 'node:fs';
import { getPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { lowerThreadPriority } from '../../src/runtime/threads.ts';

lowerThreadPriority(5);
const tid = Number(/\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1]);
parentPort!.postMessage({ thread: getPriority(tid), process: getPriority(process.pid) });
