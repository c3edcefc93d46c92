import type { FastifyInstance } from 'fastify';
import { DomainError, validationFailed } from '../errors.ts';
import { jsonContentTypeRefusal } from './media-type.ts';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Whether any string or key in a parsed value matches the test. */
function anyString(value: unknown, test: (s: string) => boolean): boolean {
  if (typeof value === 'string') return test(value);
  if (Array.isArray(value)) return value.some((v) => anyString(v, test));
  if (value && typeof value === 'object') return Object.entries(value).some(([k, v]) => test(k) || anyString(v, test));
  return false;
}

/**
 * The API's JSON body parser: the Content-Type rule of media-type.ts, Fastify's JSON parser
 * (prototype poisoning refused), and text PostgreSQL can store as it was sent: strict UTF-8 (a
 * malformed byte would otherwise become U+FFFD), no lone surrogate from a `\ud800`-style escape
 * (it has no UTF-8 form), and no U+0000 (text and jsonb cannot hold it).
 */
export function registerJsonBodyParser(app: FastifyInstance) {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body, done) => {
    // No route takes this request: its answer is 404, whatever its body.
    if (req.is404) return done(null, undefined);
    const refusal = jsonContentTypeRefusal(req.headers['content-type']);
    if (refusal) return done(new DomainError('unsupported_media_type', refusal));
    let text: string;
    try {
      text = utf8.decode(body as Buffer);
    } catch {
      return done(validationFailed([{ path: 'body', message: 'is not valid UTF-8' }]));
    }
    parse(req, text, (err, value) => {
      if (err) return done(err);
      // Only an escape can put a NUL or a lone surrogate into valid UTF-8 JSON text, so most bodies skip the walks.
      if (text.includes('\\u0000') && anyString(value, (s) => s.includes('\u0000'))) {
        return done(validationFailed([{ path: 'body', message: 'must not contain the NUL character (\\u0000)' }]));
      }
      if (/\\u[dD][89a-fA-F]/.test(text) && anyString(value, (s) => LONE_SURROGATE.test(s))) {
        return done(validationFailed([{ path: 'body', message: 'must not contain a lone UTF-16 surrogate (such as \\ud800)' }]));
      }
      done(null, value);
    });
  });
}
