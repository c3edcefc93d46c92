import type { FastifyRequest } from 'fastify';

// Query parameters whose values are secrets (Meta's hub.verify_token, tokens, keys, signatures,
// passwords) by their name; GraphQL over GET carries whole documents and variables in the URL.
const SECRET_NAME = /token|key|secret|passw|signature|sig$|auth|credential|session|code$/i;
const GRAPHQL_PARAMS = new Set(['query', 'variables', 'extensions']);

const nameOf = (raw: string) => {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
};

/** The URL as it may be logged: path kept, values of secret-looking query parameters replaced. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const path = url.slice(0, q);
  const graphql = path.endsWith('/graphql');
  const params = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq === -1 ? pair : pair.slice(0, eq);
      const name = nameOf(rawName);
      return SECRET_NAME.test(name) || (graphql && GRAPHQL_PARAMS.has(name)) ? `${rawName}=[redacted]` : pair;
    });
  return `${path}?${params.join('&')}`;
}

/** Fastify's request serializer, with the URL redacted. */
export function serializeRequest(req: FastifyRequest) {
  return {
    method: req.method,
    url: redactUrl(req.url),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}
