import type { FastifyRequest } from 'fastify';
import type { Context } from '../schema/context.ts';
import type { Run } from './executor.ts';

/** What every REST route gets: the executor and the request's GraphQL context. */
export interface RestDeps {
  run: Run;
  context: (req: FastifyRequest) => Context;
}
