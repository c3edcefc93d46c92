import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  DomainError,
  ERROR_CATALOG,
  type ErrorCode,
  type FieldError,
  isErrorCode,
  isPoolExhausted,
  problemFor,
  validationFailed,
} from '../errors.ts';
import { jsonContentTypeRefusal } from './media-type.ts';

export function sendProblem(reply: FastifyReply, code: ErrorCode, detail: string, errors?: FieldError[]) {
  const body = problemFor(code, detail, errors);
  if (code === 'missing_credentials' || code === 'invalid_credentials') {
    reply.header('www-authenticate', code === 'missing_credentials' ? 'Bearer realm="api"' : 'Bearer realm="api", error="invalid_token"');
  }
  return reply.code(body.status).type('application/problem+json; charset=utf-8').send(body);
}

interface AjvIssue {
  instancePath: string;
  message?: string;
  keyword: string;
  params: Record<string, unknown>;
}

function fieldErrors(issues: AjvIssue[]): FieldError[] {
  return issues.map((i) => {
    const base = i.instancePath.replace(/^\//, '').replaceAll('/', '.');
    const missing = i.keyword === 'required' ? String(i.params.missingProperty) : undefined;
    const extra = i.keyword === 'additionalProperties' ? String(i.params.additionalProperty) : undefined;
    const path = [base, missing ?? extra].filter(Boolean).join('.') || 'body';
    const message =
      i.keyword === 'enum'
        ? `must be one of: ${(i.params.allowedValues as unknown[]).join(', ')}`
        : i.keyword === 'required'
          ? 'is required'
          : i.keyword === 'additionalProperties'
            ? 'is not a known field'
            : i.keyword === 'format' && i.params.format === 'uuid'
              ? 'must be a UUID'
              : (i.message ?? 'is invalid');
    return { path, message };
  });
}

/** Bodies refused as too large up to this size are read to the end so the client gets the answer. */
const DRAIN_REFUSED_BODY_BYTES = 8 * 1024 * 1024;

/** One error handler for the whole service: domain errors and Fastify's own become problem+json; 5xx detail never leaves. */
export function registerProblemHandlers(app: FastifyInstance) {
  app.setErrorHandler((error: FastifyError | DomainError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof DomainError) {
      if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
      return sendProblem(reply, error.code, error.message, error.fieldErrors);
    }
    const fe = error as FastifyError & { validation?: AjvIssue[] };
    if (fe.validation) {
      const e = validationFailed(fieldErrors(fe.validation));
      return sendProblem(reply, e.code, e.message, e.fieldErrors);
    }
    if (isPoolExhausted(error)) {
      request.log.warn({ err: error }, 'no database connection free in time; answered 503');
      reply.header('retry-after', '1');
      return sendProblem(reply, 'service_unavailable', 'The database is busy; retry in a second.');
    }
    const status = fe.statusCode ?? 500;
    if (status === 413) {
      // Fastify closes the connection on a refused body; a client still uploading a body only somewhat
      // over the limit would then see a reset instead of this answer. Keeping the connection lets Node
      // read and discard the rest (within the body deadline); a huge announced body is still cut off.
      if (Number(request.headers['content-length']) <= DRAIN_REFUSED_BODY_BYTES) reply.removeHeader('connection');
      return sendProblem(reply, 'payload_too_large', 'The request body is larger than the limit.');
    }
    if (status === 415) {
      const detail = jsonContentTypeRefusal(request.headers['content-type']) ?? 'Send the body as application/json.';
      return sendProblem(reply, 'unsupported_media_type', detail);
    }
    if (status === 429) return sendProblem(reply, 'rate_limited', 'Too many requests.');
    if (status >= 400 && status < 500) {
      const detail = fe.code?.startsWith('FST_ERR_CTP') ? 'The body is not valid JSON.' : fe.message;
      return sendProblem(reply, status === 404 ? 'not_found' : 'validation_failed', detail);
    }
    request.log.error({ err: error }, 'request failed');
    return sendProblem(
      reply,
      status === 503 ? 'service_unavailable' : 'internal_error',
      `Something went wrong on our side; quote request id ${request.id}.`,
    );
  });

  app.setNotFoundHandler((request, reply) => sendProblem(reply, 'not_found', `No route ${request.method} ${request.url.split('?')[0]}.`));

  // Problem `type` URIs resolve to a short description of the error code.
  app.get('/problems/:code', { schema: { hide: true } }, async (request, reply) => {
    const { code } = request.params as { code: string };
    // Own keys only: __proto__, constructor or toString are not error codes.
    if (!isErrorCode(code)) return sendProblem(reply, 'not_found', `No error code ${code}.`);
    return { code, ...ERROR_CATALOG[code] };
  });
}
