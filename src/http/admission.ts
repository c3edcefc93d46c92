import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Admission } from '../config.ts';
import { clientKey } from '../auth/attempt-counter.ts';
import { problemFor } from '../errors.ts';
import { PROBES } from './load-shedding.ts';
import { armBodyDeadline } from './request-deadline.ts';

/** Which budget a route's requests draw on; routes without one are credential-less (`anonymous`). */
export type AdmissionKind = 'api' | 'inbound';

declare module 'fastify' {
  interface FastifyContextConfig {
    admission?: AdmissionKind;
  }
}

/** Requests in flight per key, each key with the same ceiling. */
class Slots {
  private readonly held = new Map<string, number>();
  constructor(readonly max: number) {}
  full(key: string) {
    return (this.held.get(key) ?? 0) >= this.max;
  }
  take(key: string) {
    this.held.set(key, (this.held.get(key) ?? 0) + 1);
  }
  give(key: string) {
    const n = (this.held.get(key) ?? 1) - 1;
    if (n > 0) this.held.set(key, n);
    else this.held.delete(key);
  }
}

/** Whether the response is finished or its connection closed already: its 'finish' or 'close' has been. */
const gone = (reply: FastifyReply) => reply.raw.writableFinished || reply.raw.destroyed || Boolean(reply.raw.socket?.destroyed);

/** One tenant's API requests: `running` at most maxActivePerTenant, the rest waiting in arrival order. */
interface Lane {
  running: number;
  waiting: (() => void)[];
}

export interface AdmissionOptions extends Admission {
  /** Time the body of a credential-less request has to arrive. */
  unauthenticatedBodyTimeoutMs: number;
}

/**
 * Separate concurrency budgets, so that no traffic without a credential can take the capacity tenants'
 * API calls need, and no tenant can take what the other tenants need:
 *
 * - inbound webhooks draw on their own budget, counted on arrival;
 * - requests without a credential (sign-in, anonymous GraphQL, the dashboard's files) on another;
 * - both of those are also capped per client address, and their bodies must arrive within a short
 *   deadline (providers and sign-in forms send a few kilobytes at once);
 * - API calls are counted against the shared API budget only once authenticated, and each tenant may
 *   hold a part of it only; of that part only a few run at once and the rest wait in the tenant's own
 *   queue, so one tenant's burst queues behind itself rather than in front of others on the database pool.
 *
 * Beyond a budget a request gets 503 `service_unavailable` with Retry-After at once rather than queueing;
 * providers retry, and API clients are asked to.
 */
export function registerAdmission(app: FastifyInstance, opts: AdmissionOptions) {
  const ALL = '';
  const api = new Slots(opts.maxInFlight);
  const lanes = new Map<string, Lane>();
  const inbound = new Slots(opts.maxInFlightInbound);
  const anonymous = new Slots(opts.maxInFlightAnonymous);
  const perAddress = new Slots(opts.maxUnauthenticatedPerAddress);

  const refuse = (reply: FastifyReply, detail: string) =>
    reply.code(503).header('retry-after', '1').type('application/problem+json').send(problemFor('service_unavailable', detail));
  // A refused request's body is never read: closing the connection stops a trickling client from
  // keeping the socket.
  const refuseAndClose = (reply: FastifyReply, detail: string) => refuse(reply.header('connection', 'close'), detail);

  const holdUntilAnswered = (reply: FastifyReply, release: () => void) => {
    let released = false;
    const once = () => {
      if (!released) {
        released = true;
        release();
      }
    };
    reply.raw.once('finish', once);
    reply.raw.once('close', once);
  };

  // Credentials under lookup, each holding a place in its address's cap of lookups (apart from the
  // credential-less cap, so that an address's anonymous traffic does not hold up its tenants) until the
  // lookup ends.
  const lookups = new Slots(opts.maxUnauthenticatedPerAddress);
  const lookingUp = new WeakMap<FastifyRequest, () => void>();

  const admitUnauthenticated = (req: FastifyRequest, reply: FastifyReply, budget: Slots, what: string) => {
    if (gone(reply)) return reply.hijack();
    const address = clientKey(req.ip);
    if (perAddress.full(address)) return refuseAndClose(reply, 'Too many requests from this address at once; retry in a second.');
    if (budget.full(ALL)) return refuseAndClose(reply, `The service is at capacity for ${what}; retry in a second.`);
    perAddress.take(address);
    budget.take(ALL);
    holdUntilAnswered(reply, () => {
      perAddress.give(address);
      budget.give(ALL);
    });
    armBodyDeadline(req, reply, opts.unauthenticatedBodyTimeoutMs);
    return undefined;
  };

  // Everything but API routes is classified on arrival; API routes once their credential is resolved.
  app.addHook('onRequest', async (req, reply) => {
    const url = req.routeOptions.url ?? '';
    if (PROBES.has(url)) return;
    const kind = req.routeOptions.config?.admission;
    if (kind === 'api') return;
    if (kind === 'inbound') return admitUnauthenticated(req, reply, inbound, 'inbound webhooks');
    return admitUnauthenticated(req, reply, anonymous, 'requests without credentials');
  });

  return {
    /** Marks every route registered in `scope` from now on as drawing on the `kind` budget. */
    mark(scope: FastifyInstance, kind: AdmissionKind) {
      scope.addHook('onRoute', (route) => {
        route.config = { ...route.config, admission: kind };
      });
    },
    /**
     * onRequest hook for API routes, before authentication. Looking a credential up may take a database
     * connection before the request is counted anywhere else, so a request carrying one holds a place in
     * its address's cap of lookups meanwhile: invalid keys sent at once from one address cannot take the pool.
     */
    beforeAuthentication: async (req: FastifyRequest, reply: FastifyReply) => {
      if (req.headers.authorization === undefined && req.headers['x-api-key'] === undefined) return undefined;
      const address = clientKey(req.ip);
      if (lookups.full(address)) return refuseAndClose(reply, 'Too many requests from this address at once; retry in a second.');
      lookups.take(address);
      let held = true;
      const release = () => {
        if (held) {
          held = false;
          lookups.give(address);
        }
      };
      lookingUp.set(req, release);
      holdUntilAnswered(reply, release);
      return undefined;
    },
    /** onRequest hook for API routes, after authentication has set `req.principal`. */
    afterAuthentication: async (req: FastifyRequest, reply: FastifyReply) => {
      lookingUp.get(req)?.();
      // A client gone while its credential was checked has no 'close' left to come: taking a slot now
      // would hold it for good. Nothing will be answered, so nothing is taken.
      if (gone(reply)) return reply.hijack();
      const principal = req.principal;
      if (!principal) return admitUnauthenticated(req, reply, anonymous, 'requests without credentials');
      const tenant = principal.tenantId;
      const lane = lanes.get(tenant) ?? { running: 0, waiting: [] };
      if (lane.running + lane.waiting.length >= opts.maxInFlightPerTenant) {
        return refuse(reply, 'This tenant has too many requests in flight; retry in a second.');
      }
      if (api.full(ALL)) return refuse(reply, 'The service is at capacity; retry in a second.');
      lanes.set(tenant, lane);
      api.take(ALL);
      let state: 'waiting' | 'running' | 'done' = 'waiting';
      let wake = () => {};
      holdUntilAnswered(reply, () => {
        if (state === 'waiting') {
          // Gone before its turn: it leaves the queue and never runs.
          const at = lane.waiting.indexOf(wake);
          if (at >= 0) lane.waiting.splice(at, 1);
        } else {
          const next = lane.waiting.shift();
          if (next) next();
          else lane.running--;
        }
        state = 'done';
        api.give(ALL);
        if (lane.running === 0 && lane.waiting.length === 0) lanes.delete(tenant);
      });
      if (lane.running < opts.maxActivePerTenant) {
        lane.running++;
        state = 'running';
        return undefined;
      }
      await new Promise<void>((resolve) => {
        wake = () => {
          state = 'running';
          resolve();
        };
        lane.waiting.push(wake);
      });
      return undefined;
    },
  };
}
