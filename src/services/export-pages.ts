import { stringify } from 'csv-stringify/sync';
import type { ExportDataset, ExportFormat } from '../contract/enums.ts';
import type { Sql } from '../db/sql.ts';
import { threadEntry } from '../runtime/threads.ts';
import { type Dataset, DATASETS, SUBJECT_RECORDS, type SubjectRecord } from './export-datasets.ts';

// One page of an export: read as one short keyset query and written out as NDJSON or CSV bytes. It runs
// on the export threads (export-thread.ts), so that parsing a page's rows and writing them never holds
// up the requests on the API's event loop, or, with EXPORT_THREADS=0, in the process itself.

/** Rows per page, read and written out in one job. */
const PAGE = 250;

/** The thread entry that reads pages for the export service (composition.ts starts its threads). */
export const EXPORT_THREAD_ENTRY = threadEntry(import.meta.url, 'export-thread');

/** What an export thread is given at its start. */
export interface ExportThreadData {
  databaseUrl: string;
}

export interface PageJob {
  /** A workspace dataset in a format, or one record type of a customer's own export (NDJSON records). */
  source: { dataset: ExportDataset; format: ExportFormat } | { record: SubjectRecord };
  tenantId: string;
  customerId?: string;
  since?: Date | null;
  until?: Date | null;
  /** The keyset of the previous page's last row; null for the first page. */
  after: unknown[] | null;
}

export interface Page {
  /** The page written out, in a buffer of its own (moved, not copied, from a thread); empty without rows. */
  bytes: Uint8Array<ArrayBuffer>;
  /** The keyset to read the next page after; null when this page was the last. */
  after: unknown[] | null;
}

/** Reads and writes one page of an export for a tenant; the tenant orders the export threads' turns. */
export type PageReader = (tenantId: string, job: PageJob) => Promise<Page>;

type Row = Record<string, unknown>;

const datasetOf = (source: PageJob['source']): Dataset => ('record' in source ? SUBJECT_RECORDS[source.record] : DATASETS[source.dataset]);

/** The CSV header row of a dataset. */
export const csvHeader = (dataset: ExportDataset) => stringify([DATASETS[dataset].columns.map((c) => c.name)]);

function pageQuery(d: Dataset, job: PageJob) {
  const select = d.columns.map((c, i) => `${c.sql} AS c${i}`).join(', ');
  const keys = d.key.map((k, i) => `${k} AS k${i}`).join(', ');
  const conds = [`${d.tenant} = $1`];
  const values: unknown[] = [job.tenantId];
  const param = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  if (job.customerId) conds.push(`${d.customer} = ${param(job.customerId)}`);
  if (d.time && job.since) conds.push(`${d.time} >= ${param(job.since)}`);
  if (d.time && job.until) conds.push(`${d.time} < ${param(job.until)}`);
  const fixed = values.length;
  const [beyond, direction] = d.order === 'desc' ? ['<', 'DESC'] : ['>', 'ASC'];
  const orderBy = d.key.map((k) => `${k} ${direction}`).join(', ');
  const after = job.after;
  const page = after ? `(${d.key.join(', ')}) ${beyond} (${after.map((_, i) => `$${fixed + i + 2}`).join(', ')})` : 'true';
  return {
    text: `SELECT ${select}, ${keys} FROM ${d.from} WHERE ${conds.join(' AND ')} AND ${page} ORDER BY ${orderBy} LIMIT $${fixed + 1}`,
    values: [...values, PAGE, ...(after ?? [])],
  };
}

// A cell that starts like a formula would run as one in a spreadsheet (CSV injection): it is written
// with a leading apostrophe, which spreadsheets show as text and hide. Leading spaces do not stop a
// spreadsheet from reading a formula, so they do not stop the apostrophe either.
const FORMULA_START = /^\s*[=+\-@]|^[\t\r]/;
const csvCell = {
  string: (v: string) => (FORMULA_START.test(v) ? `'${v}` : v),
  date: (v: Date) => v.toISOString(),
  object: (v: object) => csvCell.string(JSON.stringify(v)),
  boolean: (v: boolean) => String(v),
};

function written(source: PageJob['source'], d: Dataset, rows: Row[]): string {
  if ('record' in source) return rows.map((data) => JSON.stringify({ record: source.record, data })).join('\n') + '\n';
  if (source.format === 'ndjson') return rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
  // Every text cell is quoted: a spreadsheet whose list separator is ';' splits an unquoted `a;=1+1` into
  // two cells, the second a formula.
  return stringify(rows, { columns: d.columns.map((c) => c.name), cast: csvCell, quoted_string: true });
}

const utf8 = new TextEncoder();

/** One page of an export, read and written out. */
export async function readPage(sql: Sql, job: PageJob): Promise<Page> {
  const d = datasetOf(job.source);
  const { text, values } = pageQuery(d, job);
  const rows = await sql.query(text, values);
  if (rows.length === 0) return { bytes: new Uint8Array(0), after: null };
  const records = rows.map((r) => Object.fromEntries(d.columns.map((c, i) => [c.name, r[`c${i}`] ?? null])));
  const last = rows[rows.length - 1]!;
  return {
    // Encoded into a buffer of its own (not Buffer's shared pool), so that a thread can move it whole.
    bytes: utf8.encode(written(job.source, d, records)),
    after: rows.length < PAGE ? null : d.key.map((_, i) => last[`k${i}`]),
  };
}

/** Pages read in this process, on its event loop: EXPORT_THREADS=0, and tools that run alone. */
export const pagesHere =
  (sql: Sql): PageReader =>
  (_tenantId, job) =>
    readPage(sql, job);
