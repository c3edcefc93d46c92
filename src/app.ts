import { annotateActiveSpan, isTracing } from './runtime/trace-context.ts';
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { createAttemptCounter, createFailureBudget, createLoginGuard } from './auth/attempt-counter.ts';
import { createAuthenticator } from './auth/authenticator.ts';
import type { Sessions } from './auth/sessions.ts';
import type { Config } from './config.ts';
import type { Db } from './db/prisma.ts';
import type { Inbox } from './ingest/inbox.ts';
import { inboundRoutes, isInboundPath } from './ingest/inbound-route.ts';
import { createVerificationBudget } from './ingest/verification-budget.ts';
import { authHook } from './http/auth-hook.ts';
import { defaultDashboardDir, registerDashboard } from './http/dashboard.ts';
import { registerDeprecation } from './http/deprecation.ts';
import { registerDocs } from './http/docs.ts';
import { webhooksSection } from './outbox/sender/webhooks-openapi.ts';
import { registerAdmission } from './http/admission.ts';
import type { CpuShare } from './runtime/cpu-share.ts';
import type { TenantLoad } from './runtime/tenant-load.ts';
import { registerLoadShedding } from './http/load-shedding.ts';
import { registerRequestDeadline } from './http/request-deadline.ts';
import { registerJsonBodyParser } from './http/json-body.ts';
import { serializeRequest } from './http/log-redaction.ts';
import { BACKLOG_SQL, type Backlog, registerBacklogMetrics } from './http/backlog-metrics.ts';
import { registerGraphQL, registerGraphQLStream } from './http/graphql.ts';
import type { ChangeFeed } from './queue/change-feed.ts';
import { registerObservability, type ReadinessCheck } from './http/observability.ts';
import { registerProblemHandlers } from './http/problem.ts';
import { registerUrlCheck, validationOptions } from './http/validation.ts';
import { clientErrorHandler, frameworkErrors } from './http/framework-errors.ts';
import { registerSecurityHeaders } from './http/security-headers.ts';
import { registerRateLimit } from './http/rate-limit.ts';
import { COMPONENTS } from './contract/entities.ts';
import { createExecutor } from './rest/executor.ts';
import { restApi } from './rest/plugin.ts';
import { registerRetentionMetrics, RETENTION_RUNS_SQL, type RetentionRunRow } from './http/retention-metrics.ts';
import type { Context } from './schema/context.ts';
import type { Services } from './services/index.ts';
import { recordKeyUse } from './services/api-keys.ts';
import { schema } from './schema/index.ts';

export interface AppDeps {
  config: Config;
  prisma: Db;
  sessions: Sessions;
  logger: Logger;
  inbox: Inbox;
  services: Services;
  /** The tenants' customer changes, for live subscriptions. */
  changes: ChangeFeed;
  redis?: Redis;
  registry?: Registry;
  /** Unix seconds; tests move the clock for signature time windows. */
  now?: () => number;
  version?: string;
  /** The count of what runs per tenant, kept by admission and read by the CPU share (runtime/tenant-load.ts). */
  load?: TenantLoad;
  /** The fair share of the process for heavy work, which heavy GraphQL operations take too (runtime/cpu-share.ts). */
  cpuShare?: CpuShare;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{8,64}$/;

/** Builds the HTTP service from its dependencies; nothing here reads the environment or starts I/O of its own. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, prisma, sessions } = deps;
  const app = Fastify({
    // Request URLs are logged with secret query parameters (Meta's hub.verify_token, …) redacted.
    loggerInstance: deps.logger.child({}, { serializers: { req: serializeRequest } }) as unknown as FastifyBaseLogger,
    bodyLimit: config.http.bodyLimit,
    trustProxy: false,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    ...validationOptions(),
    return503OnClosing: true,
    // Errors raised before routing, and by Node's HTTP parser, are problem documents too.
    frameworkErrors,
    clientErrorHandler,
    // Every socket timeout in one place. A client trickling its request (slowloris) holds a socket for
    // requestTimeoutMs at most, its headers for headersTimeoutMs; Node checks both every
    // connectionsCheckingInterval, so that is short. Idle keep-alive sockets close after keepAliveTimeout.
    connectionTimeout: config.http.requestTimeoutMs,
    requestTimeout: config.http.requestTimeoutMs,
    keepAliveTimeout: config.http.keepAliveTimeoutMs,
    http: { connectionsCheckingInterval: 1000 },
  });
  // Set on the server rather than passed to it: given at creation it kept idle keep-alive sockets from
  // closing promptly on shutdown.
  app.server.headersTimeout = config.http.headersTimeoutMs;
  // Before the requests in flight are waited for: one waiting for a churn training is answered at once, and
  // the trainings end at their next step (the composition waits for them once the fitter is closed).
  app.addHook('preClose', (done) => {
    void deps.services.churn.stopTrainings();
    done();
  });
  app.decorateRequest('principal', null);
  app.decorateRequest('reauthenticate', null);
  // JSON only: any other body type is a 415, not a string that fails validation later.
  registerJsonBodyParser(app);
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  // With tracing on, a request's span names its operation (the route's operationId) and the tenant it acts
  // for, once authentication has found it. Attributes of spans, never labels of metrics: tenants are unbounded.
  if (isTracing())
    app.addHook('preHandler', (req, _reply, done) => {
      const operationId = (req.routeOptions.schema as { operationId?: string } | undefined)?.operationId;
      annotateActiveSpan({
        ...(operationId ? { 'chs.operation': operationId } : {}),
        ...(req.principal ? { 'tenant.id': req.principal.tenantId } : {}),
      });
      done();
    });
  registerSecurityHeaders(app);
  registerUrlCheck(app);

  registerProblemHandlers(app);
  registerDeprecation(app);
  registerLoadShedding(app, config.overload);
  registerRequestDeadline(app, config.http.requestTimeoutMs);
  const admission = registerAdmission(app, {
    ...config.overload,
    unauthenticatedBodyTimeoutMs: config.http.unauthenticatedBodyTimeoutMs,
    load: deps.load,
    streams: { maxPerTenant: config.live.maxPerTenant, max: config.live.max },
  });
  for (const c of Object.values(COMPONENTS)) app.addSchema(c.schema);
  await registerDocs(app, { version: deps.version ?? '1.0.0', notRateLimited: isInboundPath, webhooks: webhooksSection() });

  const checks: ReadinessCheck[] = [{ name: 'database', check: () => prisma.$queryRaw`SELECT 1` }];
  if (deps.redis) checks.push({ name: 'redis', check: () => deps.redis!.ping() });
  const registry = deps.registry ?? new Registry();
  registerObservability(app, {
    registry,
    checks,
    metrics: { token: config.metrics.token, onApiPort: config.metrics.port === undefined && config.metrics.token !== undefined },
  });
  registerBacklogMetrics(
    registry,
    () => prisma.$queryRawUnsafe<Backlog[]>(BACKLOG_SQL),
    (e) => app.log.warn({ err: e }, 'could not read the backlog metrics'),
  );
  registerRetentionMetrics(
    registry,
    () => prisma.$queryRawUnsafe<RetentionRunRow[]>(RETENTION_RUNS_SQL),
    (e) => app.log.warn({ err: e }, 'could not read the retention metrics'),
  );

  const authenticator = createAuthenticator({
    prisma,
    sessions,
    cacheMs: config.apiKeyCacheMs,
    recordKeyUse: (keyId, at) => recordKeyUse(prisma, keyId, at),
    onError: (e) => app.log.warn({ err: e }, 'could not record api key use'),
  });
  // Credential guessing is limited per client address whatever else the request carries; the
  // counters are shared through Redis when it answers and kept per process when it does not.
  const limits = config.authLimits;
  const counter = (name: string) =>
    createAttemptCounter({
      windowMs: limits.windowMs,
      redis: deps.redis,
      prefix: `chs:auth:${name}:`,
      onRedisError: (e) => app.log.warn({ err: e }, 'redis unavailable for credential limits; counting in this process'),
    });
  const loginGuard = createLoginGuard({
    byAddress: counter('login-address'),
    byAccount: counter('login-account'),
    perAddress: limits.loginPerAddress,
    perAccount: limits.loginPerAccount,
  });
  const authFailures = createFailureBudget(counter('failed-address'), limits.failuresPerAddress);
  const inboundMisses = createFailureBudget(counter('inbound-miss-address'), limits.failuresPerAddress);
  const badSignatures = createVerificationBudget({ counter, ...limits.inboundFailures });
  const context = (req: FastifyRequest): Context => ({
    prisma,
    services: deps.services,
    principal: req.principal,
    log: req.log,
    requestId: req.id,
    clientAddress: req.ip,
    loginGuard,
    reauthenticate: req.reauthenticate,
    live: { changes: deps.changes, recheckMs: config.live.recheckMs },
  });
  const run = createExecutor(schema);

  // Everything a tenant calls: credentials resolved first (a lookup holding a place in its address's cap),
  // then the request counted against the API's budgets (or the credential-less one), then the tenant's
  // rate limit.
  await app.register(async (api) => {
    admission.mark(api, 'api');
    api.addHook('onRequest', authHook(authenticator, 'optional', authFailures, admission.enterLookup));
    api.addHook('onRequest', admission.afterAuthentication);
    await registerRateLimit(api, config.rateLimit, deps.redis);
    registerGraphQL(api, schema, context, {
      corsOrigins: config.http.corsOrigins,
      debugErrors: config.http.debugErrors,
      fastPath: config.http.graphqlFastPath,
      registry,
      cpuShare: deps.cpuShare,
    });
    await api.register(restApi, { prefix: '/api/v1', run, context });
  });

  // Live subscriptions: a credential required, then a place among the tenant's streams (not among its
  // requests), then the tenant's rate limit, which each new stream counts against.
  await app.register(async (live) => {
    admission.mark(live, 'stream');
    live.addHook('onRequest', authHook(authenticator, 'required', authFailures, admission.enterLookup));
    live.addHook('onRequest', admission.admitStream);
    await registerRateLimit(live, config.rateLimit, deps.redis);
    registerGraphQLStream(live, schema, context, { corsOrigins: config.http.corsOrigins, debugErrors: config.http.debugErrors });
  });

  // Providers post here: verified by signature, not by API key, and never rate limited; a budget of their own.
  await app.register(async (inbound) => {
    admission.mark(inbound, 'inbound');
    await inbound.register(inboundRoutes, {
      prefix: '/api/v1',
      prisma,
      secrets: deps.services.integrations.secrets,
      inbox: deps.inbox,
      bodyLimit: config.http.bodyLimit,
      cacheMs: config.apiKeyCacheMs,
      unknownTenants: inboundMisses,
      badSignatures,
      now: deps.now,
    });
  });

  await registerDashboard(app, { dir: config.dashboardDir ?? defaultDashboardDir() });

  return app;
}
