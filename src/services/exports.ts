import type pg from 'pg';
import type { ExportDataset, ExportFormat } from '../contract/enums.ts';
import { onPg } from '../db/sql.ts';
import { type CpuShare, unmetered } from '../runtime/cpu-share.ts';
import { SUBJECT_RECORDS, type SubjectRecord } from './export-datasets.ts';
import { csvHeader, type Page, type PageJob, type PageReader, pagesHere } from './export-pages.ts';

// Exports (docs/data-lifecycle.md): a workspace's datasets as NDJSON or CSV, and everything held about one
// customer for an access request. Rows are read in keyset pages (export-pages.ts), each page its own short query,
// and written out as each page arrives: memory stays at one page whatever the table's size, no connection
// or snapshot is held while a slow client reads, and a row is never written twice (a row changed during
// the export is written as it was when its page was read). Pages are read and written out by `pages`: on
// the export threads in the API (composition.ts), so the event loop only passes each page's bytes on.

interface Filter {
  tenantId: string;
  customerId?: string;
  since?: Date | null;
  until?: Date | null;
  /** Called before every page but the first; throws to end the export (the caller may no longer read). */
  beforePage?: () => Promise<void>;
}

export function createExportService(deps: { pool: pg.Pool; cpuShare?: CpuShare; pages?: PageReader }) {
  const pages = deps.pages ?? pagesHere(onPg(deps.pool));
  const share = deps.cpuShare ?? unmetered;
  /**
   * One source's pages, in keyset order, each read and written out as one step of the tenant's share
   * (runtime/cpu-share.ts): its whole time is charged, the thread's work and its wait for a thread.
   */
  async function* pagesOf(job: Omit<PageJob, 'after'>, beforePage?: () => Promise<void>): AsyncGenerator<Buffer> {
    for (let after: unknown[] | null = null; ;) {
      if (after) await beforePage?.();
      const { bytes, after: next }: Page = await share.read(job.tenantId, () => pages(job.tenantId, { ...job, after }));
      if (bytes.byteLength > 0) yield Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      if (!next) return;
      after = next;
    }
  }
  return {
    /** A dataset as chunks: NDJSON lines, or CSV with a header row. */
    async *dataset(dataset: ExportDataset, format: ExportFormat, f: Filter): AsyncGenerator<string | Buffer> {
      const release = await share.hold(f.tenantId);
      try {
        if (format === 'csv') yield csvHeader(dataset);
        const { beforePage, ...filter } = f;
        yield* pagesOf({ ...filter, source: { dataset, format } }, beforePage);
      } finally {
        release();
      }
    },
    /** Everything held about one customer, as NDJSON records `{ "record": type, "data": {...} }`. */
    async *subject(tenantId: string, customerId: string, beforePage?: () => Promise<void>): AsyncGenerator<string | Buffer> {
      const release = await share.hold(tenantId);
      try {
        let first = true;
        for (const record of Object.keys(SUBJECT_RECORDS) as SubjectRecord[]) {
          if (!first) await beforePage?.();
          first = false;
          yield* pagesOf({ tenantId, customerId, source: { record } }, beforePage);
        }
      } finally {
        release();
      }
    },
  };
}

export type ExportService = ReturnType<typeof createExportService>;
