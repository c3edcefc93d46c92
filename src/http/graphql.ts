import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { getOperationAST, GraphQLError, type GraphQLSchema } from 'graphql';
import { createYoga, maskError, type Plugin } from 'graphql-yoga';
import { countOperation } from '../runtime/metrics.ts';
import { Counter, type Registry } from 'prom-client';
import { isPoolExhausted, validationFailed } from '../errors.ts';
import { operationsOnly } from './graphql-operations.ts';
import type { Context } from '../schema/context.ts';
import { createGraphQLFastPath } from './graphql-fast.ts';
import { hotDocumentJit } from './graphql-jit.ts';
import { graphqlLimits } from './graphql-limits.ts';
import { operationTracing } from './graphql-tracing.ts';
import { documentCache } from './document-cache.ts';
import { createOperationMeter } from './graphql-share.ts';
import { type CpuShare, unmetered } from '../runtime/cpu-share.ts';

export interface GraphQLOptions {
  /** Browser origins allowed to call across origins; any other gets no CORS headers at all. */
  corsOrigins: string[];
  /** Unexpected errors carry their original error and stack; never on by default. */
  debugErrors: boolean;
  /** Where the count of compiled documents is exposed. */
  registry: Registry;
  /** Hot documents skip Yoga's per-request machinery (graphql-fast.ts); off, Yoga answers everything. */
  fastPath: boolean;
  /** The fair share of the process that heavy operations take part in (graphql-share.ts); none kept without it. */
  cpuShare?: CpuShare;
}

const ERROR_MESSAGE = 'Unexpected error.';

/** Counts each operation Yoga executes by name, type and outcome (runtime/metrics.ts); the fast path counts its own. */
const operationCounting: Plugin = {
  onExecute({ args }) {
    const started = performance.now();
    const operation = getOperationAST(args.document, args.operationName);
    return {
      onExecuteDone({ result }) {
        const failed = Symbol.asyncIterator in result ? false : Boolean(result.errors?.length);
        countOperation(operation?.name?.value, operation?.operation, failed, (performance.now() - started) / 1000);
      },
    };
  },
};

/** Where subscriptions are served, over server-sent events (registerGraphQLStream). */
export const STREAM_ENDPOINT = '/graphql/stream';

// At capacity is not a defect: the caller gets 503 with Retry-After, as on REST.
const maskUnexpected = (error: unknown, message: string, isDev?: boolean): Error => {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (!isPoolExhausted(original)) return maskError(error, message, isDev);
  return new GraphQLError('The database is busy; retry in a second.', {
    extensions: { code: 'service_unavailable', status: 503, http: { status: 503, headers: { 'retry-after': '1' } } },
  });
};

const loggingOf = (scope: FastifyInstance) => ({
  debug: (...args: unknown[]) => scope.log.debug(args),
  info: (...args: unknown[]) => scope.log.info(args),
  warn: (...args: unknown[]) => scope.log.warn(args),
  error: (...args: unknown[]) => scope.log.error(args),
});

/** Mounts Yoga at /graphql on the given (authenticated, rate-limited) scope. */
export function registerGraphQL(
  scope: FastifyInstance,
  schema: GraphQLSchema,
  buildContext: (req: FastifyRequest) => Context,
  opts: GraphQLOptions,
) {
  const allowed = new Set(opts.corsOrigins);
  const compiled = new Counter({
    name: 'graphql_documents_compiled_total',
    help: 'GraphQL documents compiled into functions (graphql-jit) after proving hot',
    registers: [opts.registry],
  });
  const logging = loggingOf(scope);
  const meter = createOperationMeter(opts.cpuShare ?? unmetered);
  const fast = createGraphQLFastPath({
    meter,
    schema,
    buildContext,
    allowedOrigins: allowed,
    onCompile: () => compiled.inc(),
    // As Yoga masks an error of an execution, logging the original of one it replaced.
    maskError: (error) => {
      const masked = maskUnexpected(error, ERROR_MESSAGE, opts.debugErrors);
      if (masked !== error) logging.error(error);
      return masked;
    },
  });
  const fastAnswers = new Counter({
    name: 'graphql_fast_path_answers_total',
    help: 'GraphQL requests answered by the fast path for hot documents rather than by Yoga',
    registers: [opts.registry],
  });
  const yoga = yogaAt(scope, schema, buildContext, opts, '/graphql', [
    operationsOnly('others', `Subscriptions are served over server-sent events at ${STREAM_ENDPOINT}.`),
    // Hot documents run as compiled functions (graphql-jit), the others with graphql-js; the document
    // limits (graphqlLimits) bound what one compilation can cost.
    operationCounting,
    hotDocumentJit({ onCompile: () => compiled.inc() }),
    meter.plugin(),
    // The fast path learns from Yoga which documents passed validation.
    ...(opts.fastPath ? [fast.plugin] : []),
    // Last: it wraps whichever executor the plugins above chose.
    ...operationTracing(),
  ]);

  scope.route({
    url: '/graphql',
    method: ['GET', 'POST', 'OPTIONS'],
    schema: { hide: true },
    preValidation: getParametersParse,
    handler: async (req, reply) => {
      const answer = opts.fastPath ? fast.answer(req) : undefined;
      if (answer) {
        fastAnswers.inc();
        const { status, headers, body } = await answer;
        return reply.status(status).headers(headers).send(body);
      }
      return answerWithYoga(yoga, req, reply);
    },
  });
}

/**
 * Mounts a second Yoga at /graphql/stream for subscriptions alone, answered as server-sent events (Yoga's own,
 * compatible with graphql-sse's "distinct connections" mode). The scope admits each stream against its tenant's
 * cap of subscriptions rather than the budget of requests (admission.ts), since a stream lasts for hours.
 * Streams still open when the server closes are ended, so that closing does not wait for their clients.
 */
export function registerGraphQLStream(
  scope: FastifyInstance,
  schema: GraphQLSchema,
  buildContext: (req: FastifyRequest) => Context,
  opts: Pick<GraphQLOptions, 'corsOrigins' | 'debugErrors'>,
) {
  const yoga = yogaAt(scope, schema, buildContext, opts, STREAM_ENDPOINT, [
    operationsOnly('subscriptions', 'Queries and mutations are sent to /graphql; only subscriptions are served here.'),
  ]);
  const open = new Set<FastifyReply>();
  scope.addHook('preClose', (done) => {
    for (const reply of open) reply.raw.end();
    done();
  });
  scope.route({
    url: STREAM_ENDPOINT,
    method: ['GET', 'POST', 'OPTIONS'],
    schema: { hide: true },
    preValidation: getParametersParse,
    handler: async (req, reply) => {
      open.add(reply);
      reply.raw.once('close', () => open.delete(reply));
      return answerWithYoga(yoga, req, reply);
    },
  });
}

/**
 * Yoga parses these parameters of a GET with JSON.parse and answers 500 when that throws. A callback rather
 * than an async hook: most requests are POSTs, which need no promise and no tick here.
 */
function getParametersParse(req: FastifyRequest, _reply: FastifyReply, done: (e?: Error) => void) {
  if (req.method !== 'GET') return done();
  const query = req.query as Record<string, unknown>;
  for (const name of ['variables', 'extensions']) {
    const value = query[name];
    if (typeof value !== 'string') continue;
    try {
      JSON.parse(value);
    } catch {
      return done(validationFailed([{ path: name, message: 'is not valid JSON' }]));
    }
  }
  done();
}

type Yoga = ReturnType<typeof yogaAt>;

async function answerWithYoga(yoga: Yoga, req: FastifyRequest, reply: FastifyReply) {
  const response = await yoga.handleNodeRequestAndResponse(req, reply, { req, reply });
  response.headers.forEach((value, key) => {
    reply.header(key, value);
  });
  reply.status(response.status);
  // A JSON answer goes out as the string it is; only streamed answers (event streams) need a stream.
  reply.send(/json/.test(response.headers.get('content-type') ?? '') ? await response.text() : response.body);
  return reply;
}

function yogaAt(
  scope: FastifyInstance,
  schema: GraphQLSchema,
  buildContext: (req: FastifyRequest) => Context,
  opts: Pick<GraphQLOptions, 'corsOrigins' | 'debugErrors'>,
  endpoint: string,
  plugins: Plugin[],
) {
  const allowed = new Set(opts.corsOrigins);
  return createYoga<{ req: FastifyRequest; reply: FastifyReply }>({
    schema,
    graphqlEndpoint: endpoint,
    // GraphiQL loads its assets from a CDN; the service serves nothing from outside itself.
    graphiql: false,
    landingPage: false,
    plugins: [...graphqlLimits(), ...plugins],
    // Parsed documents and parse errors, bounded by what they keep rather than by their number (document-cache.ts).
    parserAndValidationCache: { documentCache: documentCache(), errorCache: documentCache() },
    maskedErrors: {
      errorMessage: ERROR_MESSAGE,
      // Yoga unmasks errors whenever NODE_ENV is development, as many run it; only our own setting does here.
      isDev: opts.debugErrors,
      maskError: maskUnexpected,
    },
    // Credentials travel in headers, never cookies, so no origin is allowed credentials. Yoga's
    // default reflects any origin; here a foreign one gets no CORS headers at all.
    cors: (request) => {
      const origin = request.headers.get('origin');
      if (!origin || !allowed.has(origin)) return false;
      return {
        origin: [origin],
        credentials: false,
        methods: ['GET', 'POST'],
        allowedHeaders: ['content-type', 'authorization', 'x-api-key', 'x-request-id'],
        exposedHeaders: ['x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after'],
        maxAge: 600,
      };
    },
    logging: loggingOf(scope),
    context: ({ req }) => buildContext(req),
  });
}
