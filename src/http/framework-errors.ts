import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type ErrorCode, problemFor } from '../errors.ts';
import { sendProblem } from './problem.ts';
import { PROBLEM_HEADERS } from './security-headers.ts';

/** Errors Fastify raises before a route is found: a URL it cannot decode, a path parameter over its length limit. */
export function frameworkErrors(error: FastifyError, _req: FastifyRequest, reply: FastifyReply) {
  // These replies skip the app's hooks, so they take the headers every response carries here.
  reply.headers(PROBLEM_HEADERS);
  if (error.code === 'FST_ERR_BAD_URL') return sendProblem(reply, 'bad_request', 'The URL is not valid (bad percent-encoding).');
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendProblem(reply, 'uri_too_long', 'A path segment is longer than the limit.');
  reply.log.error({ err: error }, 'request failed before routing');
  return sendProblem(reply, 'internal_error', `Something went wrong on our side; quote request id ${reply.request.id}.`);
}

const CLIENT_ERRORS: Record<string, [ErrorCode, string]> = {
  HPE_HEADER_OVERFLOW: ['headers_too_large', 'The request line and headers are larger than the limit.'],
  ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout', 'The request did not arrive in time.'],
};

/**
 * Requests Node's HTTP parser refuses never reach Fastify (over-long request line or headers, malformed
 * HTTP): they get the same problem document as everything else, written straight to the socket.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket) {
  // A reset connection has nobody left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [code, detail] = CLIENT_ERRORS[err.code ?? ''] ?? ['bad_request', 'The request is not valid HTTP/1.1.'];
  const problem = problemFor(code, detail);
  const body = JSON.stringify(problem);
  if (socket.writable) {
    const headers = {
      'content-type': 'application/problem+json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      connection: 'close',
      ...PROBLEM_HEADERS,
    };
    const head = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(`HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n${head}\r\n${body}`);
  }
  socket.destroy(err);
}
