import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchedReads, MAX_BATCH, MAX_PAGES } from '../../src/services/customer-read-batches.ts';
import { createCustomerReads } from '../../src/services/customer-reads.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { customer, scoredCustomer, tenantWithKey } from '../support/factories.ts';
import type { PageRequest, PageRow } from '../../src/services/customer-reads.ts';

// Reads of one customer asked for at the same moment run as one statement; each must still get exactly
// what a statement of its own would have read.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** The test's pool, with the statements sent through it counted and, when asked, their answers held back or failed. */
function watchedPool() {
  const statements: string[] = [];
  let hold: Promise<void> | null = null;
  let failNext: Error | null = null;
  const pool = {
    query: async (config: pg.QueryConfig) => {
      statements.push(config.text);
      if (failNext) {
        const e = failNext;
        failNext = null;
        throw e;
      }
      const gate = hold;
      const result = await t.pool.query(config);
      if (gate) await gate;
      return result;
    },
  } as unknown as pg.Pool;
  return {
    pool,
    statements,
    /** Answers of statements sent from now on wait until the returned function is called. */
    holdAnswers: () => {
      let open!: () => void;
      hold = new Promise<void>((r) => (open = r));
      return () => {
        hold = null;
        open();
      };
    },
    failNextStatement: (e: Error) => (failNext = e),
  };
}

/** A row as a statement of its own reads it: batched rows also carry the index of their request. */
function withoutIndex<T extends object | null>(row: T): T {
  if (!row || !('batchIndex' in row)) return row;
  const { batchIndex: _, ...rest } = row;
  return rest as T;
}

const scores = { usage: 40, engagement: 55, support: null, billing: 90, growth: 20 };

describe('reads of one customer asked for together', () => {
  it('run as one statement per kind of read, each answering what a statement of its own would', async () => {
    const a = await tenantWithKey(t.prisma);
    const b = await tenantWithKey(t.prisma);
    const scored = (await scoredCustomer(t.prisma, a.tenantId, scores)).customer;
    const plain = await customer(t.prisma, a.tenantId);
    const theirs = (await scoredCustomer(t.prisma, b.tenantId, scores)).customer;
    const watched = watchedPool();
    const batched = batchedReads(watched.pool, createCustomerReads(watched.pool));
    const single = createCustomerReads(t.pool);
    const asks: [string, string, boolean][] = [
      [a.tenantId, scored.id, true],
      [a.tenantId, plain.id, true],
      [b.tenantId, theirs.id, true],
      [a.tenantId, scored.id, true],
      [a.tenantId, scored.id, false],
      [b.tenantId, theirs.id, false],
    ];

    const together = (await Promise.all(asks.map(([tenant, id, health]) => batched.one(tenant, id, { health })))).map(withoutIndex);

    expect(watched.statements).toHaveLength(2);
    const alone = [];
    for (const [tenant, id, health] of asks) alone.push(await single.one(tenant, id, { health }));
    expect(together).toEqual(alone);
    expect(together.map((c) => c?.id)).toEqual(asks.map(([, id]) => id));
    // The same customer asked for twice gets two objects: no request can change what another answers.
    expect(together[0]).not.toBe(together[3]);
  });

  it("never answers a customer to another tenant's read in the same statement", async () => {
    const a = await tenantWithKey(t.prisma);
    const b = await tenantWithKey(t.prisma);
    const theirs = (await scoredCustomer(t.prisma, b.tenantId, scores)).customer;
    const watched = watchedPool();
    const batched = batchedReads(watched.pool, createCustomerReads(watched.pool));

    const [owner, other, otherPlain] = await Promise.all([
      batched.one(b.tenantId, theirs.id, { health: true }),
      batched.one(a.tenantId, theirs.id, { health: true }),
      batched.one(a.tenantId, theirs.id, { health: false }),
    ]);

    expect(owner?.id).toBe(theirs.id);
    expect(other).toBeNull();
    expect(otherPlain).toBeNull();
    expect(watched.statements).toHaveLength(2);
  });

  it('gives a read asked for after a commit its own statement, so it sees the change though an earlier read is still out', async () => {
    const a = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, a.tenantId, { name: 'Before' });
    const watched = watchedPool();
    const batched = batchedReads(watched.pool, createCustomerReads(watched.pool));
    const release = watched.holdAnswers();
    const earlier = batched.one(a.tenantId, c.id, { health: true });
    // The earlier statement has run and its answer is held back.
    await expect.poll(() => watched.statements.length).toBe(1);
    await new Promise((r) => setTimeout(r, 50));
    await t.prisma.customer.update({ where: { id: c.id }, data: { name: 'After' } });

    const later = batched.one(a.tenantId, c.id, { health: true });
    release();

    expect((await earlier)?.name).toBe('Before');
    expect((await later)?.name).toBe('After');
    expect(watched.statements).toHaveLength(2);
  });

  it('runs each read of a shared statement that failed alone, so one cause fails no other request', async () => {
    const a = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, a.tenantId);
    const d = await customer(t.prisma, a.tenantId);
    const watched = watchedPool();
    const batched = batchedReads(watched.pool, createCustomerReads(watched.pool));
    watched.failNextStatement(new Error('invalid input syntax'));

    const read = await Promise.all([batched.one(a.tenantId, c.id, { health: true }), batched.one(a.tenantId, d.id, { health: true })]);

    expect(read.map((r) => r?.id)).toEqual([c.id, d.id]);
    expect(watched.statements.map((x) => x.includes('unnest'))).toEqual([true, false, false]);
  });

  it('fails every read of a shared statement when the pool is busy, as each would have failed', async () => {
    const a = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, a.tenantId);
    const watched = watchedPool();
    const batched = batchedReads(watched.pool, createCustomerReads(watched.pool));
    watched.failNextStatement(new Error('timeout exceeded when trying to connect'));

    const failed = await Promise.allSettled([
      batched.one(a.tenantId, c.id, { health: true }),
      batched.one(a.tenantId, c.id, { health: true }),
    ]);

    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(watched.statements).toHaveLength(1);
    expect((await batched.one(a.tenantId, c.id, { health: true }))?.id).toBe(c.id);
  });

  it('runs a read alone in its turn as the statement it would run without batching', async () => {
    const a = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, a.tenantId);
    const watched = watchedPool();
    const batched = batchedReads(watched.pool, createCustomerReads(watched.pool));

    expect((await batched.one(a.tenantId, c.id, { health: true }))?.id).toBe(c.id);

    expect(watched.statements).toHaveLength(1);
    expect(watched.statements[0]).not.toContain('unnest');
  });

  it(`sends at most ${MAX_BATCH} reads in one statement`, async () => {
    const a = await tenantWithKey(t.prisma);
    const c = await customer(t.prisma, a.tenantId);
    const watched = watchedPool();
    const batched = batchedReads(watched.pool, createCustomerReads(watched.pool));
    const ids = [...Array.from({ length: MAX_BATCH }, () => randomUUID()), c.id];

    const found = await Promise.all(ids.map((id) => batched.one(a.tenantId, id, { health: true })));

    expect(watched.statements).toHaveLength(2);
    expect(found.filter(Boolean).map((x) => x!.id)).toEqual([c.id]);
  });
});

describe('pages asked for together', () => {
  const newest = { field: 'createdAt', direction: 'desc' } as const;
  const byScore = { field: 'healthScore', direction: 'asc', nullable: true } as const;

  /** Two tenants with customers whose sort values tie and are missing, so orders and cursors are tested at their edges. */
  async function twoTenants() {
    const tenants = [];
    for (let n = 0; n < 2; n++) {
      const { tenantId } = await tenantWithKey(t.prisma);
      const at = new Date('2026-03-01T00:00:00Z').getTime();
      for (let i = 0; i < 7; i++) {
        await t.prisma.customer.create({
          data: {
            tenantId,
            name: `T${n} ${i % 4}`,
            createdAt: new Date(at + (i % 3) * 1000),
            healthScore: i % 3 === 0 ? null : (i * 13) % 26,
            healthStatus: i % 3 === 0 ? null : i % 2 ? 'healthy' : 'at_risk',
            // Fractions a float4 cannot hold exactly, so a cursor bound as the wrong type would skip or repeat rows.
            churnProbability: i % 4 === 0 ? null : ((i % 3) + 0.1) / 3,
            churnRiskLevel: i % 2 ? 'low' : 'high',
          },
        });
      }
      tenants.push(tenantId);
    }
    return tenants as [string, string];
  }

  /** The pages read all at once through the batches, and each by a statement of its own, one after another. */
  async function pagesBothWays(requests: PageRequest[]) {
    const watched = watchedPool();
    const batched = batchedReads(watched.pool, createCustomerReads(watched.pool));
    const together = (await Promise.all(requests.map((r) => batched.page(r)))).map((rows) => rows.map(withoutIndex));
    const single = createCustomerReads(t.pool);
    const alone = [];
    for (const r of requests) alone.push(await single.page(r));
    return { together, alone, statements: watched.statements };
  }

  it('run as one statement per tenant and shape, each answering the rows and order of a statement of its own', async () => {
    const [a, b] = await twoTenants();
    const single = createCustomerReads(t.pool);
    const [, secondOfA, thirdOfA] = await single.page({ tenantId: a, sort: byScore, take: 3 });
    const [firstOfB] = await single.page({ tenantId: b, sort: byScore, take: 1 });
    const after = (row: PageRow | undefined) => ({ value: row!.healthScore as number, id: row!.id });
    const requests: PageRequest[] = [
      { tenantId: a, sort: newest, take: 4 },
      { tenantId: a, sort: newest, take: 2 },
      { tenantId: b, sort: newest, take: 3 },
      { tenantId: a, sort: newest, take: 10, riskLevel: 'low' },
      { tenantId: a, sort: newest, take: 10, riskLevel: 'high' },
      { tenantId: a, sort: byScore, take: 5, after: after(secondOfA) },
      { tenantId: a, sort: byScore, take: 5, after: after(thirdOfA) },
      { tenantId: b, sort: byScore, take: 5, after: after(firstOfB) },
    ];
    const { together, alone, statements } = await pagesBothWays(requests);

    expect(together).toEqual(alone);
    expect(together.every((rows, i) => rows.every((row) => row.tenantId === requests[i]!.tenantId))).toBe(true);
    // Shared: A's two newest pages, A's two filtered pages, A's two pages after a cursor. Alone: B's two.
    expect(statements.map((x) => x.includes('unnest')).sort()).toEqual([false, false, true, true, true]);
  });

  it('answer every order, filter and cursor exactly as statements of their own, tenants side by side', async () => {
    const [a, b] = await twoTenants();
    const empty = (await tenantWithKey(t.prisma)).tenantId;
    const single = createCustomerReads(t.pool);
    const sorts: PageRequest['sort'][] = (['createdAt', 'name', 'healthScore', 'churnProbability'] as const).flatMap((field) =>
      (['asc', 'desc'] as const).map((direction) => ({
        field,
        direction,
        nullable: field === 'healthScore' || field === 'churnProbability',
      })),
    );
    const filters = [{}, { riskLevel: 'low' }, { healthStatus: 'at_risk' }, { riskLevel: 'high', healthStatus: 'healthy' }];
    const requests: PageRequest[] = [];
    for (const tenantId of [a, b, empty])
      for (const sort of sorts)
        for (const filter of filters) {
          const base = { tenantId, sort, ...filter };
          // The first page, then a page after every row of the whole order: cursors on ties and on nulls.
          requests.push({ ...base, take: 3 });
          for (const row of await single.page({ ...base, take: 100 }))
            requests.push({ ...base, take: 3, after: { value: row[sort.field] as Date | string | number | null, id: row.id } });
        }
    const { together, alone, statements } = await pagesBothWays(requests);

    expect(together).toEqual(alone);
    expect(requests.length).toBeGreaterThan(250);
    expect(statements.length).toBeLessThan(requests.length * 0.75);
  });

  it('never puts pages of two tenants in one statement', async () => {
    const [a, b] = await twoTenants();
    const watched = watchedPool();
    const batched = batchedReads(watched.pool, createCustomerReads(watched.pool));

    await Promise.all([a, a, b, b].map((tenantId) => batched.page({ tenantId, sort: newest, take: 3 })));

    expect(watched.statements).toHaveLength(2);
    expect(watched.statements.every((x) => x.includes('unnest'))).toBe(true);
  });

  it(`reads at most ${MAX_PAGES} pages of a tenant in one statement`, async () => {
    const [a] = await twoTenants();
    const watched = watchedPool();
    const batched = batchedReads(watched.pool, createCustomerReads(watched.pool));

    const read = await Promise.all(Array.from({ length: MAX_PAGES + 1 }, () => batched.page({ tenantId: a, sort: newest, take: 2 })));

    expect(watched.statements).toHaveLength(2);
    expect(new Set(read.map((rows) => rows.map((r) => r.id).join()))).toHaveProperty('size', 1);
  });

  it('gives each request its own rows when two ask for the same page', async () => {
    const [a] = await twoTenants();
    const watched = watchedPool();
    const batched = batchedReads(watched.pool, createCustomerReads(watched.pool));
    const request: PageRequest = { tenantId: a, sort: newest, take: 5 };

    const [one, two] = await Promise.all([batched.page(request), batched.page(request)]);

    expect(one!.map(withoutIndex)).toEqual(two!.map(withoutIndex));
    expect(one![0]).not.toBe(two![0]);
    expect(watched.statements).toHaveLength(1);
  });
});
