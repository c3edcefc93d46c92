import DataLoader from 'dataloader';
import type pg from 'pg';
import { onPg } from '../db/sql.ts';
import { isPoolExhausted } from '../errors.ts';
import {
  batchedOneStatement,
  batchedPageStatement,
  type CustomerReads,
  type CustomerWithHealth,
  oneOfBatchRow,
  type PageRequest,
  type PageRow,
  type PageShape,
  pageShape,
} from './customer-reads.ts';

/** Reads of one customer in one statement at most; more make another. */
export const MAX_BATCH = 500;

type Row = Record<string, unknown> & { batchIndex: number };

/**
 * Loads collect the reads asked for during one turn of the event loop (the requests whose bytes arrived
 * together) and run them when it ends. Nothing is remembered: each load reads afresh.
 */
const PER_TURN = { cache: false, maxBatchSize: MAX_BATCH, batchScheduleFn: (run: () => void) => setImmediate(run) } as const;

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

  const oneLoader = (health: boolean) =>
    new DataLoader<OneAsk, CustomerWithHealth | null>(
      (asks) =>
        together(
          asks,
          (a) => reads.one(a.tenantId, a.id, { health }),
          async (all) => {
            const { text, values } = batchedOneStatement(all, health);
            return byRequest(all.length, await sql.query<Row>(text, values)).map(([row]) => (row ? oneOfBatchRow(row, health) : null));
          },
        ),
      PER_TURN,
    );
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
        // Each tenant's asks, by their place in the batch, in chunks of MAX_PAGES.
        const chunksByTenant = new Map<string, number[][]>();
        asks.forEach((a, i) => {
          const chunks = chunksByTenant.get(a.request.tenantId) ?? [];
          if (!chunks.length) chunksByTenant.set(a.request.tenantId, chunks);
          const last = chunks.at(-1);
          if (last && last.length < MAX_PAGES) last.push(i);
          else chunks.push([i]);
        });
        const answers: (PageRow[] | Error)[] = new Array(asks.length);
        const runs = [...chunksByTenant.values()].flat().map(async (chunk) => {
          const rows = await pagesOfOneTenant(chunk.map((i) => asks[i]!));
          chunk.forEach((i, n) => (answers[i] = rows[n]!));
        });
        await Promise.all(runs);
        return answers;
      }, PER_TURN);
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
