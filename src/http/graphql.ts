import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import { createYoga, maskError } from 'graphql-yoga';
import { isPoolExhausted } from '../errors.ts';
import type { Context } from '../schema/context.ts';
import { graphqlLimits } from './graphql-limits.ts';

/** Mounts Yoga at /graphql on the given (authenticated, rate-limited) scope. */
export function registerGraphQL(scope: FastifyInstance, schema: GraphQLSchema, buildContext: (req: FastifyRequest) => Context) {
  const yoga = createYoga<{ req: FastifyRequest; reply: FastifyReply }>({
    schema,
    graphqlEndpoint: '/graphql',
    // GraphiQL loads its assets from a CDN; the service serves nothing from outside itself.
    graphiql: false,
    landingPage: false,
    plugins: graphqlLimits(),
    maskedErrors: {
      // At capacity is not a defect: the caller gets 503 with Retry-After, as on REST.
      maskError: (error, message, isDev) => {
        const original = error instanceof GraphQLError ? error.originalError : error;
        if (!isPoolExhausted(original)) return maskError(error, message, isDev);
        return new GraphQLError('The database is busy; retry in a second.', {
          extensions: { code: 'service_unavailable', status: 503, http: { status: 503, headers: { 'retry-after': '1' } } },
        });
      },
    },
    logging: {
      debug: (...args) => scope.log.debug(args),
      info: (...args) => scope.log.info(args),
      warn: (...args) => scope.log.warn(args),
      error: (...args) => scope.log.error(args),
    },
    context: ({ req }) => buildContext(req),
  });

  scope.route({
    url: '/graphql',
    method: ['GET', 'POST', 'OPTIONS'],
    schema: { hide: true },
    handler: async (req, reply) => {
      const response = await yoga.handleNodeRequestAndResponse(req, reply, { req, reply });
      response.headers.forEach((value, key) => {
        reply.header(key, value);
      });
      reply.status(response.status);
      reply.send(response.body);
      return reply;
    },
  });
}
