import { Counter, Gauge, type Registry } from 'prom-client';

export interface RetentionRunRow {
  kind: string;
  last_run_at: Date;
  processed: string | number;
  behind: boolean;
}

export const RETENTION_RUNS_SQL = 'SELECT kind, last_run_at, processed, behind FROM retention_runs';

/**
 * What the worker's retention passes have done (src/lifecycle/retention.ts), read from PostgreSQL at scrape
 * time like the backlog gauges: the same from every API process, whichever worker ran the pass.
 */
export function registerRetentionMetrics(registry: Registry, query: () => Promise<RetentionRunRow[]>, onError: (e: unknown) => void) {
  let pending: Promise<RetentionRunRow[]> | null = null;
  const read = () => {
    pending ??= query()
      .catch((e) => {
        onError(e);
        return [];
      })
      .finally(() => {
        pending = null;
      });
    return pending;
  };
  new Counter({
    name: 'chs_retention_processed_total',
    help: 'Rows removed, emptied or rolled up by retention (and workspace removal), by kind of data',
    labelNames: ['kind'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const r of await read()) this.inc({ kind: r.kind }, Number(r.processed));
    },
  });
  new Gauge({
    name: 'chs_retention_last_run_timestamp_seconds',
    help: 'When a retention pass last finished a kind of data',
    labelNames: ['kind'],
    registers: [registry],
    async collect() {
      for (const r of await read()) this.set({ kind: r.kind }, r.last_run_at.getTime() / 1000);
    },
  });
  new Gauge({
    name: 'chs_retention_behind',
    help: '1 when the last pass stopped at its batch budget with more of that kind still due',
    labelNames: ['kind'],
    registers: [registry],
    async collect() {
      for (const r of await read()) this.set({ kind: r.kind }, r.behind ? 1 : 0);
    },
  });
}
