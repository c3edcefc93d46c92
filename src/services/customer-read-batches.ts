import DataLoader from 'dataloader';
import type pg from 'pg';
import { onPg } from '../db/sql.ts';
import { isPoolExhausted } from '../errors.ts';
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

/** Reads of one customer in one statement at most; more make another. */
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

/** Pages of one tenant in one statement at most: they run one after another inside it. */
export const MAX_PAGES = 50;

/**
 * Runs a batch's requests as one statement (`shared`), or each alone with the statement it would run
 * without batching: when it is alone, and when the shared statement failed for any reason but a busy pool
 * (a reason one request's values or one tenant's data gave must not fail the others; a busy pool answers
 * them all 503 as before).
 */
async function together<A, V>(
  asks: readonly A[],
  alone: (ask: A) => Promise<V>,
  shared: (asks: readonly A[]) => Promise<V[]>,
): Promise<(V | Error)[]> {
  if (asks.length === 1) return [await alone(asks[0]!)];
  try {
    return await shared(asks);
  } catch (e) {
    if (isPoolExhausted(e)) throw e;
    const settled = await Promise.allSettled(asks.map(alone));
    return settled.map((r) => (r.status === 'fulfilled' ? r.value : r.reason instanceof Error ? r.reason : new Error(String(r.reason))));
  }
}

/**
 * The hot reads of customers, asked for by many requests at once (a read under load, a dashboard opening
 * many customers), cost one statement per kind of read instead of one per request. One customer's reads
 * become rows of `unnest` joined to their customer, whatever their tenants: each is one row found by its
 * key. A tenant's pages of one shape (filters, order, cursor) become rows of `unnest`, each reading its own
 * page beside it; pages of different tenants never share a statement, so one tenant's slow page delays
 * only its own. Each request receives the rows of its own row of `unnest` and no other, and the tenant is
 * part of every request's match. A statement starts only after every read in it was asked for, so each
 * sees all that was committed before its request came, as a statement of its own would; a read asked for
 * while one runs waits for the next rather than joining it. A request alone in its turn runs the
 * statement it would run without batching.
 */
export function batchedReads(pool: pg.Pool, reads: CustomerReads): CustomerReads {
  const sql = onPg(pool);

  const oneLoader = (health: boolean) => {
    const text = health ? oneStatement(SELECT_HEALTH, HEALTH_FROM) : oneStatement(SELECT_C, '');
    return new DataLoader<OneAsk, CustomerWithHealth | null>(
      (asks) =>
        together(
          asks,
          (a) => reads.one(a.tenantId, a.id, { health }),
          async (all) => {
            const rows = await sql.query<Row>(text, [all.map((a) => a.id), all.map((a) => a.tenantId)]);
            return byRequest(all.length, rows).map(([row]) =>
              !row ? null : health ? customerOf(row as unknown as HealthRow) : (row as unknown as PageRow),
            );
          },
        ),
      TURN,
    );
  };
  const plain = oneLoader(false);
  const health = oneLoader(true);

  type PageAsk = PageShape & { request: PageRequest };
  const pagesOfOneTenant = (asks: readonly PageAsk[]) =>
    together(
      asks,
      (a) => reads.page(a.request),
      async (all) => {
        const { text, values } = batchedPageStatement(all);
        return byRequest(all.length, await sql.query<Row>(text, values)) as unknown as PageRow[][];
      },
    );
  // One loader per shape of page; the shapes are few (orders × filters × cursor kinds). A batch is split
  // by tenant, and each tenant's part runs in statements of at most MAX_PAGES pages, side by side.
  const pages = new Map<string, DataLoader<PageAsk, PageRow[]>>();
  const pageLoader = (key: string) => {
    let loader = pages.get(key);
    if (!loader) {
      loader = new DataLoader(async (asks) => {
        const parts = new Map<string, number[]>();
        asks.forEach((a, i) => {
          const part = parts.get(a.request.tenantId) ?? [];
          if (part.push(i) === 1) parts.set(a.request.tenantId, part);
        });
        const answers: (PageRow[] | Error)[] = new Array(asks.length);
        const runs = [...parts.values()].flatMap((part) => {
          const chunks = [];
          for (let i = 0; i < part.length; i += MAX_PAGES) chunks.push(part.slice(i, i + MAX_PAGES));
          return chunks.map(async (chunk) => {
            const rows = await pagesOfOneTenant(chunk.map((i) => asks[i]!));
            chunk.forEach((i, n) => (answers[i] = rows[n]!));
          });
        });
        await Promise.all(runs);
        return answers;
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
