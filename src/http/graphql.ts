import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import { createYoga } from 'graphql-yoga';
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
