import { operator } from '../../src/services/audit.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInboundSecretStore } from '../../src/services/integrations.ts';
import { createMemoryQueue } from '../../src/queue/memory.ts';
import type { Queue } from '../../src/queue/queue.ts';
import { createTestApp, type TestApp, testSecretBox } from '../support/app.ts';
import { tenantWithKey } from '../support/factories.ts';
import * as p from '../support/providers.ts';

// With the broker down, an inbound event is answered 202 once it is stored, without each request
// waiting on the broker: after one failed publish the inbox leaves publishing to the sweeper.

/** The in-process queue, with publishing that fails (as a broker that does not confirm) while `down`. */
function flakyQueue() {
  const inner = createMemoryQueue({ retryDelayMs: 50 });
  const state = { down: true, attempts: 0 };
  const queue: Queue = {
    ...inner,
    async publish(topic, body, opts) {
      state.attempts++;
      if (state.down) throw new Error('publish not confirmed');
      return inner.publish(topic, body, opts);
    },
  };
  return { queue, state };
}

let t: TestApp;
const flaky = flakyQueue();
beforeAll(async () => {
  t = await createTestApp({ queue: flaky.queue });
});
afterAll(async () => {
  await t.close();
  await flaky.queue.close();
});

describe('inbound webhooks while the broker is down', () => {
  it('stores and answers 202 without trying the broker again for each event, and the sweeper publishes them once it is back', async () => {
    const { tenantId } = await tenantWithKey(t.prisma, 'free');
    const { secret } = await createInboundSecretStore(t.prisma, testSecretBox(), { cacheMs: 0 }).put({ tenantId, provider: 'stripe' }, operator(tenantId));
    const post = (i: number) => {
      const s = p.signStripe(secret, p.stripeEvent('customer.created', p.stripeCustomer(`cus_out${i}`)));
      return t.app.inject({ method: 'POST', url: `/api/v1/webhooks/in/stripe/${tenantId}`, headers: s.headers, payload: s.body });
    };

    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await post(i)).statusCode);
    expect(statuses).toEqual([202, 202, 202, 202, 202]);
    expect(await t.prisma.inboxEvent.count({ where: { tenantId } })).toBe(5);
    // The first event found the broker down; the other four did not wait on it.
    expect(flaky.state.attempts).toBe(1);

    flaky.state.down = false;
    await t.prisma.inboxEvent.updateMany({ where: { tenantId }, data: { receivedAt: new Date(Date.now() - 60_000) } });
    expect(await t.inbox.sweep({ olderThanMs: 1000 })).toBe(5);
    expect(await t.queue.depth('inbound.events')).toBe(5);
  });
});
