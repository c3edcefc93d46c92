import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { problemFor } from '../errors.ts';
import { PROBLEM_HEADERS } from './security-headers.ts';

/**
 * Gives the rest of the request body `ms` to arrive: past it the client gets 408 and the connection is
 * closed. Several deadlines may be armed on one request (the shortest wins); each is cleared once the
 * body has arrived.
 */
export function armBodyDeadline(req: FastifyRequest, reply: FastifyReply, ms: number) {
  // `complete` is Node's word for a request read whole; a stream that has ended says the same.
  const arrived = () => req.raw.complete || req.raw.readableEnded;
  const length = req.headers['content-length'];
  const bodyless = !req.headers['transfer-encoding'] && (length === undefined || length === '0');
  if (bodyless || arrived()) return;
  const timer = setTimeout(() => {
    if (arrived()) return;
    req.log.warn({ ms }, 'request body not received in time; closing the connection');
    if (!reply.raw.headersSent) {
      const body = JSON.stringify(problemFor('request_timeout', `The request did not arrive within ${ms / 1000} s.`));
      reply.raw.writeHead(408, {
        'content-type': 'application/problem+json',
        connection: 'close',
        'content-length': Buffer.byteLength(body),
        ...PROBLEM_HEADERS,
      });
      reply.raw.end(body);
    }
    // A net.Socket ends after what was written is flushed; a request made in-process has a socket without that.
    const socket = req.raw.socket as { destroySoon?: () => void; destroy?: () => void } | undefined;
    if (typeof socket?.destroySoon === 'function') socket.destroySoon();
    else socket?.destroy?.();
  }, ms);
  timer.unref();
  req.raw.once('end', () => clearTimeout(timer));
  req.raw.once('close', () => clearTimeout(timer));
}

/**
 * A request must arrive whole within `ms`. Node's own request timeout is only checked every so often
 * and a client that trickles a byte now and then keeps the socket alive, so the body read gets its own
 * deadline. Requests without a credential get a shorter one where they are classified (admission.ts).
 */
export function registerRequestDeadline(app: FastifyInstance, ms: number) {
  app.addHook('onRequest', (req, reply, done) => {
    armBodyDeadline(req, reply, ms);
    done();
  });
}
