import type { FastifyInstance } from 'fastify';

/** A retired route's dates, set as the route's `config.deprecation` (docs/api-versioning.md). */
export interface Deprecation {
  /** When the route was deprecated. */
  since: Date;
  /** When it stops answering; at least six months after `since`. */
  sunset: Date;
  /** Where the replacement is described, sent as a Link with rel="deprecation". */
  link?: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    deprecation?: Deprecation;
  }
}

/** The headers announcing a deprecation: Deprecation (RFC 9745), Sunset (RFC 8594) and a Link. */
export function deprecationHeaders(d: Deprecation): Record<string, string> {
  return {
    deprecation: `@${Math.floor(d.since.getTime() / 1000)}`,
    sunset: d.sunset.toUTCString(),
    ...(d.link ? { link: `<${d.link}>; rel="deprecation"` } : {}),
  };
}

/** Every answer of a route with `config.deprecation` carries the headers, errors included. */
export function registerDeprecation(app: FastifyInstance) {
  app.addHook('onRequest', (request, reply, done) => {
    const d = request.routeOptions.config?.deprecation;
    if (d) reply.headers(deprecationHeaders(d));
    done();
  });
}

/** For the OpenAPI description: a route with `config.deprecation` is marked deprecated. */
export function markDeprecated<T extends { schema?: unknown; url: string; route: { config?: { deprecation?: Deprecation } } }>({
  schema,
  url,
  route,
}: T) {
  const base = (schema ?? {}) as Record<string, unknown>;
  return { schema: route.config?.deprecation ? { ...base, deprecated: true } : base, url };
}
