import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

// tsx's module API as an ES module (its `import` export), found from where this file is.
const tsxApi = () =>
  pathToFileURL(join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;

/**
 * The entry module `name` (without extension) beside the module at `from` (its import.meta.url): the
 * TypeScript source when run from sources, the compiled JavaScript when run from the build.
 */
export const threadEntry = (from: string, name: string) => new URL(`./${name}${from.endsWith('.ts') ? '.ts' : '.js'}`, from);

/**
 * Starts a thread on `entry`. Run from TypeScript sources (development, tests), the thread registers
 * tsx's loader before it loads its entry: loaders given to this process do not reach its threads.
 */
export function startThread(entry: URL, workerData?: unknown): Worker {
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, { workerData });
  return new Worker(
    `import(${JSON.stringify(tsxApi())})` + `.then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`,
    {
      eval: true,
      workerData,
    },
  );
}
