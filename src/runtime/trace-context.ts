import {
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  ROOT_CONTEXT,
  type Attributes,
  type Context,
  type Link,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

/**
 * The project's side of tracing, on the OpenTelemetry API alone: with no SDK registered (tracing off,
 * runtime/tracing.ts) every call here is the API's no-op, no span is recorded and no trace context is
 * ever produced, so the columns and headers that carry one stay empty.
 */
export const tracer = trace.getTracer('customer-health-service');

export { SpanKind, SpanStatusCode, type Span };

/** Whether runtime/tracing.ts registered an SDK in this process; until then spans are not even started. */
let tracingStarted = false;
/** Whether spans are recorded in this process (runtime/tracing.ts started an SDK). */
export const isTracing = (): boolean => tracingStarted;
/** Called by runtime/tracing.ts once the SDK is registered. */
export function markTracingStarted(): void {
  tracingStarted = true;
}

/** The W3C `traceparent` of the active span, to store beside work that continues later; null outside a trace. */
export function currentTraceparent(): string | null {
  if (!trace.getActiveSpan()) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** The context a stored or received `traceparent` names, as a parent; the active context when there is none. */
export function contextOf(traceparent: unknown): Context {
  if (typeof traceparent !== 'string' || traceparent === '') return context.active();
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}

/** Headers for a message published now: the active trace's `traceparent` (and `tracestate`); empty outside a trace. */
export function messageHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  if (trace.getActiveSpan()) propagation.inject(context.active(), headers);
  return headers;
}

/**
 * Runs a queue consumer's handler for one message in a consumer span, child of the trace its headers
 * carry (messageHeaders). A message published outside any trace (by the sweeper, the relay) gets no span
 * of its own: the work it names continues the traces stored with its rows. Outside tracing it only calls `fn`.
 */
export function consumedInSpan<T>(
  system: 'rabbitmq' | 'memory',
  topic: string,
  headers: Record<string, unknown> | undefined,
  attempt: number,
  fn: () => Promise<T>,
): Promise<T> {
  if (!tracingStarted || typeof headers?.traceparent !== 'string') return fn();
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  return inSpan(
    `${topic} process`,
    {
      kind: SpanKind.CONSUMER,
      parent,
      attributes: {
        'messaging.system': system,
        'messaging.destination.name': topic,
        'messaging.operation.type': 'process',
        'chs.message.attempt': attempt,
      },
    },
    () => fn(),
  );
}

/** A link to the trace a stored `traceparent` names; none without one (never to the active span). */
export function linkTo(traceparent: unknown): Link | null {
  if (typeof traceparent !== 'string' || traceparent === '') return null;
  const spanContext = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
  return spanContext ? { context: spanContext } : null;
}

/** What `inSpan` hands over while tracing is off: a span that records nothing. */
const UNRECORDED = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Runs `fn` inside a new span (child of `parent`, or of the active context), ending it when `fn` settles
 * and marking it failed when `fn` throws.
 */
export function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; links?: Link[]; parent?: Context },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  if (!tracingStarted) return fn(UNRECORDED);
  const { parent, ...spanOptions } = options;
  return tracer.startActiveSpan(name, spanOptions, parent ?? context.active(), async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}

const untraced = new WeakSet<object>();

/**
 * Requests through `agent` get no client span from the http instrumentation and, above all, no trace
 * headers: the caller records its own span (the webhook sender does, and keeps our trace ids to itself).
 */
export function untracedAgent<A extends object>(agent: A): A {
  untraced.add(agent);
  return agent;
}

/** Whether requests through `agent` are left alone by the http instrumentation (runtime/tracing.ts). */
export const isUntracedAgent = (agent: unknown): boolean => typeof agent === 'object' && agent !== null && untraced.has(agent);

/** Sets attributes on the active span, if any (a request's operation and tenant). */
export function annotateActiveSpan(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}

/** The ids of the active span, for log lines; empty outside a recorded span. */
export function activeSpanIds(): { trace_id: string; span_id: string } | Record<string, never> {
  const ids = trace.getActiveSpan()?.spanContext();
  return ids && trace.isSpanContextValid(ids) ? { trace_id: ids.traceId, span_id: ids.spanId } : {};
}
