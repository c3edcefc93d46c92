// The entry of an export thread (export-pages.ts): reads and writes out one page of an export at a time,
// over a database connection of its own, and moves the page's bytes to the API's event loop.
import pg from 'pg';
import { workerData } from 'node:worker_threads';
import { sessionOptions } from '../db/session-options.ts';
import { onPg } from '../db/sql.ts';
import { serveJobs } from '../runtime/thread-pool.ts';
import { type ExportThreadData, type Page, type PageJob, readPage } from './export-pages.ts';

const { databaseUrl } = workerData as ExportThreadData;
// One connection: the thread reads one page at a time. A connection lost while idle is opened again at the next page.
const pool = new pg.Pool({ connectionString: databaseUrl, max: 1, options: sessionOptions() });
pool.on('error', () => {});
const sql = onPg(pool);

serveJobs<PageJob, Page>(async (job) => {
  const page = await readPage(sql, job);
  return { result: page, transfer: [page.bytes.buffer] };
});
