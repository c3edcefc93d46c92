import type { FastifyBaseLogger } from 'fastify';
import type { LoginGuard } from '../auth/attempt-counter.ts';
import type { Principal } from '../auth/principal.ts';
import type { ChangeFeed } from '../queue/change-feed.ts';
import type { Db } from '../db/prisma.ts';
import type { Services } from '../services/index.ts';

/** Everything a resolver may use; built per request by the HTTP layer, shared by /graphql and the REST facade. */
export interface Context {
  /** For plugin-prisma's planned reads of query shapes only; every write goes through `services`. */
  prisma: Db;
  services: Services;
  principal: Principal | null;
  log: FastifyBaseLogger;
  requestId: string;
  /** The client's address as the socket gives it (no proxy headers are trusted). */
  clientAddress: string;
  loginGuard: LoginGuard;
  /** The request's credential resolved as it stands now (auth-hook.ts); null without one. */
  reauthenticate: (() => Promise<Principal>) | null;
  /** Live subscriptions: the tenants' changes, and how often a subscriber's credential is checked again. */
  live: { changes: ChangeFeed; recheckMs: number };
}
