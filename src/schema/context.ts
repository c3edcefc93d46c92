import type { FastifyBaseLogger } from 'fastify';
import type { LoginGuard } from '../auth/attempt-counter.ts';
import type { Principal } from '../auth/principal.ts';
import type { Sessions } from '../auth/sessions.ts';
import type { Db } from '../db/prisma.ts';
import type { InboundSecretStore } from '../ingest/secrets.ts';
import type { WebhookService } from '../outbox/service.ts';
import type { ScoringService } from '../scoring/service.ts';
import type { UsageEventService } from '../ingest/usage-events.ts';

/** Everything a resolver may use; built per request by the HTTP layer, shared by /graphql and the REST facade. */
export interface Context {
  prisma: Db;
  principal: Principal | null;
  sessions: Sessions;
  inboundSecrets: InboundSecretStore;
  webhooks: WebhookService;
  scoring: ScoringService;
  usageEvents: UsageEventService;
  log: FastifyBaseLogger;
  requestId: string;
  /** The client's address as the socket gives it (no proxy headers are trusted). */
  clientAddress: string;
  loginGuard: LoginGuard;
}
