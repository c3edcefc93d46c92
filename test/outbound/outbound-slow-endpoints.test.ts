import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/sql.ts';
import { enqueueEvents } from '../../src/outbox/events/enqueue.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { exampleEvent, tenantWithKey } from '../support/factories.ts';
import { startReceiver, testCertificate } from '../support/receiver.ts';

// Slow receivers on 127.0.0.1 behind a backlog of due deliveries: the worker claims only what it can send
// now (two at a time to an endpoint that answers slowly) and leaves the rest alone until a slot frees.
// PostgreSQL counts the claims and the give-backs: row triggers on webhook_deliveries feed two sequences.
const tls = testCertificate();
const ENDPOINTS = 6;
const PER_ENDPOINT = 15;
const ANSWER_AFTER_MS = 2000;
const WATCH_MS = 5000;
let t: TestApp;
let rx: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  // Slow is a third of the timeout or more: 2 s answers against a 4.5 s timeout are slow, and none times out.
  t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, ca: tls.cert, deliveryTimeoutMs: 4500 });
  rx = await startReceiver(tls);
  await t.pool.query(`
    CREATE SEQUENCE delivery_claims; CREATE SEQUENCE delivery_give_backs;
    CREATE FUNCTION count_claim() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM nextval('delivery_claims'); RETURN NULL; END $$;
    CREATE FUNCTION count_give_back() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM nextval('delivery_give_backs'); RETURN NULL; END $$;
    -- A lease taken.
    CREATE TRIGGER claims AFTER UPDATE ON webhook_deliveries FOR EACH ROW
      WHEN (NEW.locked_until IS NOT NULL AND NEW.locked_until IS DISTINCT FROM OLD.locked_until) EXECUTE FUNCTION count_claim();
    -- A lease ended with no attempt made: the delivery given back, still pending.
    CREATE TRIGGER give_backs AFTER UPDATE ON webhook_deliveries FOR EACH ROW
      WHEN (OLD.locked_until IS NOT NULL AND NEW.locked_until IS NULL AND NEW.status = 'pending' AND NEW.attempts = OLD.attempts)
      EXECUTE FUNCTION count_give_back();
  `);
});
afterAll(async () => {
  rx.close();
  await t.close();
});

const counted = async () => {
  const { rows } = await t.pool.query<{ claims: string; give_backs: string }>(
    `SELECT (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM delivery_claims) AS claims,
            (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM delivery_give_backs) AS give_backs`,
  );
  return { claims: Number(rows[0]!.claims), giveBacks: Number(rows[0]!.give_backs) };
};

describe('a backlog behind slow endpoints', () => {
  it('claims only what it can send now and gives nothing back, while each slow endpoint gets two at a time', async () => {
    rx.set('ok', ANSWER_AFTER_MS);
    const { tenantId, apiKey } = await tenantWithKey(t.prisma);
    for (let i = 0; i < ENDPOINTS; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/webhook-endpoints',
        headers: { 'x-api-key': apiKey },
        payload: { url: `${rx.url}?endpoint=${i}`, events: ['invoice.created'] },
      });
      expect(res.statusCode).toBe(201);
    }
    const worker = t.startWorker();
    try {
      await inTransaction(t.pool, (sql) =>
        enqueueEvents(
          sql,
          Array.from({ length: PER_ENDPOINT }, (_, i) => exampleEvent(tenantId, 'invoice.created', `slow:${i}`)),
        ),
      );
      await expect.poll(() => t.prisma.webhookDelivery.count({ where: { tenantId } }), { timeout: 5000 }).toBe(ENDPOINTS * PER_ENDPOINT);
      await new Promise((r) => setTimeout(r, WATCH_MS));
      const { claims, giveBacks } = await counted();
      // At most two in flight per endpoint, each slot refilled as an answer comes: 6 × 2 × ⌈5 s / 2 s⌉.
      const sendable = ENDPOINTS * 2 * Math.ceil(WATCH_MS / ANSWER_AFTER_MS);
      expect(giveBacks).toBe(0);
      expect(claims).toBeLessThanOrEqual(sendable);
      expect(claims).toBeGreaterThanOrEqual(ENDPOINTS * 2 * 2);
      // Each endpoint was sent at most two at once: its third request never came before its first was answered.
      for (let i = 0; i < ENDPOINTS; i++) {
        const at = rx.hits.filter((h) => h.url.endsWith(`endpoint=${i}`)).map((h) => h.at);
        for (let j = 2; j < at.length; j++) expect(at[j]! - at[j - 2]!).toBeGreaterThanOrEqual(ANSWER_AFTER_MS - 50);
      }
    } finally {
      await worker.close();
    }
  });
});
