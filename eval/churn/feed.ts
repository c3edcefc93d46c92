// Sends a synthetic cohort to the service the way a tenant's systems would: customers and product
// events through the REST API, billing, support and team chat through signed Stripe, Intercom and Slack
// webhooks to the inbound route, outcomes through churn-outcome, training through churn-model/train.
import type { FastifyInstance } from 'fastify';
import {
  intercomConversation,
  signIntercom,
  signSlack,
  signStripe,
  stripeEvent,
  stripeInvoice,
  stripeSubscription,
} from '../../test/support/providers.ts';
import type { SyntheticCustomer } from './cohort.ts';

const DAY_S = 86_400;

export interface Tenant {
  tenantId: string;
  apiKey: string;
  /** A session of the workspace owner, for what the dashboard does (setting inbound secrets). */
  token: string;
}

async function call(app: FastifyInstance, t: Tenant, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) {
  const res = await app.inject({ method, url: `/api/v1${url}`, headers: { 'x-api-key': t.apiKey }, payload: payload as object });
  if (res.statusCode >= 400) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
  return res.json();
}

async function secret(app: FastifyInstance, t: Tenant, provider: 'stripe' | 'intercom' | 'slack'): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
    payload: { query: `mutation { setInboundSecret(provider: ${provider}) { secret } }` },
  });
  const body = res.json();
  if (!body.data?.setInboundSecret) throw new Error(`setInboundSecret: ${res.body.slice(0, 300)}`);
  return body.data.setInboundSecret.secret;
}

async function inbound(app: FastifyInstance, provider: string, tenantId: string, s: { body: string; headers: Record<string, string> }) {
  const res = await app.inject({ method: 'POST', url: `/api/v1/webhooks/in/${provider}/${tenantId}`, headers: s.headers, payload: s.body });
  if (res.statusCode !== 202 && res.statusCode !== 200) throw new Error(`inbound ${provider}: ${res.statusCode} ${res.body.slice(0, 300)}`);
}

/** Sends every customer's history; resolves with the service's customer id of each synthetic customer. */
export async function feedCohort(
  app: FastifyInstance,
  t: Tenant,
  cohort: SyntheticCustomer[],
  /** Resolves once the worker has processed every webhook the tenant was sent. */
  settled: () => Promise<void>,
  now = Date.now(),
): Promise<string[]> {
  const at = (day: number) => Math.floor(now / 1000 + day * DAY_S);
  const iso = (day: number) => new Date(now + day * DAY_S * 1000).toISOString();
  const ids: string[] = [];
  for (const c of cohort) {
    const created = await call(app, t, 'POST', '/customers', {
      name: `Synthetic ${c.index}`,
      external_id: `syn-${c.index}`,
      domain: `c${c.index}.example`,
      // The customer's Slack workspace, so its chat events are attributed to it.
      ...(c.chat ? { identities: [{ provider: 'slack', external_id: `T_SYN${c.index}` }] } : {}),
    });
    ids.push(created.id);
  }

  // Product usage, in batches of 500.
  const events = cohort.flatMap((c) =>
    c.usage.map((u) => ({ external_id: `syn-${c.index}`, event: 'feature_used', timestamp: iso(u.day), user_id: u.user })),
  );
  for (let i = 0; i < events.length; i += 500) {
    const res = await call(app, t, 'POST', '/events', { events: events.slice(i, i + 500) });
    if (res.errors?.length) throw new Error(`events refused: ${JSON.stringify(res.errors.slice(0, 3))}`);
  }

  const stripe = cohort.some((c) => c.billing) ? await secret(app, t, 'stripe') : '';
  const intercom = cohort.some((c) => c.support) ? await secret(app, t, 'intercom') : '';
  const slack = cohort.some((c) => c.chat) ? await secret(app, t, 'slack') : '';
  // Three waves, each settled before the next, so a provider object exists before its updates arrive.
  const sends: (() => Promise<void>)[][] = [[], [], []];
  for (const c of cohort) {
    const email = `billing@c${c.index}.example`;
    if (c.billing) {
      const b = c.billing;
      const cus = `cus_syn${c.index}`;
      const sub = `sub_syn${c.index}`;
      const subscription = (seats: number, status: string, day: number) =>
        stripeEvent(
          day === -85 ? 'customer.subscription.created' : 'customer.subscription.updated',
          {
            ...stripeSubscription(sub, cus, null),
            status,
            items: {
              object: 'list',
              data: [
                {
                  id: `si_syn${c.index}`,
                  quantity: seats,
                  price: {
                    id: 'price_seat',
                    unit_amount: b.unitMinor,
                    currency: 'usd',
                    recurring: { interval: 'month', interval_count: 1 },
                  },
                },
              ],
            },
          },
          at(day),
        );
      sends[0]!.push(() =>
        inbound(
          app,
          'stripe',
          t.tenantId,
          signStripe(
            stripe,
            stripeEvent('customer.created', { id: cus, object: 'customer', email, name: `Synthetic ${c.index}`, metadata: {} }, at(-86)),
          ),
        ),
      );
      sends[1]!.push(() => inbound(app, 'stripe', t.tenantId, signStripe(stripe, subscription(b.seats0, 'active', -85))));
      for (const ch of b.changes)
        sends[2]!.push(() => inbound(app, 'stripe', t.tenantId, signStripe(stripe, subscription(ch.seats, ch.status ?? 'active', ch.day))));
      b.invoices.forEach((inv, k) => {
        const invoice = stripeInvoice(`in_syn${c.index}_${k}`, cus, b.unitMinor * b.seats0, {
          status: 'open',
          due_date: at(inv.day + 7),
          customer_email: email,
        });
        sends[1]!.push(() =>
          inbound(app, 'stripe', t.tenantId, signStripe(stripe, stripeEvent('invoice.finalized', invoice, at(inv.day)))),
        );
        for (const f of inv.failedDays)
          sends[2]!.push(() =>
            inbound(app, 'stripe', t.tenantId, signStripe(stripe, stripeEvent('invoice.payment_failed', invoice, at(f)))),
          );
        if (inv.overdue)
          sends[2]!.push(() =>
            inbound(app, 'stripe', t.tenantId, signStripe(stripe, stripeEvent('invoice.overdue', invoice, at(inv.day + 8)))),
          );
        if (inv.paid) {
          const paidDay = Math.min(-0.5, Math.max(inv.day, ...inv.failedDays) + 1);
          sends[2]!.push(() =>
            inbound(
              app,
              'stripe',
              t.tenantId,
              signStripe(stripe, stripeEvent('invoice.paid', { ...invoice, status: 'paid' }, at(paidDay))),
            ),
          );
        }
      });
    }
    for (const [k, m] of (c.chat ?? []).entries()) {
      // Slack Events API: the message's own time in `ts`, the delivery signed now.
      const ts = `${at(m.day)}.${String(k).padStart(6, '0')}`;
      sends[1]!.push(() =>
        inbound(
          app,
          'slack',
          t.tenantId,
          signSlack(slack, {
            token: 'x',
            team_id: `T_SYN${c.index}`,
            api_app_id: 'A1',
            type: 'event_callback',
            event_id: `EvSYN${c.index}x${k}`,
            event_time: at(m.day),
            event: { type: 'message', channel: `C_SYN${c.index}`, user: m.user, text: 'Thanks, that helps', ts, event_ts: ts },
          }),
        ),
      );
    }
    for (const [k, conv] of (c.support ?? []).entries()) {
      const id = `conv_syn${c.index}_${k}`;
      const send = (topic: string, day: number, extra: object = {}) =>
        sends[topic === 'conversation.user.created' ? 1 : 2]!.push(() =>
          inbound(
            app,
            'intercom',
            t.tenantId,
            signIntercom(intercom, {
              ...intercomConversation(topic, email, {
                id,
                source: { author: { type: 'user', email }, body: `<p>${conv.text}</p>` },
                ...extra,
              }),
              created_at: at(day),
            }),
          ),
        );
      send('conversation.user.created', conv.day);
      if (conv.firstResponseHours !== null && conv.day + conv.firstResponseHours / 24 < 0)
        send('conversation.admin.replied', conv.day + conv.firstResponseHours / 24);
      if (conv.closedAfterDays !== null && conv.day + conv.closedAfterDays < 0)
        send('conversation.admin.closed', conv.day + conv.closedAfterDays);
      if (conv.rating !== null && conv.closedAfterDays !== null && conv.day + conv.closedAfterDays + 0.1 < 0)
        send('conversation.rating.added', conv.day + conv.closedAfterDays + 0.1, { conversation_rating: { rating: conv.rating } });
    }
  }
  for (const wave of sends) {
    // A few requests at a time, as providers deliver.
    for (let i = 0; i < wave.length; i += 16) await Promise.all(wave.slice(i, i + 16).map((f) => f()));
    await settled();
  }
  return ids;
}

/** Labels outcomes one request each, in the order given (so their times follow it). */
export async function label(app: FastifyInstance, t: Tenant, outcomes: { id: string; churned: boolean }[]) {
  for (const o of outcomes) await call(app, t, 'POST', `/customers/${o.id}/churn-outcome`, { churned: o.churned });
}

/**
 * Trains as a client does: a training that outlives the request (202) is read at its `Location` until it
 * has ended. Answers the training's figures.
 */
export async function train(app: FastifyInstance, t: Tenant) {
  const res = await app.inject({ method: 'POST', url: '/api/v1/churn-model/train', headers: { 'x-api-key': t.apiKey } });
  if (res.statusCode === 200) return res.json();
  if (res.statusCode !== 202) throw new Error(`POST /churn-model/train: ${res.statusCode} ${res.body.slice(0, 300)}`);
  for (;;) {
    await new Promise((r) => setTimeout(r, 1000));
    const run = await call(app, t, 'GET', String(res.headers.location).replace('/api/v1', ''));
    if (run.status === 'succeeded') return run.result;
    if (run.status === 'failed') throw new Error(`the training failed: ${run.error.code} ${run.error.message}`);
  }
}
export const resetModel = (app: FastifyInstance, t: Tenant) => call(app, t, 'DELETE', '/churn-model');
export const model = (app: FastifyInstance, t: Tenant) => call(app, t, 'GET', '/churn-model');

export interface Scored {
  probability: number | null;
  modelVersion: string | null;
  health: number | null;
  dimensions: Record<string, number | null>;
}

/** Each customer's prediction and health as the API serves them. */
export async function scored(app: FastifyInstance, t: Tenant, ids: string[]): Promise<Scored[]> {
  const out: Scored[] = [];
  for (let i = 0; i < ids.length; i += 16) {
    const part = await Promise.all(
      ids.slice(i, i + 16).map(async (id) => {
        const [p, h] = await Promise.all([
          call(app, t, 'GET', `/customers/${id}/churn-prediction`),
          call(app, t, 'GET', `/customers/${id}/health`),
        ]);
        return {
          probability: p.probability,
          modelVersion: p.model_version,
          health: h.score,
          dimensions: Object.fromEntries((h.dimensions as { key: string; score: number | null }[]).map((d) => [d.key, d.score])),
        };
      }),
    );
    out.push(...part);
  }
  return out;
}
