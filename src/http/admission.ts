import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { admissionRefusals } from '../runtime/metrics.ts';
import type { Admission } from '../config.ts';
import { clientKey } from '../auth/attempt-counter.ts';
import { problemFor } from '../errors.ts';
import { PROBES } from './load-shedding.ts';
import { armBodyDeadline } from './request-deadline.ts';
import { createTenantLoad, type TenantLoad } from '../runtime/tenant-load.ts';

/** A refused request announcing a body up to this size keeps its connection (see refuseUnauthenticated). */
const KEEP_ALIVE_REFUSED_BODY_BYTES = 64 * 1024;

/** Which budget a route's requests draw on; routes without one are credential-less (`anonymous`). */
export type AdmissionKind = 'api' | 'inbound' | 'stream';

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

/** One tenant's API requests waiting in arrival order for their turn (those running are counted in the TenantLoad). */
interface Lane {
  tenantId: string;
  waiting: (() => void)[];
}

export interface AdmissionOptions extends Admission {
  /** Live subscriptions open at once: per tenant, and in all. */
  streams: { maxPerTenant: number; max: number };
  /** Time the body of a credential-less request has to arrive. */
  unauthenticatedBodyTimeoutMs: number;
  /**
   * The count of what runs per tenant, which admission keeps: its API requests running, and its webhooks
   * while they are accepted. The CPU share reads it (runtime/cpu-share.ts). A count of its own when not given.
   */
  load?: TenantLoad;
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
 *   hold a part of it only. Of that part a tenant always runs up to its share at once; beyond it, it runs
 *   more only while the process as a whole runs fewer than `maxActive` (capacity nobody else is using is
 *   lent, not left idle), and otherwise waits in its own queue. A tenant within its share never waits for
 *   another's burst, and a burst queues behind itself rather than in front of others on the database pool.
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

  // Each refusal counted by its reason (chs_admission_refusals_total).
  const refuse = (reply: FastifyReply, detail: string, reason: string) => {
    admissionRefusals.inc({ reason });
    return reply.code(503).header('retry-after', '1').type('application/problem+json').send(problemFor('service_unavailable', detail));
  };
  // A refused request's body is never read: closing the connection stops a trickling client from
  // keeping the socket.
  const refuseAndClose = (reply: FastifyReply, detail: string, reason: string) =>
    refuse(reply.header('connection', 'close'), detail, reason);
  // Under overload most requests are refused, and a client that must reconnect after each refusal costs
  // both sides far more than a small body does: such a body is read and dropped (by Node) and the
  // connection kept, while the short body deadline still closes a client that trickles it.
  const refuseUnauthenticated = (req: FastifyRequest, reply: FastifyReply, detail: string, reason: string) => {
    const length = Number(req.headers['content-length'] ?? 0);
    if (req.headers['transfer-encoding'] !== undefined || !(length <= KEEP_ALIVE_REFUSED_BODY_BYTES))
      return refuseAndClose(reply, detail, reason);
    armBodyDeadline(req, reply, opts.unauthenticatedBodyTimeoutMs);
    return refuse(reply, detail, reason);
  };

  // A response emits 'close' once, whether it finished or its connection went first, so one listener
  // releases in both cases.
  const holdUntilAnswered = (reply: FastifyReply, release: () => void) => {
    reply.raw.once('close', release);
  };

  // Credentials under lookup, each holding a place in its address's cap of lookups (apart from the
  // credential-less cap, so that an address's anonymous traffic does not hold up its tenants) until the
  // lookup ends.
  const lookups = new Slots(opts.maxUnauthenticatedPerAddress);

  // API requests running, per tenant and over all, in the one count of what runs; lanes with requests
  // waiting for capacity, oldest first.
  const load = opts.load ?? createTenantLoad();
  const queued = new Set<Lane>();
  const mayRun = (lane: Lane) => load.running(lane.tenantId) < opts.maxActivePerTenant || load.active() < opts.maxActive;
  // A request has ended: hand the capacity to whoever waits for it, a tenant within its share first (it
  // only waits behind its own requests), then the lanes borrowing idle capacity in turn.
  const wakeNext = (lane: Lane) => {
    if (lane.waiting.length > 0 && load.running(lane.tenantId) < opts.maxActivePerTenant) return startNext(lane);
    for (const other of queued) {
      if (!mayRun(other)) continue;
      // Round robin: the lane goes to the back of the line.
      queued.delete(other);
      startNext(other);
      return;
    }
  };
  const startNext = (lane: Lane) => {
    const next = lane.waiting.shift()!;
    if (lane.waiting.length === 0) queued.delete(lane);
    else if (!queued.has(lane)) queued.add(lane);
    next();
  };

  // The tenant a webhook is delivered for, as its path names it: counted as that tenant's work while it is
  // accepted, whether or not its signature turns out to verify (it costs the process the same until then).
  const inboundTenant = (req: FastifyRequest) => {
    const named = (req.params as { tenant_id?: unknown } | undefined)?.tenant_id;
    return typeof named === 'string' && named.length > 0 && named.length <= 64 ? named : '';
  };

  const admitUnauthenticated = (req: FastifyRequest, reply: FastifyReply, budget: Slots, what: string, kind: string, tenantId?: string) => {
    if (gone(reply)) return reply.hijack();
    const address = clientKey(req.ip);
    if (perAddress.full(address))
      return refuseUnauthenticated(req, reply, 'Too many requests from this address at once; retry in a second.', 'address_in_flight');
    if (budget.full(ALL))
      return refuseUnauthenticated(req, reply, `The service is at capacity for ${what}; retry in a second.`, `${kind}_capacity`);
    perAddress.take(address);
    budget.take(ALL);
    if (tenantId !== undefined) load.began(tenantId, 'inbound');
    holdUntilAnswered(reply, () => {
      perAddress.give(address);
      budget.give(ALL);
      if (tenantId !== undefined) load.ended(tenantId, 'inbound');
    });
    armBodyDeadline(req, reply, opts.unauthenticatedBodyTimeoutMs);
    return undefined;
  };

  // Everything but API routes is classified on arrival; API routes once their credential is resolved.
  // The hooks are synchronous unless a request has to wait its turn: they run on every request, and an
  // async hook costs a promise and a turn each. A hook that answered still calls `done`: Fastify runs
  // nothing more for a request that has been answered.
  app.addHook('onRequest', (req, reply, done) => {
    // Read once: Fastify builds the routeOptions object anew on every access.
    const route = req.routeOptions;
    if (PROBES.has(route.url ?? '')) return done();
    const kind = route.config?.admission;
    if (kind === 'api' || kind === 'stream') return done();
    if (kind === 'inbound') admitUnauthenticated(req, reply, inbound, 'inbound webhooks', 'inbound', inboundTenant(req));
    else admitUnauthenticated(req, reply, anonymous, 'requests without credentials', 'anonymous');
    done();
  });

  // Live subscriptions open, per tenant and in all.
  const streams = new Slots(opts.streams.maxPerTenant);
  const allStreams = new Slots(opts.streams.max);

  return {
    /**
     * onRequest hook for live subscriptions, after authentication (required there). A stream holds its place
     * for as long as it is open, so it is counted against caps of streams, not the budget of requests, whose
     * places are held for the length of one answer: the tenant's own cap refuses with 429 (the tenant can
     * close a stream), the process's with 503 (another process may have room).
     */
    admitStream: (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
      if (gone(reply)) {
        reply.hijack();
        return done();
      }
      const tenant = req.principal!.tenantId;
      if (streams.full(tenant)) {
        admissionRefusals.inc({ reason: 'tenant_streams' });
        reply
          .code(429)
          .type('application/problem+json')
          .send(
            problemFor(
              'rate_limited',
              `This workspace has ${opts.streams.maxPerTenant} live subscriptions open here, the most it may; close one before opening another.`,
            ),
          );
        return done();
      }
      if (allStreams.full(ALL)) {
        refuse(reply, 'The service holds as many live subscriptions as it can; retry in a few seconds.', 'stream_capacity');
        return done();
      }
      streams.take(tenant);
      allStreams.take(ALL);
      holdUntilAnswered(reply, () => {
        streams.give(tenant);
        allStreams.give(ALL);
      });
      done();
    },
    /** Marks every route registered in `scope` from now on as drawing on the `kind` budget. */
    mark(scope: FastifyInstance, kind: AdmissionKind) {
      scope.addHook('onRoute', (route) => {
        route.config = { ...route.config, admission: kind };
      });
    },
    /**
     * Holds a place in the address's cap of lookups while a credential is looked up: that may take a
     * database connection before the request is counted anywhere else, so invalid keys sent at once from
     * one address cannot take the pool. Returns the release, or null when the request was refused (503).
     */
    enterLookup(req: FastifyRequest, reply: FastifyReply): (() => void) | null {
      const address = clientKey(req.ip);
      if (lookups.full(address)) {
        refuseAndClose(reply, 'Too many requests from this address at once; retry in a second.', 'address_lookups');
        return null;
      }
      lookups.take(address);
      let held = true;
      return () => {
        if (held) {
          held = false;
          lookups.give(address);
        }
      };
    },
    /** onRequest hook for API routes, after authentication has set `req.principal`. */
    afterAuthentication: (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
      // A client gone while its credential was checked has no 'close' left to come: taking a slot now
      // would hold it for good. Nothing will be answered, so nothing is taken.
      if (gone(reply)) {
        reply.hijack();
        return done();
      }
      const principal = req.principal;
      if (!principal) {
        admitUnauthenticated(req, reply, anonymous, 'requests without credentials', 'anonymous');
        return done();
      }
      const tenant = principal.tenantId;
      let lane = lanes.get(tenant);
      if (lane && load.running(tenant) + lane.waiting.length >= opts.maxInFlightPerTenant) {
        refuse(reply, 'This tenant has too many requests in flight; retry in a second.', 'tenant_in_flight');
        return done();
      }
      if (api.full(ALL)) {
        refuse(reply, 'The service is at capacity; retry in a second.', 'api_capacity');
        return done();
      }
      if (!lane) lanes.set(tenant, (lane = { tenantId: tenant, waiting: [] }));
      const own = lane;
      api.take(ALL);
      let state: 'waiting' | 'running' | 'done' = 'waiting';
      const start = () => {
        state = 'running';
        load.began(tenant, 'api');
      };
      const wake = () => {
        start();
        done();
      };
      holdUntilAnswered(reply, () => {
        if (state === 'waiting') {
          // Gone before its turn: it leaves the queue and never runs.
          const at = own.waiting.indexOf(wake);
          if (at >= 0) own.waiting.splice(at, 1);
          if (own.waiting.length === 0) queued.delete(own);
        } else {
          load.ended(tenant, 'api');
          wakeNext(own);
        }
        state = 'done';
        api.give(ALL);
        if (load.running(tenant) === 0 && own.waiting.length === 0 && lanes.get(tenant) === own) lanes.delete(tenant);
      });
      // Behind its own waiting requests whatever the capacity: a tenant's requests run in arrival order.
      if (own.waiting.length === 0 && mayRun(own)) {
        start();
        return done();
      }
      own.waiting.push(wake);
      queued.add(own);
    },
  };
}
