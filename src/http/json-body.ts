import type { FastifyInstance } from 'fastify';
import { validationFailed } from '../errors.ts';

function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(containsNul);
  if (value && typeof value === 'object') return Object.entries(value).some(([k, v]) => k.includes('\u0000') || containsNul(v));
  return false;
}

/**
 * Fastify's JSON parser (prototype poisoning refused), plus one rule PostgreSQL imposes: text and
 * jsonb cannot hold U+0000, so a body that carries one is bad input here, not a database error later.
 */
export function registerJsonBodyParser(app: FastifyInstance) {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    parse(req, body as string, (err, value) => {
      if (err) return done(err);
      // The escape is the only way a NUL gets into JSON text, so most bodies skip the walk.
      if ((body as string).includes('\\u0000') && containsNul(value)) {
        return done(validationFailed([{ path: 'body', message: 'must not contain the NUL character (\\u0000)' }]));
      }
      done(null, value);
    });
  });
}
