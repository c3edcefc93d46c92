import type { CombinedError } from 'urql';

export interface FieldError {
  path: string;
  message: string;
}

export interface Problem {
  code: string;
  message: string;
  fieldErrors: FieldError[];
}

const NETWORK = 'The service did not answer. Check your connection and try again.';

// Before GraphQL runs, the service answers some requests itself (a rejected session, the rate limit);
// those arrive as HTTP errors, not GraphQL errors.
const BY_STATUS: Record<number, Problem> = {
  401: { code: 'invalid_credentials', message: 'Your session is no longer valid.', fieldErrors: [] },
  429: { code: 'rate_limited', message: 'Too many requests from your workspace in the last minute.', fieldErrors: [] },
  503: { code: 'service_unavailable', message: 'The service is starting or overloaded. Try again in a moment.', fieldErrors: [] },
};

export function httpStatus(error: CombinedError): number | undefined {
  const response = error.response as { status?: number } | undefined;
  return typeof response?.status === 'number' ? response.status : undefined;
}

/** One readable problem from an urql error: the domain code the API set, its message and field errors. */
export function toProblem(error: CombinedError): Problem {
  if (error.networkError && !error.graphQLErrors.length) {
    const status = httpStatus(error);
    return (status !== undefined && BY_STATUS[status]) || { code: 'network', message: NETWORK, fieldErrors: [] };
  }
  const first = error.graphQLErrors[0];
  const ext = (first?.extensions ?? {}) as { code?: string; errors?: FieldError[] };
  return {
    code: ext.code ?? 'error',
    message: first?.message ?? error.message,
    fieldErrors: Array.isArray(ext.errors) ? ext.errors : [],
  };
}

export const SESSION_ENDED = new Set(['missing_credentials', 'invalid_credentials']);
