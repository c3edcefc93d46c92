import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { loginInput } from '../../contract/requests.ts';
import { serialize } from '../../contract/serialize.ts';
import { type ContractTypeProvider, schemaOf, time } from '../../contract/wire.ts';
import { problemResponses } from '../../http/openapi.ts';
import { LoginDocument } from '../generated/operations.ts';
import type { RestDeps } from '../deps.ts';

const session = z.object({ token: z.string(), expires_at: time });

export async function authRoutes(fastify: FastifyInstance, { run, context }: RestDeps) {
  const app = fastify.withTypeProvider<ContractTypeProvider>();
  app.post(
    '/auth/login',
    {
      schema: {
        tags: ['Authentication'],
        operationId: 'login',
        summary: 'Sign in',
        description:
          'The browser session path: exchanges an email and password for a session JWT to send as `Authorization: Bearer <token>` until `expires_at`. Repeated failures from one address or for one account answer 429.',
        security: [],
        body: schemaOf(loginInput, { examples: [{ email: 'admin@acme.example', password: 'correct horse battery staple' }] }),
        response: { 200: schemaOf(session), ...problemResponses(400, 401, 429) },
      },
    },
    async (req) => serialize(session, (await run(LoginDocument, req.body, context(req))).login),
  );
}
