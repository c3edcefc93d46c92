// The events of one invoice applied by transactions side by side, in the interleavings a generator draws
// (test/support/interleave.ts): whichever goes first, the event accepted first is applied first, and no
// interleaving ends in a deadlock (docs/inbound-webhooks.md, "Order").
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/prisma.ts';
import { processInboxBatch, processInboxEvent } from '../../src/ingest/processor.ts';
import { tenantWithKey } from '../support/factories.ts';
import { storeGroup } from '../support/inbox.ts';
import { errorCodes, explain, interleave, RUNS, schedules, withFileDatabase } from '../support/interleave.ts';
import * as p from '../support/providers.ts';

let url: string;
let pool: pg.Pool;
let prisma: Db;
withFileDatabase((db) => ({ url, pool, prisma } = db));

/** An invoice's created, then (accepted after it had committed) its paid, and a created of another invoice beside it. */
async function pair() {
  const { tenantId } = await tenantWithKey(prisma);
  const invoice = `in_${randomUUID().slice(0, 8)}`;
  const cus = `cus_${randomUUID().slice(0, 8)}`;
  const [created] = await storeGroup(pool, tenantId, [p.stripeEvent('invoice.created', p.stripeInvoice(invoice, cus, 1200))]);
  const [paid, other] = await storeGroup(pool, tenantId, [
    p.stripeEvent('invoice.paid', p.stripeInvoice(invoice, cus, 1200, { status: 'paid' })),
    p.stripeEvent('invoice.created', p.stripeInvoice(`in_other_${randomUUID().slice(0, 8)}`, cus, 300)),
  ]);
  return { tenantId, invoice, created: created!, paid: paid!, other: other! };
}

/** What the consumer does for an event left behind once the earlier one is no longer held: a batch again. */
async function finish(ids: string[]) {
  for (let round = 0; round < 3; round++) {
    const { rows } = await pool.query<{ id: string }>(`SELECT id FROM inbox_events WHERE id = ANY($1::uuid[]) AND status = 'received'`, [
      ids,
    ]);
    if (rows.length === 0) return;
    await processInboxBatch(
      pool,
      rows.map((r) => ({ id: r.id })),
    );
  }
}

async function outcome(c: Awaited<ReturnType<typeof pair>>) {
  const { rows: statuses } = await pool.query<{ id: string; status: string }>(
    'SELECT id, status::text AS status FROM inbox_events WHERE id = ANY($1::uuid[])',
    [[c.created, c.paid, c.other]],
  );
  const status = Object.fromEntries(statuses.map((r) => [r.id, r.status]));
  const { rows: announced } = await pool.query<{ type: string }>(
    `SELECT o.type FROM outbox_events o JOIN invoices v ON o.subject = v.id::text WHERE v.tenant_id = $1 AND v.external_id = $2 ORDER BY o.type`,
    [c.tenantId, c.invoice],
  );
  return { created: status[c.created], paid: status[c.paid], other: status[c.other], announced: announced.map((r) => r.type) };
}

const inOrder = { created: 'processed', paid: 'processed', other: 'processed', announced: ['invoice.created', 'invoice.paid'] };

describe('the events of one invoice applied side by side, in every interleaving drawn', () => {
  it('a batch naming its paid beside a batch naming its created: created is applied first', async () => {
    await fc.assert(
      fc.asyncProperty(schedules, async (schedule) => {
        const c = await pair();
        const run = await interleave(
          url,
          {
            late: (gated) => processInboxBatch(gated, [{ id: c.paid }, { id: c.other }]),
            early: (gated) => processInboxBatch(gated, [{ id: c.created }]),
          },
          schedule,
        );
        expect(errorCodes(run), explain(run)).toEqual([]);
        await finish([c.created, c.paid, c.other]);
        expect(await outcome(c), explain(run)).toEqual(inOrder);
      }),
      { numRuns: RUNS },
    );
  });

  it('its paid applied on its own beside a batch naming its created: paid waits behind, never goes first', async () => {
    await fc.assert(
      fc.asyncProperty(schedules, async (schedule) => {
        const c = await pair();
        const run = await interleave(
          url,
          {
            alone: (gated) => processInboxEvent(gated, c.paid),
            early: (gated) => processInboxBatch(gated, [{ id: c.created }, { id: c.other }]),
          },
          schedule,
        );
        expect(errorCodes(run), explain(run)).toEqual([]);
        const alone = run.outcomes.alone!;
        expect(alone.ok && ['behind', 'processed'].includes(alone.value as string), explain(run)).toBe(true);
        await finish([c.created, c.paid, c.other]);
        expect(await outcome(c), explain(run)).toEqual(inOrder);
      }),
      { numRuns: RUNS },
    );
  });

  it('a batch naming its paid pulls its created in and applies both in order; created’s own batch then finds it done', async () => {
    const c = await pair();
    const results = await processInboxBatch(pool, [{ id: c.paid }]);
    expect(results.get(c.paid)).toBe('processed');
    expect((await processInboxBatch(pool, [{ id: c.created }])).get(c.created)).toBe('already_done');
    expect(await outcome(c)).toEqual({ ...inOrder, other: 'received' });
  });

  it('an event whose earlier one failed before is left behind until that one is applied or parked', async () => {
    const c = await pair();
    // Failed once on its own: retried by its own message, not pulled into a later event's batch.
    await pool.query('UPDATE inbox_events SET attempts = 1 WHERE id = $1', [c.created]);
    expect((await processInboxBatch(pool, [{ id: c.paid }])).get(c.paid)).toBe('behind');
    expect(await processInboxEvent(pool, c.paid)).toBe('behind');
    await pool.query(`UPDATE inbox_events SET status = 'failed' WHERE id = $1`, [c.created]);
    expect((await processInboxBatch(pool, [{ id: c.paid }])).get(c.paid)).toBe('processed');
  });
});
