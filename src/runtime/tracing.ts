import { createRequire, syncBuiltinESMExports } from 'node:module';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Tracing } from '../config.ts';
import { isUntracedAgent, markTracingStarted } from './trace-context.ts';

/** A running tracer provider: flushes what it holds, and ends. */
export interface TracingHandle {
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** Requests that are only probes: no trace for them (they come every few seconds from every balancer). */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Starts the OpenTelemetry SDK with the instrumentations of http (server and client), Fastify, pg and
 * GraphQL, and registers it globally (context manager, W3C trace-context propagator). Call it first,
 * before the modules that load pg, http or graphql, and only when tracing is on: everything here is
 * loaded on demand, so with tracing off no SDK module is loaded and nothing is patched.
 *
 * The instrumentations hook `require` (Module.prototype.require). The service's own modules are ECMAScript
 * modules, whose `import`s do not pass that hook: a package is patched only when some CommonJS module
 * requires it first (Fastify requires `http`, for one), which is an accident of the dependencies of the day.
 * So once the hooks are in place the packages are loaded here through `require`, which patches their
 * exports in place (prototypes and module objects), and every later `import` gets the same patched
 * objects. This works the same under tsx and in the compiled build, and needs no loader flag. Fastify is
 * instrumented through its own diagnostics channel (@fastify/otel's registerOnInitialization).
 */
export async function startTracing(config: Tracing, opts: { exporter?: SpanExporter } = {}): Promise<TracingHandle | null> {
  if (!config.enabled) return null;
  const [{ NodeTracerProvider, BatchSpanProcessor, ConsoleSpanExporter, ParentBasedSampler, TraceIdRatioBasedSampler }, resources] =
    await Promise.all([import('@opentelemetry/sdk-trace-node'), import('@opentelemetry/resources')]);
  const [{ registerInstrumentations }, { HttpInstrumentation }, { PgInstrumentation }, { GraphQLInstrumentation }, fastifyOtel] =
    await Promise.all([
      import('@opentelemetry/instrumentation'),
      import('@opentelemetry/instrumentation-http'),
      import('@opentelemetry/instrumentation-pg'),
      import('@opentelemetry/instrumentation-graphql'),
      import('@fastify/otel'),
    ]);
  const exporter =
    opts.exporter ??
    (config.exporter === 'console'
      ? new ConsoleSpanExporter()
      : new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter({ url: config.url }));
  const provider = new NodeTracerProvider({
    // The version when npm started the process (npm start); plain `node dist/src/main.js` names none.
    resource: resources.resourceFromAttributes({
      'service.name': config.serviceName,
      ...(process.env.npm_package_version ? { 'service.version': process.env.npm_package_version } : {}),
    }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio) }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  provider.register();
  markTracingStarted();
  const { FastifyOtelInstrumentation } = fastifyOtel;
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0]!),
        // A client request outside any trace (a background poll) starts none of its own.
        requireParentforOutgoingSpans: true,
        // Webhook deliveries record a span of their own and send no trace headers (outbox/sender/http-send.ts).
        ignoreOutgoingRequestHook: (options) => isUntracedAgent(options.agent),
      }),
      // The request's span only: spans of its handler and of each hook would triple the spans of every
      // request (measured: tracing then cost twice the CPU per request) for little insight.
      new FastifyOtelInstrumentation({
        registerOnInitialization: true,
        instrumentHooks: false,
        instrumentHandler: false,
        ignorePaths: (route) => UNTRACED_PATHS.has(route.url ?? ''),
      }),
      // Statements outside a trace (the relay's and the sweeper's polling) would each be a trace of one span.
      // No span per pool checkout, which would double the statements' spans; a wait shows as a gap before one.
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      new GraphQLInstrumentation({ ignoreTrivialResolveSpans: true, mergeItems: true }),
    ],
  });
  const require = createRequire(import.meta.url);
  for (const name of ['node:http', 'node:https', 'pg', 'graphql']) require(name);
  // Named imports of built-ins (`import { request } from 'node:http'`) see the patched functions too.
  syncBuiltinESMExports();
  return {
    forceFlush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
