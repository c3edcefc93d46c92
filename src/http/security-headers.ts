import type { FastifyInstance } from 'fastify';

/** On every response, errors included: no content sniffing, no Referer to wherever a link leads. */
export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;

/** The same for problem documents written outside the app's hooks (framework errors, raw socket answers). */
export const PROBLEM_HEADERS = { ...SECURITY_HEADERS, 'cache-control': 'no-store' } as const;

// A JSON document is data, never a page: nothing in it may load or frame.
const JSON_CSP = "default-src 'none'; frame-ancestors 'none'";

/**
 * Headers for API responses. Answers carry tenants' data and tokens, so no cache may keep them unless a
 * route says otherwise (the dashboard's assets do); the dashboard and API docs set their own CSP.
 */
export function registerSecurityHeaders(app: FastifyInstance) {
  // Synchronous hooks: they run on every request, and an async one costs a promise and a turn each.
  app.addHook('onRequest', (_req, reply, done) => {
    reply.headers(SECURITY_HEADERS);
    done();
  });
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    if (/json/i.test(String(reply.getHeader('content-type') ?? '')) && !reply.hasHeader('content-security-policy')) {
      reply.header('content-security-policy', JSON_CSP);
    }
    done(null, payload);
  });
}
