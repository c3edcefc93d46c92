import { GraphQLError } from 'graphql';

// The one table of error codes (docs/decisions.md §1): GraphQL carries the code in extensions, REST turns
// it into the HTTP status and an RFC 9457 problem document.
export const ERROR_CATALOG = {
  bad_request: { status: 400, title: 'Bad request' },
  conflicting_credentials: { status: 400, title: 'Conflicting credentials' },
  validation_failed: { status: 400, title: 'Validation failed' },
  missing_credentials: { status: 401, title: 'Missing credentials' },
  invalid_credentials: { status: 401, title: 'Invalid credentials' },
  invalid_signature: { status: 401, title: 'Invalid signature' },
  plan_without_api_access: { status: 403, title: 'Plan without API access' },
  forbidden: { status: 403, title: 'Forbidden' },
  inbound_secret_not_set: { status: 403, title: 'Inbound secret not set' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  conflict: { status: 409, title: 'Conflict' },
  limit_reached: { status: 409, title: 'Limit reached' },
  request_timeout: { status: 408, title: 'Request timeout' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  uri_too_long: { status: 414, title: 'URI too long' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  not_enough_data: { status: 422, title: 'Not enough data' },
  rate_limited: { status: 429, title: 'Too many requests' },
  headers_too_large: { status: 431, title: 'Request header fields too large' },
  internal_error: { status: 500, title: 'Internal server error' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export interface FieldError {
  path: string;
  message: string;
}

export class DomainError extends GraphQLError {
  readonly code: ErrorCode;
  readonly status: number;
  readonly fieldErrors?: FieldError[];
  /** Sent as Retry-After with a 429. */
  readonly retryAfterSeconds?: number;

  constructor(code: ErrorCode, detail: string, opts: { errors?: FieldError[]; retryAfterSeconds?: number } = {}) {
    const status = ERROR_CATALOG[code].status;
    super(detail, { extensions: { code, status, ...(opts.errors ? { errors: opts.errors } : {}) } });
    this.name = 'DomainError';
    this.code = code;
    this.status = status;
    this.fieldErrors = opts.errors;
    this.retryAfterSeconds = opts.retryAfterSeconds;
  }
}

export const notFound = (what: string) => new DomainError('not_found', `${what} was not found.`);

export const validationFailed = (errors: FieldError[]) =>
  new DomainError('validation_failed', errors.map((e) => `${e.path}: ${e.message}`).join('; '), { errors });

export const missingCredentials = () =>
  new DomainError('missing_credentials', 'Send an API key as Authorization: Bearer sk_... or X-API-Key, or a session token.');

export const forbidden = (detail = 'Your role does not allow this action.') => new DomainError('forbidden', detail);

/**
 * The database had no connection free in time: pg's pool wait ran out, or Prisma could not start (or
 * finish) an interactive transaction in time (P2028). The process is at capacity, not broken: such a
 * request is answered 503 with Retry-After, never 500.
 */
export function isPoolExhausted(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const e = error as { code?: unknown; message?: unknown; cause?: unknown };
  if (e.code === 'P2028') return true;
  if (typeof e.message === 'string' && e.message.includes('timeout exceeded when trying to connect')) return true;
  return e.cause !== undefined && e.cause !== error && isPoolExhausted(e.cause);
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CATALOG, value);
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  errors?: FieldError[];
  instance?: string;
}

export function problemFor(code: ErrorCode, detail: string, errors?: FieldError[]): Problem {
  const { status, title } = ERROR_CATALOG[code];
  return {
    // A relative reference, resolved against the service: GET /problems/{code} describes the error.
    type: `/problems/${code}`,
    title,
    status,
    detail,
    code,
    ...(errors?.length ? { errors } : {}),
  };
}

/**
 * An error stored by its code (a background job that failed, read later) as the error a request would have
 * been refused with, had it failed at once: a code the catalog does not have is an internal error, and a
 * service that was unavailable asks for a retry after a minute.
 */
export function storedError(e: { code: string; message: string }): DomainError {
  const code = isErrorCode(e.code) ? e.code : 'internal_error';
  return new DomainError(code, e.message, code === 'service_unavailable' ? { retryAfterSeconds: 60 } : {});
}
