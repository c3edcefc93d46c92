// A retry is due 5 s after a failed first attempt (src/outbox/sender/retry-schedule.ts); it must go out
// then, whatever else the worker is doing. Here the tenant's other endpoint hangs: each of its attempts
// holds a socket until the delivery timeout (20 s here, as long as the default 15), and it has more
// deliveries waiting than the tenant may have in flight.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/sql.ts';
import { enqueueEvents } from '../../src/outbox/events/enqueue.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { exampleEvent, tenantWithKey } from '../support/factories.ts';
import { startReceiver, testCertificate } from '../support/receiver.ts';

let t: TestApp;
let worker: { close(): Promise<void> };
const tls = testCertificate();
let hanging: Awaited<ReturnType<typeof startReceiver>>;
let recovering: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  [hanging, recovering] = [await startReceiver(tls), await startReceiver(tls)];
  t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, ca: tls.cert, deliveryTimeoutMs: 20_000 });
  worker = t.startWorker();
});
afterAll(async () => {
  hanging?.close();
  recovering?.close();
  await worker?.close();
  await t?.close();
});

describe('a due retry', () => {
  it(
    'goes out when due while another endpoint of the tenant hangs with more deliveries than the tenant may have in flight',
    { timeout: 60_000 },
    async () => {
      hanging.set('hang');
      recovering.set('fail');
      const { tenantId, apiKey } = await tenantWithKey(t.prisma);
      for (const [rx, events] of [
        [hanging, ['invoice.created']],
        [recovering, ['invoice.paid']],
      ] as const) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/webhook-endpoints',
          headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
          payload: { url: rx.url, events },
        });
        expect(res.statusCode).toBe(201);
      }
      await inTransaction(t.pool, (sql) =>
        enqueueEvents(sql, [
          ...Array.from({ length: 40 }, (_, i) => exampleEvent(tenantId, 'invoice.created', `hang:${i}`)),
          exampleEvent(tenantId, 'invoice.paid', 'recovers'),
        ]),
      );
      await expect.poll(() => recovering.hits.length, { timeout: 15_000 }).toBe(1);
      recovering.set('ok');
      const failed = () => t.prisma.webhookDelivery.findFirstOrThrow({ where: { tenantId, eventType: 'invoice.paid' } });
      await expect.poll(async () => (await failed()).attempts).toBe(1);
      const { nextAttemptAt } = await failed();
      await expect.poll(() => recovering.hits.length, { timeout: 30_000 }).toBe(2);
      // The due-delivery pass runs every second: the retry leaves within about that of its due time.
      expect(recovering.hits[1]!.at - nextAttemptAt!.getTime()).toBeLessThan(2_500);
    },
  );
});
