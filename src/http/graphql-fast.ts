import type { FastifyRequest } from 'fastify';
import { type DocumentNode, type ExecutionResult, Kind, type OperationDefinitionNode } from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import { type Plugin, processRegularResult } from 'graphql-yoga';
import type { Context } from '../schema/context.ts';
import { countOperation } from '../runtime/metrics.ts';
import { asInterpreted, COMPILE_AFTER_RUNS, refusedVariables } from './graphql-jit.ts';
import { checkVariableCost } from './graphql-cost.ts';
import { codeRejectedDocument, GRAPHQL_LIMITS } from './graphql-limits.ts';
import { documentCache } from './document-cache.ts';
import { costOf, type OperationMeter } from './graphql-share.ts';
import { inOperationSpan } from './graphql-tracing.ts';

/** What /graphql answers: status, headers and the body as text. */
export interface GraphQLAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

interface Entry {
  document: DocumentNode;
  operation: OperationDefinitionNode;
  /** Requests this path could have answered for this document so far, the one that validated it included. */
  runs: number;
  compiled?: CompiledQuery;
}

/** Accept headers remembered with the media type they choose; clients send a handful of distinct ones. */
const MAX_ACCEPTS = 64;

const PARAMS = new Set(['query', 'variables', 'operationName', 'extensions']);

/**
 * The media type Yoga answers a single result in for this Accept header, or undefined where it would
 * choose otherwise (event streams, multipart, 406). The same walk as Yoga's result processors: the last
 * match wins, over the accepted types from last to first and the JSON types in Yoga's order.
 */
export function regularMediaType(accept: string | undefined): string | undefined {
  const asked = (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',');
  const types: string[] = [];
  for (const a of asked) {
    const [type, ...params] = a.split(';');
    const charset = params.find((p) => p.includes('charset=')) ?? 'charset=utf-8';
    if (charset === 'charset=utf-8' && type !== undefined) types.push(type);
  }
  // A wildcard in the requested type matches any offered one.
  const matches = (offered: string, requested: string) => {
    const [op, os] = offered.split('/');
    const [rp, rs] = requested.split('/');
    return (rp === '*' || rp === op) && (rs === '*' || rs === os);
  };
  // Yoga tries the streaming processors first and the JSON one last, so a JSON match always wins.
  let chosen: string | undefined;
  for (const type of types.reverse()) {
    for (const offered of ['application/graphql-response+json', 'application/json']) if (matches(offered, type)) chosen = offered;
  }
  return chosen;
}

// processRegularResult builds a fetch Response; this one keeps what it was given instead.
class CapturedResponse {
  constructor(
    readonly body: string,
    readonly init: { status?: number; headers?: Record<string, string> },
  ) {}
}
const CAPTURE = { Response: CapturedResponse } as unknown as Parameters<typeof processRegularResult>[1];

export interface FastPathOptions {
  schema: Parameters<typeof compileQuery>[0];
  buildContext: (req: FastifyRequest) => Context;
  /** Yoga's error masking, logging included, exactly as configured for the server. */
  maskError: (error: Error) => Error;
  allowedOrigins: Set<string>;
  compileAfterRuns?: number;
  onCompile?: () => void;
  /** Meters heavy operations by their cost, as under Yoga (graphql-share.ts); none are metered without it. */
  meter?: OperationMeter;
}

/**
 * Answers the common request to /graphql without Yoga's per-request machinery (fetch Request and
 * Response objects, plugin hook chains, a stream for the body): a JSON POST of one operation, by a
 * caller needing no CORS headers, whose document Yoga has already parsed and validated (the document
 * limits included) and which has proved hot, so it runs as a compiled function (graphql-jit) as it
 * would under Yoga. Everything else — a first sight of a document, several operations, GET, uploads,
 * subscriptions, streamed answers, CORS — is left to Yoga, and an answer here is Yoga's to the byte:
 * the same masking of errors, codes of rejected documents, status codes and media type (Yoga's own
 * result processor writes it).
 */
export function createGraphQLFastPath(opts: FastPathOptions) {
  const threshold = opts.compileAfterRuns ?? COMPILE_AFTER_RUNS;
  // Documents remembered by their text, within the same budget as Yoga's parser cache (document-cache.ts).
  const documents = documentCache<Entry>();
  const accepts = new Map<string, string | undefined>();

  const remember = (query: string, document: DocumentNode) => {
    const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    // Several operations are left to Yoga, which picks the one asked for; subscriptions stream.
    if (operations.length !== 1 || operations[0]!.operation === 'subscription') return;
    documents.set(query, { document, operation: operations[0]!, runs: 1 });
  };

  /** Learns, from Yoga, the documents that parsed and passed validation (the document limits are validation rules). */
  const plugin: Plugin = {
    onValidate({ params, context }) {
      const query = (context as { params?: { query?: unknown } }).params?.query;
      if (typeof query !== 'string' || documents.has(query)) return;
      return ({ valid }) => {
        if (valid) remember(query, params.documentAST);
      };
    },
  };

  const mediaTypeFor = (accept: string | undefined): string | undefined => {
    const key = accept ?? '';
    if (accepts.has(key)) return accepts.get(key);
    const type = regularMediaType(accept);
    if (accepts.size < MAX_ACCEPTS) accepts.set(key, type);
    return type;
  };

  /** The answer to this request, or undefined when it is Yoga's to answer. */
  const answer = (req: FastifyRequest): Promise<GraphQLAnswer> | undefined => {
    if (req.method !== 'POST') return undefined;
    const contentType = req.headers['content-type']?.split(',')[0];
    if (contentType !== 'application/json' && !contentType?.startsWith('application/json;')) return undefined;
    const origin = req.headers.origin;
    if (origin && opts.allowedOrigins.has(origin)) return undefined;
    const body = req.body as Record<string, unknown> | null;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
    for (const key in body) if (!PARAMS.has(key)) return undefined;
    const { query, variables, operationName, extensions } = body;
    if (typeof query !== 'string' || extensions != null) return undefined;
    if (variables != null && (typeof variables !== 'object' || Array.isArray(variables))) return undefined;
    if (operationName != null && typeof operationName !== 'string') return undefined;
    // Least recently used first out: a stream of one-off documents does not push out the hot ones.
    const entry = documents.get(query);
    if (!entry) return undefined;
    if (operationName != null && operationName !== entry.operation.name?.value) return undefined;
    const mediaType = mediaTypeFor(req.headers.accept);
    if (!mediaType) return undefined;
    if (!entry.compiled) {
      // Until it has proved hot a document runs on Yoga, with graphql-js, as every other does.
      if (++entry.runs < threshold) return undefined;
      const compiled = compileQuery(opts.schema, entry.document, undefined, { disablingCapturingStackErrors: true });
      if (!isCompiledQuery(compiled)) {
        documents.delete(query);
        return undefined;
      }
      entry.compiled = compiled;
      opts.onCompile?.();
    }
    const vars = variables as Record<string, unknown> | null | undefined;
    // As under Yoga: page sizes given as variables count in the cost limit with this request's values.
    const tooCostly = checkVariableCost(opts.schema, entry.document, entry.operation, vars, GRAPHQL_LIMITS.maxCost);
    if (tooCostly) return Promise.resolve(answerWith({ errors: [tooCostly] }, mediaType));
    // Refused before anything runs, as Yoga's executor refuses them (graphql-jit.ts).
    const refused = refusedVariables(opts.schema, entry.operation, vars);
    if (refused) return Promise.resolve(answerWith({ errors: refused.map((e) => opts.maskError(e)) as never }, mediaType));
    return run(entry.compiled, entry.document, entry.operation, req, vars, mediaType);
  };

  const answerWith = (result: ExecutionResult, mediaType: string): GraphQLAnswer => {
    const response = processRegularResult(codeRejectedDocument(result) as never, CAPTURE, mediaType) as unknown as CapturedResponse;
    return { status: response.init.status ?? 200, headers: response.init.headers ?? {}, body: response.body };
  };

  const run = async (
    compiled: CompiledQuery,
    document: DocumentNode,
    operation: OperationDefinitionNode,
    req: FastifyRequest,
    variables: Record<string, unknown> | null | undefined,
    mediaType: string,
  ): Promise<GraphQLAnswer> => {
    const built = opts.buildContext(req);
    const tenantId = built.principal?.tenantId;
    const asked = opts.meter?.meter(tenantId, costOf(opts.schema, document, operation, variables), built.prisma);
    const metered = asked instanceof Promise ? await asked : asked;
    const context = metered?.prisma ? { ...built, prisma: metered.prisma } : built;
    const started = performance.now();
    try {
      let result: ExecutionResult & { stringify?: (r: unknown) => string };
      try {
        const answer = await inOperationSpan(operation, tenantId, async () =>
          compiled.query(undefined, context, variables as Record<string, unknown>),
        );
        result = { ...asInterpreted(answer, document), stringify: compiled.stringify };
        if (result.errors) result = { ...result, errors: result.errors.map((e) => opts.maskError(e)) as never };
      } catch (e) {
        result = { errors: [opts.maskError(e as Error)] as never };
      }
      const done = result;
      countOperation(operation.name?.value, operation.operation, Boolean(done.errors?.length), (performance.now() - started) / 1000);
      return metered?.heavy ? await opts.meter!.written(tenantId, metered, () => answerWith(done, mediaType)) : answerWith(done, mediaType);
    } finally {
      metered?.release();
    }
  };

  return { plugin, answer };
}
