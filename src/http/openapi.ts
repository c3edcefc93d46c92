// What every operation of the OpenAPI description shares, written once: the problem answers, the
// headers the HTTP plumbing adds (rate limit, Retry-After, WWW-Authenticate, X-Request-Id), and the
// answers any route can give (500, 503). Routes declare only what is theirs; `finishDocument` adds the rest.
import { ERROR_CATALOG } from '../errors.ts';

type Json = Record<string, any>;

const PROBLEM_MEDIA = 'application/problem+json';

/** Route-level problem answers: they serialise the problem body and mark the status as one the route gives. */
export const problemResponses = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [s, { description: 'Problem details', content: { [PROBLEM_MEDIA]: { schema: { $ref: 'Problem#' } } } }]),
  );

const HEADERS: Json = {
  'RateLimit-Limit': {
    description: 'Requests allowed per window to this tenant (or, without credentials, to this address).',
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Reset': { description: 'Seconds until the window resets.', schema: { type: 'integer', minimum: 0 } },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } },
  'WWW-Authenticate': { description: 'The Bearer challenge (RFC 6750).', schema: { type: 'string' }, example: 'Bearer realm="api"' },
  'X-Request-Id': {
    description:
      'The request id: the caller’s own X-Request-Id when it is 8-64 of [A-Za-z0-9._-], else a new UUID. Quote it in support requests.',
    schema: { type: 'string' },
  },
  Location: { description: 'The URL of the created resource.', schema: { type: 'string' } },
};

/** Declared only while some operation is deprecated (an unused component is a lint warning). */
const DEPRECATION_HEADERS: Json = {
  Deprecation: {
    description: 'Set on a deprecated operation: when it was deprecated, as `@<unix seconds>` (RFC 9745).',
    schema: { type: 'string' },
  },
  Sunset: { description: 'Set on a deprecated operation: when it stops answering, an HTTP date (RFC 8594).', schema: { type: 'string' } },
  Link: { description: 'On a deprecated operation: where its replacement is described (`rel="deprecation"`).', schema: { type: 'string' } },
};

const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** Why a status happens, said once for every operation that can answer it. */
const STATUS_TEXT: Record<number, string> = {
  400: 'The request is malformed: a field fails validation, or credentials conflict (`validation_failed`, `conflicting_credentials`, `bad_request`).',
  401: 'Credentials are missing or invalid, or (inbound webhooks) the signature does not verify (`missing_credentials`, `invalid_credentials`, `invalid_signature`).',
  403: 'Not allowed: the plan has no API access, the caller may not do this, or (inbound webhooks) no signing secret is set for the provider (`plan_without_api_access`, `forbidden`, `inbound_secret_not_set`).',
  404: 'No such resource in this tenant (`not_found`).',
  408: 'The request body did not arrive in time (`request_timeout`).',
  409: 'The change conflicts with the current state (`conflict`, `limit_reached`).',
  413: 'The request body is larger than the limit (`payload_too_large`).',
  414: 'The URL is longer than the limit (`uri_too_long`).',
  415: 'The body is not sent as `application/json` (`unsupported_media_type`).',
  422: 'The request is understood but cannot be carried out (`not_enough_data`).',
  429: 'Too many requests: the tenant’s rate limit, or too many failed attempts from this address (`rate_limited`); wait `Retry-After` seconds.',
  500: 'Something failed on the service’s side (`internal_error`); quote the X-Request-Id.',
  503: 'The service is overloaded or a dependency is unavailable (`service_unavailable`); retry after `Retry-After` seconds.',
};

const EXAMPLE_DETAIL: Partial<Record<keyof typeof ERROR_CATALOG, string>> = {
  validation_failed: 'The request is not valid: see errors.',
  invalid_credentials: 'The API key is not valid.',
  forbidden: 'This key may not do that.',
  not_found: 'No such customer.',
  rate_limited: 'Rate limit of 100 requests per minute exceeded; retry in 12 seconds.',
};

/** The code an example shows for a status that several codes share. */
const EXAMPLE_CODE: Partial<Record<number, keyof typeof ERROR_CATALOG>> = {
  400: 'validation_failed',
  401: 'invalid_credentials',
  403: 'forbidden',
};

const problemExample = (status: number) => {
  const code =
    EXAMPLE_CODE[status] ?? (Object.keys(ERROR_CATALOG) as (keyof typeof ERROR_CATALOG)[]).find((c) => ERROR_CATALOG[c].status === status);
  if (!code) return undefined;
  return {
    type: `/problems/${code}`,
    title: ERROR_CATALOG[code].title,
    status,
    detail: EXAMPLE_DETAIL[code] ?? ERROR_CATALOG[code].title,
    code,
    ...(status === 400 ? { errors: [{ path: 'name', message: 'is required' }] } : {}),
  };
};

export interface DocumentOptions {
  /** Paths whose operations pass no rate limiter: no RateLimit-* headers on their answers. */
  notRateLimited: (path: string) => boolean;
  /** The requests the service sends to its users' endpoints (OpenAPI 3.1 `webhooks`). */
  webhooks?: Record<string, unknown>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** Applies the shared answers and headers to every operation of the document (in place) and returns it. */
export function finishDocument<T extends object>(document: T, opts: DocumentOptions): T {
  const doc = document as Json;
  if (String(doc.openapi).startsWith('3.1')) nullToTypeUnion(doc);
  doc.components ??= {};
  doc.components.headers = { ...HEADERS, ...doc.components.headers };
  const responses: Json = (doc.components.responses ??= {});
  const problemResponse = (status: number, limited: boolean) => {
    const name = `Problem${status}${limited ? '' : 'Unlimited'}`;
    if (!responses[name]) {
      const headers: Json = { 'X-Request-Id': header('X-Request-Id') };
      if (limited) Object.assign(headers, rateLimitHeaders());
      if (status === 429 || status === 503) headers['Retry-After'] = header('Retry-After');
      if (status === 401) headers['WWW-Authenticate'] = header('WWW-Authenticate');
      const example = problemExample(status);
      responses[name] = {
        description: STATUS_TEXT[status] ?? 'Problem details.',
        headers,
        content: { [PROBLEM_MEDIA]: { schema: { $ref: '#/components/schemas/Problem' }, ...(example ? { example } : {}) } },
      };
    }
    return { $ref: `#/components/responses/${name}` };
  };

  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    const limited = !opts.notRateLimited(path);
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const secured = (op.security ?? doc.security ?? []).length > 0;
      // A body schema that admits null (3.0 `nullable`, or a 3.1 type union): the operation takes no body as well.
      const body = op.requestBody?.content?.['application/json'];
      const types = body?.schema?.type;
      if (body?.schema?.nullable || (Array.isArray(types) && types.includes('null'))) {
        op.requestBody.required = false;
        delete body.schema.nullable;
        if (Array.isArray(types)) {
          const rest = types.filter((t: string) => t !== 'null');
          body.schema.type = rest.length === 1 ? rest[0] : rest;
        }
      }
      const common = [...(limited ? [400, 429] : []), ...(secured ? [401, 403] : []), ...(op.requestBody ? [408, 413, 415] : [])];
      const declared: Json = { ...op.responses };
      for (const code of common) declared[code] ??= { content: { [PROBLEM_MEDIA]: {} } };
      const out: Json = {};
      for (const [status, response] of Object.entries<Json>(declared)) {
        const code = Number(status);
        if (response.content?.[PROBLEM_MEDIA]) {
          // Credentials are checked before the rate limiter counts the request: their refusals carry no RateLimit-*.
          out[status] = problemResponse(code, limited && code !== 401 && code !== 403);
          continue;
        }
        const headers: Json = { ...response.headers, 'X-Request-Id': header('X-Request-Id') };
        if (limited) Object.assign(headers, rateLimitHeaders());
        if (code === 201) headers.Location = header('Location');
        if (op.deprecated) {
          Object.assign(doc.components.headers, DEPRECATION_HEADERS);
          Object.assign(headers, { Deprecation: header('Deprecation'), Sunset: header('Sunset'), Link: header('Link') });
        }
        out[status] = { ...response, headers };
      }
      // Any operation can be called with too long a URL, fail on the service's side or be shed under load.
      for (const code of [414, 500, 503]) out[code] ??= problemResponse(code, false);
      op.responses = Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
    }
  }
  if (opts.webhooks) {
    doc.webhooks = opts.webhooks;
    doc.tags = [
      ...(doc.tags ?? []),
      { name: 'Outbound webhooks', description: 'What the service sends to your endpoints, signed (docs/receiving-webhooks.md)' },
    ];
  }
  return document;
}

const rateLimitHeaders = () => ({
  'RateLimit-Limit': header('RateLimit-Limit'),
  'RateLimit-Remaining': header('RateLimit-Remaining'),
  'RateLimit-Reset': header('RateLimit-Reset'),
});

/**
 * OpenAPI 3.1 has no `nullable`: a schema written with it (the route schemas are shared by the 3.0 and
 * 3.1 descriptions) says null in its type instead, or in an anyOf when it has no type.
 */
function nullToTypeUnion(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(nullToTypeUnion);
  if (!node || typeof node !== 'object') return;
  const n = node as Json;
  if (n.nullable === true) {
    delete n.nullable;
    if (typeof n.type === 'string') n.type = [n.type, 'null'];
    else if (Array.isArray(n.type)) n.type = [...new Set([...n.type, 'null'])];
    else if (Array.isArray(n.anyOf)) n.anyOf = [...n.anyOf, { type: 'null' }];
    else if (Array.isArray(n.oneOf)) n.oneOf = [...n.oneOf, { type: 'null' }];
  } else if (n.nullable === false) delete n.nullable;
  for (const v of Object.values(n)) nullToTypeUnion(v);
}
