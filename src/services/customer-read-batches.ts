import DataLoader from 'dataloader';
import type pg from 'pg';
import { onPg } from '../db/sql.ts';
import {
  batchedPageStatement,
  type CustomerReads,
  type CustomerWithHealth,
  customerOf,
  HEALTH_FROM,
  type HealthRow,
  type PageRequest,
  type PageRow,
  type PageShape,
  pageShape,
  SELECT_C,
  SELECT_HEALTH,
} from './customer-reads.ts';

/** Requests in one statement at most; more make another. */
export const MAX_BATCH = 500;

type Row = Record<string, unknown> & { batchIndex: number };

/**
 * Loads collect the reads asked for during one turn of the event loop (the requests whose bytes arrived
 * together) and run them when it ends. Nothing is remembered: each load reads afresh.
 */
const TURN = { cache: false, maxBatchSize: MAX_BATCH, batchScheduleFn: (run: () => void) => setImmediate(run) } as const;

/**
 * Each request's rows of a batched statement, by the 1-based index of the request each row carries. The
 * rows keep that index as a column: readers take the fields they name, and copying every row without it
 * cost more than the rest of the grouping.
 */
function byRequest(count: number, rows: Row[]): Row[][] {
  const answers: Row[][] = Array.from({ length: count }, () => []);
  for (const row of rows) answers[row.batchIndex - 1]!.push(row);
  return answers;
}

interface OneAsk {
  tenantId: string;
  id: string;
}

const oneStatement = (columns: string, joins: string) =>
  `SELECT k.n::int AS "batchIndex", ${columns}
   FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS k(id, tenant_id, n)
   JOIN customers c ON c.id = k.id AND c.tenant_id = k.tenant_id ${joins}`;

/**
 * The hot reads of customers, asked for by many requests at once (a read under load, a dashboard opening
 * many customers), cost one statement per kind of read instead of one per request. One customer's reads
 * become rows of `unnest` joined to their customer; pages of one shape (filters, order, cursor) become
 * rows of `unnest`, each reading its own page beside it. Each request receives the rows of its own row of
 * `unnest` and no other; requests of different tenants can share a statement, and the tenant is part of
 * every request's match, so none reads another's customers. A statement starts only after every read in
 * it was asked for, so each sees all that was committed before its request came, as a statement of its
 * own would; a read asked for while one runs waits for the next rather than joining it. A request alone
 * in its turn runs the statement it would run without batching.
 */
export function batchedReads(pool: pg.Pool, reads: CustomerReads): CustomerReads {
  const sql = onPg(pool);

  const oneLoader = (health: boolean) => {
    const text = health ? oneStatement(SELECT_HEALTH, HEALTH_FROM) : oneStatement(SELECT_C, '');
    return new DataLoader<OneAsk, CustomerWithHealth | null>(async (asks) => {
      if (asks.length === 1) return [await reads.one(asks[0]!.tenantId, asks[0]!.id, { health })];
      const rows = await sql.query<Row>(text, [asks.map((a) => a.id), asks.map((a) => a.tenantId)]);
      return byRequest(asks.length, rows).map(([row]) =>
        !row ? null : health ? customerOf(row as unknown as HealthRow) : (row as unknown as PageRow),
      );
    }, TURN);
  };
  const plain = oneLoader(false);
  const health = oneLoader(true);

  // One loader per shape of page; the shapes are few (orders × filters × cursor kinds).
  const pages = new Map<string, DataLoader<PageShape & { request: PageRequest }, PageRow[]>>();
  const pageLoader = (key: string) => {
    let loader = pages.get(key);
    if (!loader) {
      loader = new DataLoader(async (shapes) => {
        if (shapes.length === 1) return [await reads.page(shapes[0]!.request)];
        const { text, values } = batchedPageStatement(shapes);
        return byRequest(shapes.length, await sql.query<Row>(text, values)) as unknown as PageRow[][];
      }, TURN);
      pages.set(key, loader);
    }
    return loader;
  };

  return {
    ...reads,
    one: (tenantId: string, id: string, opts: { health: boolean }) => (opts.health ? health : plain).load({ tenantId, id }),
    page: (request: PageRequest) => {
      const shape = pageShape(request);
      return pageLoader(shape.key).load({ ...shape, request });
    },
  };
}
