import type { FastifyInstance } from 'fastify';
import { DomainError, validationFailed } from '../errors.ts';
import { jsonContentTypeRefusal } from './media-type.ts';
import { textProblemIn } from '../text.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

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
      // Only an escape can put a NUL or a lone surrogate into valid UTF-8 JSON text, so most bodies skip the walk.
      if (/\\u(?:0000|[dD][89a-fA-F])/.test(text)) {
        const problem = textProblemIn(value);
        if (problem) return done(validationFailed([{ path: problem.path || 'body', message: problem.message }]));
      }
      done(null, value);
    });
  });
}
