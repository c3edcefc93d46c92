import { z } from 'zod';
import { DEFAULT_CPU_SHARE } from './runtime/cpu-share.ts';
import { type CircuitSettings, DEFAULT_CIRCUIT } from './outbox/sender/circuit-breaker.ts';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .optional()
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const url = (protocols: string[]) =>
  z
    .string()
    .url()
    .refine((v) => protocols.some((p) => v.startsWith(`${p}:`)), { message: `must use ${protocols.join(' or ')}` });

// One model per concern, parsed once at start-up; every problem is reported before the process refuses to start.
const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  // Loopback unless told otherwise: a first start prints a working demo key and password.
  HOST: z.string().default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PUBLIC_BASE_URL: z.string().url().optional(),
  DATABASE_URL: url(['postgres', 'postgresql']).optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  /** How long a request waits for a free database connection (or to start a transaction) before it gets 503. */
  DATABASE_POOL_WAIT_MS: z.coerce.number().int().min(50).max(60_000).default(5000),
  /** A streaming replica of DATABASE_URL that serves the customer list, a customer's health and the counts (docs/scaling.md). */
  DATABASE_READ_URL: url(['postgres', 'postgresql']).optional(),
  /** Reads go to the primary while the replica has not replayed what the primary wrote this long ago. */
  DATABASE_READ_MAX_LAG_MS: z.coerce.number().int().min(100).max(600_000).default(5000),
  AMQP_URL: url(['amqp', 'amqps']).optional(),
  /** Prefix of exchange and queue names, so several deployments (or test runs) can share a broker. */
  AMQP_PREFIX: z
    .string()
    .regex(/^[a-z0-9._-]{1,40}$/)
    .default('chs'),
  INBOX_SWEEP_MS: z.coerce.number().int().min(100).default(5000),
  WORKER_PREFETCH: z.coerce.number().int().min(1).max(1000).default(256),
  REDIS_URL: url(['redis', 'rediss']).optional(),
  DATA_DIR: z.string().default('.data'),
  EMBEDDED_PG_PORT: z.coerce.number().int().min(1).max(65535).default(54329),
  /** HS256 key for session tokens. Generated and kept under DATA_DIR when absent (development only). */
  SESSION_SECRET: z.string().min(32).optional(),
  SESSION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .default(8 * 3600),
  /** RS256/ES256 sessions from an external identity provider. */
  SESSION_JWKS_URL: z.string().url().optional(),
  /** Issuers (comma-separated) and audience an identity provider's tokens must name; required with SESSION_JWKS_URL. */
  SESSION_JWT_ISSUER: z.string().optional(),
  SESSION_JWT_AUDIENCE: z.string().optional(),
  /** 32 bytes, base64, for AES-256-GCM of stored secrets. Generated and kept under DATA_DIR when absent. */
  ENCRYPTION_KEY: z.string().optional(),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: bool,
  /** How long a worker holds a delivery it is attempting; a crashed worker's deliveries resume after it. */
  /** Attempts one worker process makes to one endpoint at once, so a slow receiver cannot take every slot. */
  DELIVERY_CONCURRENCY_PER_ENDPOINT: z.coerce.number().int().min(1).max(256).default(16),
  /** Attempts one worker process makes for one tenant at once, whatever its endpoints: a quarter of its 64 slots. */
  DELIVERY_CONCURRENCY_PER_TENANT: z.coerce.number().int().min(1).max(256).default(16),
  DELIVERY_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(5),
  DELIVERY_LEASE_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  /** An endpoint's circuit breaker opens when at least this share of its recent attempts failed (docs/receiving-webhooks.md). */
  CIRCUIT_FAILURE_RATE: z.coerce.number().gt(0).max(1).default(DEFAULT_CIRCUIT.failureRate),
  /** ... over at least this many attempts in the window, */
  CIRCUIT_MIN_ATTEMPTS: z.coerce.number().int().min(1).max(100_000).default(DEFAULT_CIRCUIT.minAttempts),
  /** ... the window being this many seconds, sliding. */
  CIRCUIT_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(DEFAULT_CIRCUIT.windowSeconds),
  /** The wait before an open breaker's first probe; each failed probe doubles it, up to CIRCUIT_PROBE_MAX_SECONDS. */
  CIRCUIT_PROBE_SECONDS: z.coerce.number().int().min(1).max(86_400).default(DEFAULT_CIRCUIT.probeSeconds),
  CIRCUIT_PROBE_MAX_SECONDS: z.coerce.number().int().min(1).max(86_400).default(DEFAULT_CIRCUIT.probeMaxSeconds),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  /** Time a client has to send a whole request (headers and body); slower ones are cut off with 408. */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  /** The same for requests that carry no credential (inbound webhooks, sign-in): their bodies are small. At most REQUEST_TIMEOUT_MS. */
  UNAUTHENTICATED_BODY_TIMEOUT_MS: z.coerce.number().int().min(100).default(5000),
  /** Time a client has to send the request headers. At most REQUEST_TIMEOUT_MS. */
  HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** An idle keep-alive connection is closed after this; keep it above a load balancer's idle timeout. */
  KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).default(72_000),
  RATE_LIMIT_GROWTH: z.coerce.number().int().min(1).default(100),
  RATE_LIMIT_SCALE: z.coerce.number().int().min(1).default(300),
  RATE_LIMIT_WINDOW_MS: z.coerce.number().int().min(1000).default(60_000),
  /** Sign-in attempts per minute from one client address, and against one account (email). */
  LOGIN_ATTEMPTS_PER_ADDRESS: z.coerce.number().int().min(1).default(20),
  LOGIN_ATTEMPTS_PER_ACCOUNT: z.coerce.number().int().min(1).default(10),
  /** Failed authentications (and unknown inbound addresses) per minute from one client address before 429. */
  AUTH_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).default(30),
  /** Failed inbound signatures per minute from one client address at one inbound address, at any inbound address, and at one inbound address from any client, before 429. */
  INBOUND_FAILURES_PER_SENDER: z.coerce.number().int().min(1).default(30),
  INBOUND_FAILURES_PER_CLIENT: z.coerce.number().int().min(1).default(120),
  INBOUND_FAILURES_PER_INBOUND_ADDRESS: z.coerce.number().int().min(1).default(300),
  /** How long a verified API key is remembered in memory; bounds how late a revocation takes effect. */
  API_KEY_CACHE_MS: z.coerce.number().int().min(0).max(5000).default(2000),
  SEED_DEMO: z.enum(['auto', 'never']).default('auto'),
  /** Bearer token for /metrics on the API port; without it (and without METRICS_PORT) /metrics is not served. */
  METRICS_TOKEN: z.string().min(16).optional(),
  /** Serve /metrics on this port instead of the API port (token-protected too when METRICS_TOKEN is set). */
  METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  METRICS_HOST: z.string().optional(),
  /** Authenticated API requests one process works on at once; more get 503 with Retry-After instead of queueing. */
  MAX_IN_FLIGHT: z.coerce.number().int().min(1).default(256),
  /** Of those, what one tenant may hold; default a quarter of MAX_IN_FLIGHT. */
  MAX_IN_FLIGHT_PER_TENANT: z.coerce.number().int().min(1).optional(),
  /** Of a tenant's requests in flight, how many run at once; the rest wait their turn. Default half of DATABASE_POOL_SIZE. */
  MAX_ACTIVE_PER_TENANT: z.coerce.number().int().min(1).optional(),
  /** API requests running at once below which a tenant may run beyond its share (idle capacity is lent). Default DATABASE_POOL_SIZE. */
  MAX_ACTIVE: z.coerce.number().int().min(1).optional(),
  /**
   * The part of an API process's time one tenant's heavy work (exports, training) may take while other
   * tenants' requests run, 0.05 to 1; 1 puts no bound on it.
   */
  TENANT_CPU_SHARE: z.coerce.number().min(0.05).max(1).default(DEFAULT_CPU_SHARE.share),
  /** Threads that read and write out export pages off the event loop, each with one database connection; 0 reads them on the event loop. */
  EXPORT_THREADS: z.coerce.number().int().min(0).max(16).default(2),
  /** Inbound webhook requests one process works on at once, a budget of their own. */
  MAX_IN_FLIGHT_INBOUND: z.coerce.number().int().min(1).default(128),
  /** Requests without a credential (sign-in, anonymous GraphQL, the dashboard's files), a budget of their own. */
  MAX_IN_FLIGHT_ANONYMOUS: z.coerce.number().int().min(1).default(64),
  /** Inbound and credential-less requests one client address may have in flight at once. */
  MAX_UNAUTHENTICATED_PER_ADDRESS: z.coerce.number().int().min(1).default(64),
  /** Event-loop delay in ms above which new requests get 503; 0 turns the check off. */
  MAX_EVENT_LOOP_DELAY_MS: z.coerce.number().int().min(0).default(1000),
  /** The built dashboard (vite build output); default dist/web under the project. */
  DASHBOARD_DIR: z.string().optional(),
  /** Customers recomputed per batch (one set of set-based statements per batch). */
  SCORING_BATCH_SIZE: z.coerce.number().int().min(1).max(5000).default(500),
  /** Batches one worker process computes at once. */
  SCORING_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(2),
  /** How often the daily pass looks for customers not computed for a day (and wakes snoozed alerts). */
  SCORING_SWEEP_MS: z.coerce.number().int().min(1000).default(600_000),
  /** How often the worker applies retention (docs/data-lifecycle.md) and removes workspaces whose deletion is due. */
  RETENTION_EVERY_MS: z.coerce.number().int().min(1000).default(900_000),
  /** Rows per retention statement: each is one short transaction. */
  RETENTION_BATCH_SIZE: z.coerce.number().int().min(1).max(100_000).default(1000),
  /** Statements per kind of data and pass; a pass that needs more reports the kind behind and goes on next time. */
  RETENTION_MAX_BATCHES: z.coerce.number().int().min(1).default(500),
  /** Days between an owner's request to delete the workspace and its removal; it can be cancelled until then. */
  WORKSPACE_DELETION_DELAY_DAYS: z.coerce.number().int().min(0).max(90).default(7),
  /** Browser origins (scheme://host[:port], comma-separated) allowed to call /graphql across origins; none by default. */
  CORS_ORIGINS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^https?:\/\/[^/\s,]+$/, 'each origin must be scheme://host[:port], without a path'))),
  /** Unexpected GraphQL errors carry their original message and stack; for local debugging only, never in production. */
  GRAPHQL_DEBUG_ERRORS: bool,
  /** Live subscriptions (/graphql/stream) one tenant may hold open in one API process at once. */
  LIVE_SUBSCRIPTIONS_PER_TENANT: z.coerce.number().int().min(1).max(10_000).default(20),
  /** Live subscriptions one API process holds open at once, over all tenants. */
  LIVE_SUBSCRIPTIONS: z.coerce.number().int().min(1).max(100_000).default(2000),
  /** How often a live subscription's credential is checked again: a stream ends at most this long after its session or key is revoked. */
  LIVE_RECHECK_MS: z.coerce.number().int().min(100).max(600_000).default(15_000),
  /** Hot GraphQL documents answered without Yoga's per-request machinery; `false` leaves every request to Yoga. */
  GRAPHQL_FAST_PATH: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  /** OTLP/HTTP collector base URL (traces go to <url>/v1/traces); setting it turns tracing on (docs/operations.md, "Tracing"). */
  OTEL_EXPORTER_OTLP_ENDPOINT: url(['http', 'https']).optional(),
  /** `otlp` turns tracing on (to OTEL_EXPORTER_OTLP_ENDPOINT, or http://localhost:4318), `console` prints spans, `none` keeps it off. */
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'console', 'none']).optional(),
  OTEL_SERVICE_NAME: z.string().min(1).max(100).optional(),
  /** The share of new traces kept (0 to 1); a caller's sampled flag decides for traces it started. */
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(1),
});

export type Env = z.infer<typeof envSchema>;

export interface Config {
  env: Env['NODE_ENV'];
  http: {
    host: string;
    port: number;
    bodyLimit: number;
    publicBaseUrl?: string;
    requestTimeoutMs: number;
    corsOrigins: string[];
    debugErrors: boolean;
    graphqlFastPath: boolean;
    unauthenticatedBodyTimeoutMs: number;
    headersTimeoutMs: number;
    keepAliveTimeoutMs: number;
  };
  log: { level: Env['LOG_LEVEL'] };
  database: { url?: string; readUrl?: string; readMaxLagMs: number; poolSize: number; poolWaitMs: number; embeddedPort: number };
  dataDir: string;
  amqp: { url?: string; prefix: string };
  worker: { sweepEveryMs: number; prefetch: number };
  redisUrl?: string;
  sessions: { secret?: string; ttlSeconds: number; jwksUrl?: string; jwtIssuers: string[]; jwtAudiences: string[] };
  encryptionKey?: string;
  webhooks: {
    allowPrivateTargets: boolean;
    leaseSeconds: number;
    perEndpointConcurrency: number;
    perTenantConcurrency: number;
    deliveryPoolSize: number;
    /** Each endpoint's circuit breaker (src/outbox/sender/circuit-breaker.ts). */
    circuit: CircuitSettings;
  };
  rateLimit: { perMinute: { growth: number; scale: number }; windowMs: number };
  apiKeyCacheMs: number;
  authLimits: {
    loginPerAddress: number;
    loginPerAccount: number;
    failuresPerAddress: number;
    windowMs: number;
    /** Failed inbound signatures: per sender (client at one inbound address), per client, per inbound address. */
    inboundFailures: { perSender: number; perClient: number; perAddress: number };
  };
  seedDemo: boolean;
  metrics: { token?: string; port?: number; host: string };
  dashboardDir?: string;
  overload: Admission & { maxEventLoopDelayMs: number; tenantCpuShare: number; exportThreads: number };
  scoring: { batchSize: number; concurrency: number; sweepEveryMs: number };
  /** Live subscriptions (src/http/admission.ts admits them, src/schema/live.ts serves them). */
  live: { maxPerTenant: number; max: number; recheckMs: number };
  lifecycle: { everyMs: number; batchSize: number; maxBatches: number; workspaceDeletionDelayDays: number };
  /** OpenTelemetry traces (src/runtime/tracing.ts); off unless an exporter is named. */
  tracing: Tracing;
}

export type Tracing =
  | { enabled: false }
  | { enabled: true; exporter: 'otlp'; url: string; serviceName: string; sampleRatio: number }
  | { enabled: true; exporter: 'console'; serviceName: string; sampleRatio: number };

/** Concurrency budgets of one API process (src/http/admission.ts). */
export interface Admission {
  /** Authenticated API requests in flight. */
  maxInFlight: number;
  /** Authenticated API requests in flight for one tenant, running or waiting. */
  maxInFlightPerTenant: number;
  /** Of those, how many run at once whatever other tenants do; the others wait for the tenant's own turn, not for the database. */
  maxActivePerTenant: number;
  /** While fewer API requests than this run in all, a tenant past its share runs more rather than wait. */
  maxActive: number;
  /** Inbound webhook requests in flight. */
  maxInFlightInbound: number;
  /** Requests without a credential in flight. */
  maxInFlightAnonymous: number;
  /** Inbound and credential-less requests in flight from one client address. */
  maxUnauthenticatedPerAddress: number;
}

export class ConfigError extends Error {}

const list = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable (FOO=) means "not set", as shells and .env files commonly write it.
  const present = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const missing = e.NODE_ENV === 'production' ? (['SESSION_SECRET', 'ENCRYPTION_KEY'] as const).filter((k) => !e[k]) : [];
  const problems = missing.map((k) => `  ${k}: required in production`);
  // Error details name files, queries and internals: never to be switched on where clients are real.
  if (e.NODE_ENV === 'production' && e.GRAPHQL_DEBUG_ERRORS) problems.push('  GRAPHQL_DEBUG_ERRORS: not allowed in production');
  const jwtIssuers = list(e.SESSION_JWT_ISSUER);
  const jwtAudiences = list(e.SESSION_JWT_AUDIENCE);
  // Without both, any token the identity provider signs (for another application too) would open a session here.
  if (e.SESSION_JWKS_URL && !jwtIssuers.length) problems.push('  SESSION_JWT_ISSUER: required with SESSION_JWKS_URL');
  if (e.SESSION_JWKS_URL && !jwtAudiences.length) problems.push('  SESSION_JWT_AUDIENCE: required with SESSION_JWKS_URL');
  if (e.CIRCUIT_PROBE_MAX_SECONDS < e.CIRCUIT_PROBE_SECONDS) {
    problems.push('  CIRCUIT_PROBE_MAX_SECONDS: must not be below CIRCUIT_PROBE_SECONDS');
  }
  if (e.MAX_IN_FLIGHT_PER_TENANT !== undefined && e.MAX_IN_FLIGHT_PER_TENANT > e.MAX_IN_FLIGHT) {
    problems.push('  MAX_IN_FLIGHT_PER_TENANT: must not exceed MAX_IN_FLIGHT');
  }
  if (problems.length) throw new ConfigError(`Invalid configuration:\n${problems.join('\n')}`);
  return {
    env: e.NODE_ENV,
    http: {
      host: e.HOST,
      port: e.PORT,
      bodyLimit: e.BODY_LIMIT_BYTES,
      publicBaseUrl: e.PUBLIC_BASE_URL,
      requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
      corsOrigins: e.CORS_ORIGINS,
      debugErrors: e.GRAPHQL_DEBUG_ERRORS,
      graphqlFastPath: e.GRAPHQL_FAST_PATH,
      // Neither may outlast the whole-request deadline.
      unauthenticatedBodyTimeoutMs: Math.min(e.UNAUTHENTICATED_BODY_TIMEOUT_MS, e.REQUEST_TIMEOUT_MS),
      headersTimeoutMs: Math.min(e.HEADERS_TIMEOUT_MS, e.REQUEST_TIMEOUT_MS),
      keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_MS,
    },
    log: { level: e.LOG_LEVEL },
    database: {
      url: e.DATABASE_URL,
      readUrl: e.DATABASE_READ_URL,
      readMaxLagMs: e.DATABASE_READ_MAX_LAG_MS,
      poolSize: e.DATABASE_POOL_SIZE,
      poolWaitMs: e.DATABASE_POOL_WAIT_MS,
      embeddedPort: e.EMBEDDED_PG_PORT,
    },
    dataDir: e.DATA_DIR,
    amqp: { url: e.AMQP_URL, prefix: e.AMQP_PREFIX },
    worker: { sweepEveryMs: e.INBOX_SWEEP_MS, prefetch: e.WORKER_PREFETCH },
    redisUrl: e.REDIS_URL,
    sessions: { secret: e.SESSION_SECRET, ttlSeconds: e.SESSION_TTL_SECONDS, jwksUrl: e.SESSION_JWKS_URL, jwtIssuers, jwtAudiences },
    encryptionKey: e.ENCRYPTION_KEY,
    webhooks: {
      allowPrivateTargets: e.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      leaseSeconds: e.DELIVERY_LEASE_SECONDS,
      perEndpointConcurrency: e.DELIVERY_CONCURRENCY_PER_ENDPOINT,
      perTenantConcurrency: e.DELIVERY_CONCURRENCY_PER_TENANT,
      deliveryPoolSize: e.DELIVERY_POOL_SIZE,
      circuit: {
        failureRate: e.CIRCUIT_FAILURE_RATE,
        minAttempts: e.CIRCUIT_MIN_ATTEMPTS,
        windowSeconds: e.CIRCUIT_WINDOW_SECONDS,
        probeSeconds: e.CIRCUIT_PROBE_SECONDS,
        probeMaxSeconds: e.CIRCUIT_PROBE_MAX_SECONDS,
      },
    },
    rateLimit: { perMinute: { growth: e.RATE_LIMIT_GROWTH, scale: e.RATE_LIMIT_SCALE }, windowMs: e.RATE_LIMIT_WINDOW_MS },
    apiKeyCacheMs: e.API_KEY_CACHE_MS,
    authLimits: {
      loginPerAddress: e.LOGIN_ATTEMPTS_PER_ADDRESS,
      loginPerAccount: e.LOGIN_ATTEMPTS_PER_ACCOUNT,
      failuresPerAddress: e.AUTH_FAILURES_PER_ADDRESS,
      windowMs: 60_000,
      inboundFailures: {
        perSender: e.INBOUND_FAILURES_PER_SENDER,
        perClient: e.INBOUND_FAILURES_PER_CLIENT,
        perAddress: e.INBOUND_FAILURES_PER_INBOUND_ADDRESS,
      },
    },
    seedDemo: e.SEED_DEMO === 'auto',
    metrics: { token: e.METRICS_TOKEN, port: e.METRICS_PORT, host: e.METRICS_HOST ?? e.HOST },
    dashboardDir: e.DASHBOARD_DIR,
    overload: {
      maxInFlight: e.MAX_IN_FLIGHT,
      maxInFlightPerTenant: e.MAX_IN_FLIGHT_PER_TENANT ?? Math.max(1, Math.floor(e.MAX_IN_FLIGHT / 4)),
      maxActivePerTenant: e.MAX_ACTIVE_PER_TENANT ?? Math.max(1, Math.floor(e.DATABASE_POOL_SIZE / 2)),
      maxActive: e.MAX_ACTIVE ?? e.DATABASE_POOL_SIZE,
      maxInFlightInbound: e.MAX_IN_FLIGHT_INBOUND,
      maxInFlightAnonymous: e.MAX_IN_FLIGHT_ANONYMOUS,
      maxUnauthenticatedPerAddress: e.MAX_UNAUTHENTICATED_PER_ADDRESS,
      maxEventLoopDelayMs: e.MAX_EVENT_LOOP_DELAY_MS,
      tenantCpuShare: e.TENANT_CPU_SHARE,
      exportThreads: e.EXPORT_THREADS,
    },
    scoring: { batchSize: e.SCORING_BATCH_SIZE, concurrency: e.SCORING_CONCURRENCY, sweepEveryMs: e.SCORING_SWEEP_MS },
    live: { maxPerTenant: e.LIVE_SUBSCRIPTIONS_PER_TENANT, max: e.LIVE_SUBSCRIPTIONS, recheckMs: e.LIVE_RECHECK_MS },
    lifecycle: {
      everyMs: e.RETENTION_EVERY_MS,
      batchSize: e.RETENTION_BATCH_SIZE,
      maxBatches: e.RETENTION_MAX_BATCHES,
      workspaceDeletionDelayDays: e.WORKSPACE_DELETION_DELAY_DAYS,
    },
    tracing: tracingOf(e),
  };
}

const DEFAULT_OTLP_ENDPOINT = 'http://localhost:4318';

/** On when an endpoint or an exporter is named, unless the exporter is `none`. */
function tracingOf(e: Env): Tracing {
  const exporter = e.OTEL_TRACES_EXPORTER ?? (e.OTEL_EXPORTER_OTLP_ENDPOINT ? 'otlp' : 'none');
  const common = { serviceName: e.OTEL_SERVICE_NAME ?? 'customer-health-service', sampleRatio: e.OTEL_TRACES_SAMPLER_ARG };
  if (exporter === 'none') return { enabled: false };
  if (exporter === 'console') return { enabled: true, exporter, ...common };
  const base = (e.OTEL_EXPORTER_OTLP_ENDPOINT ?? DEFAULT_OTLP_ENDPOINT).replace(/\/+$/, '');
  return { enabled: true, exporter, url: `${base}/v1/traces`, ...common };
}
